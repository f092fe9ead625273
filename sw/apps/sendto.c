/*
 * sendto.c - sends messages nobody will take, for the tests of how a run reports them
 * (docs/reliability.md, "One judgement of a run").  Arguments: A B C D CONTEXT COUNT.
 * Core 0 sends COUNT one-word messages (word i = i) to IP A.B.C.D, context CONTEXT, and
 * exits 0; A.B.C.D = 0.0.0.0 means its own node (looped back by the NIC).  Other cores
 * exit at once.  Nothing here waits for an answer: whatever becomes of the messages is
 * the simulator's to report.
 */
#include "nanopu.h"

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    uint32_t ip = 0;
    for (int i = 0; i < 4; i++)
        ip = (ip << 8) | (uint32_t)(nanopu_arg_u64(argc, argv, i, 0) & 0xff);
    if (ip == 0)
        ip = nanopu_node_ip();
    uint16_t context = (uint16_t)nanopu_arg_u64(argc, argv, 4, 0);
    uint64_t count = nanopu_arg_u64(argc, argv, 5, 1);
    for (uint64_t i = 0; i < count; i++) {
        lnic_write_r(lnic_hdr(ip, context, LNIC_WORD_BYTES));
        lnic_write_r(i);
    }
    return 0;
}
