/*
 * htif_mainvars.c - the HTIF frontend call getmainvars (syscall 2011, riscv-pk's
 * numbering; docs/abi.md "HTIF"), which the nanoPU prototype's runtime uses to get
 * argv: the host writes argc, the argv pointers, a NULL, a NULL envp and the strings
 * into the buffer. It must give the argv our runtime's main got from the boot page
 * (program name, MAC, IP, then the program's arguments); a buffer too small gets
 * -ENOMEM and nothing written. Exits through HTIF syscall 93 are covered too.
 */
#include "nanopu.h"
#include "testlib.h"

extern volatile uint64_t tohost, fromhost;

static volatile uint64_t magic[8] __attribute__((aligned(64)));
static uint64_t buf[64];

/* The frontend protocol: tohost = &magic_mem, wait for fromhost, result in magic_mem[0]. */
static int64_t frontend_call(uint64_t which, uint64_t a0, uint64_t a1)
{
    magic[0] = which;
    magic[1] = a0;
    magic[2] = a1;
    __asm__ volatile("fence" ::: "memory");
    tohost = (uint64_t)(uintptr_t)magic;
    while (fromhost == 0) {
    }
    fromhost = 0;
    return (int64_t)magic[0];
}

int main(int argc, char **argv)
{
    CHECK("getmainvars returns 0", frontend_call(2011, (uint64_t)(uintptr_t)buf, sizeof buf), 0);
    CHECK("argc", buf[0], argc);
    for (int i = 0; i < argc; i++) {
        CHECK_TRUE("argv[i]", strcmp((const char *)(uintptr_t)buf[1 + i], argv[i]) == 0);
    }
    CHECK("argv[argc] is NULL", buf[1 + argc], 0);
    CHECK("envp[0] is NULL", buf[2 + argc], 0);
    CHECK_TRUE("argv[2] is the IP", argc >= 3 && strcmp((const char *)(uintptr_t)buf[3], "10.0.0.2") == 0);
    buf[0] = 77;
    CHECK("too small: -ENOMEM", frontend_call(2011, (uint64_t)(uintptr_t)buf, 16), -12);
    CHECK("nothing written", buf[0], 77);
    CHECK("unknown call: -ENOSYS", frontend_call(4242, 0, 0), -38);
    return test_finish("htif_mainvars");
}
