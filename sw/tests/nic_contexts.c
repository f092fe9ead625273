/*
 * nic_contexts.c - each context has its own RX queue (docs/platform.md section 2:
 * lmsgsrdy and netRX refer to the current context, lcurcontext 0x053).
 * A core registers two contexts A and B, sends one message to B then one to A
 * (both from B, the current context after registering), then reads A's queue
 * first: it must see A's message although B's arrived earlier.
 * Context ids are 2*core and 2*core+1 so cores do not share them.
 */
#include "nictest.h"

static void read_one(const char *what, uint16_t from_ctx, uint64_t want_word)
{
    CHECK(what, nic_wait_bounded(NIC_WAIT_LIMIT), 1);
    nic_check_header(what, lnic_read(), nanopu_node_ip(), from_ctx, 8);
    CHECK(what, lnic_read(), want_word);
    lnic_msg_done();
}

int main(void)
{
    uint16_t a = (uint16_t)(2 * nanopu_core_id()), b = (uint16_t)(a + 1);
    uint32_t ip = nanopu_node_ip();
    const uint64_t for_b = 0xbbbb, for_a = 0xaaaa;

    lnic_add_context(a, 0);
    lnic_add_context(b, 0);                 /* b is now current */
    CHECK("lcurcontext after add", csr_read(LCURCONTEXT), b);
    nic_send(ip, b, &for_b, 1);
    nic_send(ip, a, &for_a, 1);

    csr_write(LCURCONTEXT, a);
    read_one("context A gets its own message", b, for_a);
    CHECK("context A empty", lnic_ready(), 0);

    csr_write(LCURCONTEXT, b);
    read_one("context B gets its own message", b, for_b);
    CHECK("context B empty", lnic_ready(), 0);
    return test_finish("nic_contexts");
}
