/* syscalls.c - the host interface of the prototype-style runtime: HTIF tohost/fromhost,
   the frontend's magic-memory system calls (write 64, getmainvars 2011), exit as
   tohost = code << 1 | 1 (all ones for exit(-1)), and _init, which parks every hart but
   0 in an endless loop, as the prototype's runtime does, and runs main on hart 0.
   A program may define thread_entry(hartid, ncores) to run code on every hart first
   (the weak default parks harts 1..), as the prototype's runtime allows. */
#include <stdint.h>
#include "lnic.h"

volatile uint64_t tohost __attribute__((section(".tohost"), aligned(64)));
volatile uint64_t fromhost __attribute__((section(".tohost"), aligned(64)));

static volatile uint64_t magic_mem[8] __attribute__((aligned(64)));
static uint64_t main_vars[64];

static int64_t frontend_syscall(uint64_t n, uint64_t a0, uint64_t a1, uint64_t a2)
{
    magic_mem[0] = n;
    magic_mem[1] = a0;
    magic_mem[2] = a1;
    magic_mem[3] = a2;
    __sync_synchronize();
    tohost = (uint64_t)(uintptr_t)magic_mem;
    while (fromhost == 0) {
    }
    fromhost = 0;
    __sync_synchronize();
    return (int64_t)magic_mem[0];
}

void exit(int code)
{
    tohost = ((uint64_t)(int64_t)code << 1) | 1;
    for (;;) {
    }
}

void printstr(const char *s)
{
    uint64_t n = 0;
    while (s[n]) {
        n++;
    }
    frontend_syscall(64, 1, (uint64_t)(uintptr_t)s, n);
}

int main(int argc, char **argv);

void __attribute__((weak)) thread_entry(uint64_t hartid, uint64_t ncores)
{
    (void)ncores;
    while (hartid != 0) {
    }
}

void _init(uint64_t hartid, uint64_t ncores)
{
    thread_entry(hartid, ncores);
    int argc = 0;
    char **argv = 0;
    if (frontend_syscall(2011, (uint64_t)(uintptr_t)main_vars, sizeof main_vars, 0) == 0) {
        argc = (int)main_vars[0];
        argv = (char **)&main_vars[1];
    }
    exit(main(argc, argv));
}
