/*
 * tcp_kv_client.c - a pipelined client of tcp_kv.c (docs/apps/tcp-workloads.md) that
 * checks every reply against its own model of the store (kv_client.h). Hart 0 runs it.
 *
 * Arguments (after program, MAC and IP):
 *   connect:IP PORT DEPTH REQUESTS KEYS VALUE_BYTES GET_PCT
 * It keeps DEPTH requests outstanding on one connection (a sliding window: a new request
 * goes out as each reply comes back) until REQUESTS have been answered, each a GET (with
 * probability GET_PCT %) or a SET of one of KEYS keys, checked as kv_client.h describes;
 * a wrong reply stops the client with exit code 2, naming the request.
 *
 * It prints `kvc: node=N requests=R gets=G hits=H sets=S cycles=C p50=A p99=B max=M`:
 * cycles from connected to the last reply, and each request's latency (from the request
 * being written into the client's send buffer to its whole reply parsed) in cycles.
 */
#include "tcp_app.h"
#include "kv_client.h"

#define TX_BYTES 16384
#define RX_BYTES 4096

static uint8_t tx[TX_BYTES], rx[RX_BYTES];
static uint32_t tx_len, rx_len;

/* Take every whole reply received. */
static void replies(void)
{
    uint32_t at = 0, n;
    while (at < rx_len && (n = kvc_take(rx + at, rx_len - at)) != 0)
        at += n;
    if (at < rx_len && !kvc.outstanding)
        TAPP_FAIL("tcp_kv_client: node %u: a reply to no request\n", kvc.node);
    memmove(rx, rx + at, rx_len - at);
    rx_len -= at;
}

static void run(int fd, uint32_t depth, uint32_t total)
{
    uint32_t issued = 0;
    while (kvc.answered < total) {
        while (issued < total && kvc.outstanding < depth && tx_len + KV_REQ_MAX <= TX_BYTES)
            tx_len += kvc_issue(tx + tx_len), issued++;
        int r = tx_len ? tcp_send(fd, tx, tx_len) : 0, busy = r > 0;
        if (r < 0)
            TAPP_FAIL("tcp_kv_client: node %u: send failed (%d)\n", kvc.node, r);
        memmove(tx, tx + r, tx_len - (uint32_t)r);
        tx_len -= (uint32_t)r;
        r = tcp_recv(fd, rx + rx_len, RX_BYTES - rx_len);
        if (r == 0 || (r < 0 && r != TCP_EAGAIN))
            TAPP_FAIL("tcp_kv_client: node %u: the connection ended (%d) after %lu replies\n", kvc.node, r,
                      (unsigned long)kvc.answered);
        if (r > 0)
            rx_len += (uint32_t)r, busy = 1, replies();
        busy ? tcp_poll() : tcp_wait();
    }
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    const char *ip = argc > 3 ? tapp_after(argv[3], "connect:") : 0;
    uint16_t port = (uint16_t)tapp_arg(argc, argv, 4, "port");
    uint32_t depth = (uint32_t)tapp_arg(argc, argv, 5, "depth");
    uint32_t total = (uint32_t)tapp_arg(argc, argv, 6, "requests");
    uint32_t keys = (uint32_t)tapp_arg(argc, argv, 7, "keys");
    uint32_t vbytes = (uint32_t)tapp_arg(argc, argv, 8, "value_bytes");
    uint32_t get_pct = (uint32_t)tapp_arg(argc, argv, 9, "get_pct");
    if (!ip || !depth || depth > KV_MAX_DEPTH || !total || total > KVC_MAX_REQUESTS || !keys ||
        keys > KVC_MAX_KEYS || !vbytes || vbytes > KV_VAL_MAX || get_pct > 100)
        TAPP_FAIL("usage: tcp_kv_client connect:IP PORT DEPTH(1..%d) REQUESTS(1..%d) KEYS(1..%d) "
                  "VALUE_BYTES(1..%d) GET_PCT(0..100)\n", KV_MAX_DEPTH, KVC_MAX_REQUESTS, KVC_MAX_KEYS,
                  KV_VAL_MAX);
    kvc_init(vbytes, keys, get_pct);
    tapp_init();
    int fd = tapp_connect((uint32_t)tapp_number(ip, "connect:IP"), port);
    uint64_t t0 = tapp_mark();
    run(fd, depth, total);
    uint64_t cycles = read_mcycle() - t0;
    if (tcp_close(fd) < 0)
        TAPP_FAIL("tcp_kv_client: node %u: the connection did not close cleanly\n", kvc.node);
    kvc_report(total, cycles);
    tapp_report_tcp(cycles);
    tapp_linger();
    return 0;
}
