/*
 * nic_ready.c - lmsgsrdy (CSR 0x052, docs/platform.md section 2) reads 0 while the
 * current context's RX queue is empty and non-zero once a looped-back message
 * has arrived; it stays non-zero until the last word is read.  Also checks
 * lnicrdy (0x057) reports the NIC ready.
 */
#include "nictest.h"

int main(void)
{
    uint16_t ctx = (uint16_t)nanopu_core_id();
    uint32_t ip = nanopu_node_ip();
    const uint64_t payload[2] = { 11, 22 };

    CHECK_TRUE("lnicrdy non-zero", csr_read(LNICRDY) != 0);
    lnic_add_context(ctx, 0);
    CHECK("lmsgsrdy 0 before sending", lnic_ready(), 0);
    nic_send(ip, ctx, payload, 2);
    CHECK("lmsgsrdy non-zero after arrival", nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    (void)lnic_read();                       /* header */
    CHECK_TRUE("ready with 2 words left", lnic_ready() != 0);
    CHECK("word 1", lnic_read(), 11);
    CHECK_TRUE("ready with 1 word left", lnic_ready() != 0);
    CHECK("word 2", lnic_read(), 22);
    lnic_msg_done();
    CHECK("lmsgsrdy 0 after the last word", lnic_ready(), 0);
    return test_finish("nic_ready");
}
