/*
 * nic_wide_csrs.c - lcurcontext and lcurpriority take any 64-bit value, as on the
 * prototype, where both are XLEN registers that read back what was written while the
 * thread scheduler uses their low 16 and 8 bits (l-nic/rocket-chip, rocket/CSR.scala,
 * rocket/LNICQueues.scala; docs/models/node.md).  A context registered through wide
 * values is the one the low bits name: messages to it arrive, and its replies carry it.
 */
#include "nictest.h"

int main(void)
{
    uint16_t ctx = (uint16_t)nanopu_core_id();
    uint64_t wide_ctx = 0x5a5a000000010000ull | ctx, wide_prio = 0x1234567800000300ull;
    uint32_t ip = nanopu_node_ip();
    const uint64_t payload[1] = { 77 };

    lnic_add_context(wide_ctx, wide_prio);
    CHECK("lcurcontext reads back 64 bits", csr_read(LCURCONTEXT), wide_ctx);
    CHECK("lcurpriority reads back 64 bits", csr_read(LCURPRIORITY), wide_prio);
    csr_write(LCURPRIORITY, 200);
    CHECK("priority 200 kept", csr_read(LCURPRIORITY), 200);
    nic_send(ip, ctx, payload, 1);
    CHECK("message to the low 16 bits arrives", nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    nic_check_header("header names the low 16 bits", lnic_read(), ip, ctx, 8);
    CHECK("payload", lnic_read(), 77);
    lnic_msg_done();
    return test_finish("nic_wide_csrs");
}
