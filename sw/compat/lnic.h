/* lnic.h - the nanoPU register interface in the prototype's style: LNIC CSRs by number,
   x30 (t5) pops a word of the received message, x31 (t6) pushes a word to send. Build with
   -ffixed-x30 -ffixed-x31. Header word: IP (63..32), context (31..16), length (15..0). */
#ifndef COMPAT_LNIC_H
#define COMPAT_LNIC_H
#include <stdint.h>

#define LMSGSRDY     0x052
#define LCURCONTEXT  0x053
#define LNICCMD      0x054
#define LCURPRIORITY 0x055
#define LNICUCMD     0x056

#define lnic_csr_read(n) ({ uint64_t _v; __asm__ volatile("csrr %0, " #n : "=r"(_v)); _v; })
#define lnic_csr_write(n, v) __asm__ volatile("csrw " #n ", %0" :: "r"((uint64_t)(v)))

#define lnic_add_context(id, prio) do { \
    lnic_csr_write(0x053, (id)); lnic_csr_write(0x055, (prio)); lnic_csr_write(0x054, 1); } while (0)
#define lnic_wait() while (lnic_csr_read(0x052) == 0) { }
#define lnic_msg_done() lnic_csr_write(0x056, 1)

static inline uint64_t lnic_read(void) { uint64_t v; __asm__ volatile("mv %0, t5" : "=r"(v)); return v; }
static inline void lnic_write_r(uint64_t v) { __asm__ volatile("mv t6, %0" :: "r"(v)); }

void printstr(const char *s);

/* The core's cycle counter (the prototype's programs call their runtime's rdcycle()). */
static inline uint64_t mcycle(void)
{
    uint64_t v;
    __asm__ volatile("csrr %0, mcycle" : "=r"(v));
    return v;
}

/* "a.b.c.d" (the node's IP, argv[2]) as a 32-bit address, a in the top byte: what the
   prototype's programs get from its runtime's inet_pton4 and a byte swap. */
static inline uint64_t parse_ip(const char *s)
{
    uint64_t ip = 0, part = 0;
    for (;; s++) {
        if (*s == '.' || *s == 0) {
            ip = ip << 8 | part;
            part = 0;
            if (*s == 0)
                return ip;
        } else {
            part = part * 10 + (uint64_t)(*s - '0');
        }
    }
}
#endif
