/*
 * nic_loopback_self.c - a core sends a 3-word message to its own node IP and
 * its own context and reads it back from netRX (docs/platform.md section 2): the header
 * must name the sender (own IP, own context) and the payload length in bytes,
 * and the payload words must arrive in order and unchanged.
 * Every core runs it with context id = core id, so cores do not share queues.
 */
#include "nictest.h"

int main(void)
{
    uint16_t ctx = (uint16_t)nanopu_core_id();
    uint32_t ip = nanopu_node_ip();
    const uint64_t payload[3] = { 0x0123456789abcdef, 0xffffffffffffffff, ctx };

    lnic_add_context(ctx, 0);
    nic_send(ip, ctx, payload, 3);
    CHECK("message arrives", nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    nic_check_header("header", lnic_read(), ip, ctx, 24);
    for (int i = 0; i < 3; i++) {
        CHECK("payload word", lnic_read(), payload[i]);
    }
    lnic_msg_done();
    CHECK("queue empty after message", lnic_ready(), 0);
    return test_finish("nic_loopback_self");
}
