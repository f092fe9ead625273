/*
 * erpc_server.c - an eRPC-like RPC server on an IceNIC node (`--nic icenic`;
 * sw/include/erpc.h, docs/apps/erpc.md). Hart 0 runs the event loop; other harts exit.
 *
 * Request types:
 *   1 echo: the response is the request.
 *   2 checked echo: the request's last 8 bytes are erpc_digest() of the bytes before them
 *     (little-endian); a request whose digest is wrong (a reassembly gone wrong) stops the
 *     program with exit code 2 and a message; else the response is the request.
 *   3 stats: the response is 8 bytes, the number of handler runs before this one.
 *   4 exit: an empty response; once it has left memory the program exits with 0.
 * Any frame that is not an eRPC packet to this server also stops it with exit code 2
 * (erpc_check). Built with ERPC_MUTANT_NO_DEDUP (erpc_server_nodedup.c) it runs the
 * handler again for a resent request: the mutation the tests must catch.
 */
#include "erpc.h"

enum { REQ_ECHO = 1, REQ_CHECKED = 2, REQ_STATS = 3, REQ_EXIT = 4 };

static struct erpc_server server;
static int exiting;

/* The digest a checked echo carries: h = h * 31 + byte over the message's first `n`
 * bytes, from h = n (crates/harness/src/clients/erpc.rs computes the same). */
static uint64_t erpc_digest(const uint8_t *p, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++)
        h = h * 31 + p[i];
    return h;
}

static uint32_t checked_echo(const uint8_t *req, uint32_t len, uint8_t *resp)
{
    uint64_t want = 0;
    if (len < 8)
        erpc_fail("checked echo shorter than its digest", len);
    memcpy(&want, req + len - 8, 8);
    if (erpc_digest(req, len - 8) != want)
        erpc_fail("checked echo's digest is wrong: reassembled out of order or corrupted", len);
    erpc_copy(resp, req, len);
    return len;
}

static uint32_t handle(uint8_t type, const uint8_t *req, uint32_t len, uint8_t *resp)
{
    switch (type) {
    case REQ_ECHO:
        erpc_copy(resp, req, len);
        return len;
    case REQ_CHECKED:
        return checked_echo(req, len, resp);
    case REQ_STATS:
        erpc_copy(resp, (const uint8_t *)&server.executed, 8);
        return 8;
    case REQ_EXIT:
        exiting = 1;
        return 0;
    }
    erpc_fail("unknown request type", type);
    return 0;
}

int main(void)
{
    if (nanopu_core_id() != 0)
        return 0;
    erpc_server_init(&server, handle);
    while (!exiting)
        erpc_poll(&server);
    erpc_flush(&server);
    return 0;
}
