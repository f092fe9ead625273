/*
 * nic_multicore.c - every core registers context = its core id, core i sends a
 * one-word message (its id) to context (i+1) % n on its own node, and checks
 * that what it receives comes from context (i-1+n) % n with that id as payload.
 * With one core it sends to itself.
 */
#include "nictest.h"

int main(void)
{
    uint64_t n = nanopu_num_cores(), me = nanopu_core_id();
    uint16_t next = (uint16_t)((me + 1) % n), prev = (uint16_t)((me + n - 1) % n);
    uint32_t ip = nanopu_node_ip();

    lnic_add_context(me, 0);
    nic_send(ip, next, &me, 1);
    CHECK("message arrives", nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    nic_check_header("header from previous core", lnic_read(), ip, prev, 8);
    CHECK("payload = previous core id", lnic_read(), prev);
    lnic_msg_done();
    return test_finish("nic_multicore");
}
