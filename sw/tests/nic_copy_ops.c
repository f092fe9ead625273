/*
 * nic_copy_ops.c - the register-direct operations of the nanoPU API on a
 * looped-back message: lnic_copy (mv t6, t5), lnic_add_int_i (addi t6, t5, imm),
 * lnic_write_r, lnic_write_i (li t6, imm), lnic_write_m (ld t6, mem) and
 * lnic_branch (a branch comparing t5, which pops a word).
 * M1 = [10 20 30 40 50 60] goes to self; while reading it the core builds
 * M2 = [10, 20+5, 30*2, 7, mem, -3] to self, then checks M2.
 */
#include "nictest.h"

static uint64_t mem_word = 0x1122334455667788;

/* Consume M1 and emit M2 word by word.  Returns 1 if the branches behaved. */
static int forward(uint32_t ip, uint16_t ctx)
{
    (void)lnic_read();                               /* M1 header */
    lnic_write_r(lnic_hdr(ip, ctx, 6 * 8));          /* M2 header */
    lnic_copy();                                     /* 10 */
    lnic_add_int_i(5);                               /* 20 + 5 */
    lnic_write_r(lnic_read() * 2);                   /* 30 * 2 */
    lnic_write_i(7);
    lnic_write_m(mem_word);
    lnic_write_i(-3);
    lnic_branch("bne", 40, mismatch);                /* pops 40: not taken */
    lnic_branch("beq", 50, matched);                 /* pops 50: taken */
    return 0;
matched:
    CHECK("after branches", lnic_read(), 60);
    lnic_msg_done();
    return 1;
mismatch:
    return 0;
}

int main(void)
{
    uint16_t ctx = (uint16_t)nanopu_core_id();
    uint32_t ip = nanopu_node_ip();
    const uint64_t m1[6] = { 10, 20, 30, 40, 50, 60 };
    const uint64_t m2[6] = { 10, 25, 60, 7, 0x1122334455667788, (uint64_t)-3 };

    lnic_add_context(ctx, 0);
    nic_send(ip, ctx, m1, 6);
    CHECK("M1 arrives", nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    CHECK("branches", forward(ip, ctx), 1);
    CHECK("M2 arrives", nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    nic_check_header("M2 header", lnic_read(), ip, ctx, 48);
    for (int i = 0; i < 6; i++) {
        CHECK("M2 word", lnic_read(), m2[i]);
    }
    lnic_msg_done();
    return test_finish("nic_copy_ops");
}
