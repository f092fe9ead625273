/*
 * zifencei.c - the Zifencei extension (RISC-V unprivileged spec chapter 3):
 * after storing instructions to memory, fence.i makes them visible to fetch.
 * We write `addi a0, zero, K; jalr zero, 0(ra)` into a data buffer, execute it,
 * patch K and execute again: a stale instruction cache or decoded-instruction
 * cache would return the old K.
 */
#include "testlib.h"

static uint32_t code[16] __attribute__((aligned(64)));

#define ENC_ADDI_A0(imm) (((uint32_t)(imm) << 20) | (10u << 7) | 0x13u) /* addi a0, x0, imm */
#define ENC_RET 0x00008067u                                               /* jalr x0, 0(ra) */

typedef uint64_t (*fn_t)(void);

static uint64_t run(unsigned slot, int32_t imm)
{
    code[slot] = ENC_ADDI_A0(imm);
    code[slot + 1] = ENC_RET;
    __asm__ volatile("fence.i" ::: "memory");
    return ((fn_t)(uintptr_t)&code[slot])();
}

int main(void)
{
    CHECK("first", run(0, 42), 42);
    CHECK("patched", run(0, 43), 43);
    CHECK("patched negative", run(0, -7), -7);
    CHECK("other slot", run(8, 100), 100);
    CHECK("back to slot 0", run(0, 1), 1);
    /* patch only the first instruction, the ret stays */
    code[0] = ENC_ADDI_A0(2047);
    __asm__ volatile("fence.i" ::: "memory");
    CHECK("patch one word", ((fn_t)(uintptr_t)code)(), 2047);
    return test_finish("zifencei");
}
