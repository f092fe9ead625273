/*
 * heap.c - a bump allocator after the per-hart stacks (nanopu.ld, crt0.S).
 * Memory is never freed.  Safe on all harts at once: the offset is advanced
 * with an atomic add (A extension amoadd.d).
 */
#include <stdint.h>
#include "nanopu.h"

static uint64_t heap_used;

/* Address of the first hart's stack region (nanopu.ld).  Loaded without linker
 * relaxation: GNU ld's gp relaxation misjudges symbols placed past .bss. */
static uintptr_t stacks_start(void)
{
    uintptr_t a;
    __asm__(".option push\n.option norelax\nlla %0, __stacks_start\n.option pop" : "=r"(a));
    return a;
}

uintptr_t nanopu_heap_start(void)
{
    return stacks_start() + nanopu_num_cores() * NANOPU_STACK_BYTES;
}

static uintptr_t dram_end(void)
{
    uint64_t base = nanopu_boot_word(NANOPU_BI_DRAM_BASE, NANOPU_DRAM_BASE);
    return base + nanopu_boot_word(NANOPU_BI_DRAM_SIZE, NANOPU_DRAM_DEFAULT);
}

/* 16-byte aligned block of `bytes`, or NULL when DRAM is exhausted. */
void *nanopu_malloc(size_t bytes)
{
    uint64_t size = (bytes + 15) & ~(uint64_t)15;
    uint64_t off = __atomic_fetch_add(&heap_used, size, __ATOMIC_RELAXED);
    uintptr_t p = nanopu_heap_start() + off;
    if (p + size > dram_end() || p + size < p) {
        return NULL;
    }
    return (void *)p;
}
