/* Helpers for the ISS test programs: console output through HTIF, cycle counter. */
#include <stdint.h>
extern volatile uint64_t tohost;
static inline void putch(char c) { tohost = (0x0101ULL << 48) | (uint8_t)c; }
static inline void puts_(const char *s) { while (*s) putch(*s++); }
static inline void putdec(uint64_t v) {
    char b[24]; int n = 0;
    do { b[n++] = '0' + v % 10; v /= 10; } while (v);
    while (n) putch(b[--n]);
}
static inline uint64_t rdcycle(void) { uint64_t c; __asm__ volatile("rdcycle %0" : "=r"(c)); return c; }
