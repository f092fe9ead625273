/*
 * nictest.h - helpers for the nanoPU NIC tests (they need the simulator: a message
 * to the node's own IP comes back through the switch, or from a single node's test host).
 */
#ifndef NICTEST_H
#define NICTEST_H

#include "testlib.h"

/* Spin on lmsgsrdy with a bound, so a lost message fails instead of hanging. */
static inline int nic_wait_bounded(uint64_t limit)
{
    for (uint64_t i = 0; i < limit; i++) {
        if (lnic_ready()) {
            return 1;
        }
    }
    return 0;
}
#define NIC_WAIT_LIMIT 10000000ull

/* Send `n` payload words to (ip, context). */
static inline void nic_send(uint32_t ip, uint16_t context, const uint64_t *words, unsigned n)
{
    lnic_write_r(lnic_hdr(ip, context, (uint16_t)(n * LNIC_WORD_BYTES)));
    for (unsigned i = 0; i < n; i++) {
        lnic_write_r(words[i]);
    }
}

/* Check a received header names (ip, context) as sender and carries `len` bytes. */
static inline void nic_check_header(const char *what, uint64_t hdr, uint32_t ip,
                                    uint16_t context, uint16_t len)
{
    CHECK(what, lnic_hdr_ip(hdr), ip);
    CHECK(what, lnic_hdr_context(hdr), context);
    CHECK(what, lnic_hdr_len(hdr), len);
}

#endif
