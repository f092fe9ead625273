/*
 * htif.c - exit and console through HTIF tohost/fromhost (docs/abi.md "HTIF").
 *
 * A store to tohost is handled at once by the simulator (never stored), so we
 * never wait on fromhost for console writes.  On QEMU's spike machine tohost is
 * an MMIO register that reads back 0 once the command was handled.
 */
#include <stdint.h>
#include "nanopu.h"

volatile uint64_t tohost __attribute__((section(".htif"), aligned(8)));
volatile uint64_t fromhost __attribute__((section(".htif"), aligned(8)));

#define HTIF_DEV_CONSOLE   1ull
#define HTIF_CMD_PUTCHAR   1ull
#define HTIF_CMD(dev, cmd, payload) (((dev) << 56) | ((cmd) << 48) | (payload))

static void htif_send(uint64_t value)
{
    while (tohost != 0) {
    }
    tohost = value;
}

void nanopu_exit(int code)
{
    /* bit0 = 1, device 0: exit with code value >> 1 (this hart stops) */
    htif_send(((uint64_t)(uint32_t)code << 1) | 1);
    for (;;) {
    }
}

int putchar(int c)
{
    htif_send(HTIF_CMD(HTIF_DEV_CONSOLE, HTIF_CMD_PUTCHAR, (uint8_t)c));
    return (uint8_t)c;
}

int puts(const char *s)
{
    while (*s) {
        putchar(*s++);
    }
    putchar('\n');
    return 0;
}
