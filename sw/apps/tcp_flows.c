/*
 * tcp_flows.c - bulk transfer over several TCP connections at once (issue 36's bulk
 * workload; docs/apps/tcp-workloads.md): senders open flows to one receiver, every byte of
 * every flow checked at the receiver. Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP):
 *   recv PORT FLOWS BYTES [nocheck] [dropone|dupone]
 *       accept FLOWS connections on PORT (from any number of senders), then read them all;
 *   send:IP PORT FLOWS BYTES [nocheck]
 *       open FLOWS connections to IP:PORT (IP as a number, host order) and send on each.
 * Each flow carries an 8-byte header (the sender's IPv4 address and the flow's index at
 * that sender, little-endian) and then BYTES bytes of tapp_pattern(seed, i), seed from the
 * header. The receiver checks that no header comes twice, that every byte is the
 * pattern's, in order, and that each stream ends (FIN) exactly after BYTES bytes; a failure
 * stops it with exit code 2 naming the flow and offset. `nocheck` sends and checks no
 * pattern (the stack's own cost, for throughput runs).
 *
 * `dropone` and `dupone` are the test hooks that must fail the check: the receiver
 * discards (or takes twice) the bytes of one read from the TCP, as a stack that lost or
 * duplicated delivered payload would hand them over.
 *
 * At the end the receiver prints `flows: flows=N bytes=B cycles=C first_done=F
 * last_done=L` (cycles from listening to the last end of stream, and when the first and
 * last flow ended) and the stack's counters (`tcp: ...`); a sender prints its counters.
 */
#include "tcp_app.h"

#define MAX_FLOWS 16
#define HDR 8
/* Bytes per send and receive call: ten full segments, or fewer when the core generates
 * or checks every byte, so that it polls the NIC before its receive buffers fill (as
 * tcp_bulk.c). */
#define CHUNK 14600
#define CHECKED_CHUNK 2048
/* The read the test hooks spoil: late enough that every flow is under way. */
#define HOOKED_READ 50

struct flow {
    int fd;
    uint32_t seed;
    uint64_t at;    /* stream bytes sent or received, header included */
    int done;       /* FIN read (receiver) or queued (sender) */
    uint64_t done_cycle;
    uint8_t hdr[HDR];
};

static struct flow flows[MAX_FLOWS];
static uint32_t nflows, chunk = CHECKED_CHUNK;
static uint64_t bytes;
static int no_check, hook; /* hook: 0 none, 1 drop one read, 2 take one read twice */
static uint8_t buf[CHUNK] __attribute__((aligned(64)));

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void put32(uint8_t *p, uint32_t v) { p[0] = v, p[1] = v >> 8, p[2] = v >> 16, p[3] = v >> 24; }

/* ---- receiving ---- */

static void check_header(uint32_t f)
{
    flows[f].seed = get32(flows[f].hdr) * MAX_FLOWS + get32(flows[f].hdr + 4);
    for (uint32_t g = 0; g < nflows; g++)
        if (g != f && flows[g].at >= HDR && flows[g].seed == flows[f].seed)
            TAPP_FAIL("tcp_flows: flows %u and %u carry the same header\n", f, g);
}

/* Take `n` bytes of flow `f` at stream offset flows[f].at. */
static void take(uint32_t f, const uint8_t *p, uint32_t n)
{
    struct flow *fl = &flows[f];
    for (; n && fl->at < HDR; n--, p++) {
        fl->hdr[fl->at++] = *p;
        if (fl->at == HDR)
            check_header(f);
    }
    if (fl->at - HDR + n > bytes)
        TAPP_FAIL("tcp_flows: flow %u: more than %lu bytes arrived\n", f, (unsigned long)bytes);
    for (uint32_t i = 0; i < n && !no_check; i++)
        if (p[i] != tapp_pattern(fl->seed, fl->at - HDR + i))
            TAPP_FAIL("tcp_flows: flow %u: byte %lu is %u, not %u: delivered out of order, twice, "
                      "from another flow or corrupted\n", f, (unsigned long)(fl->at - HDR + i), p[i],
                      tapp_pattern(fl->seed, fl->at - HDR + i));
    fl->at += n;
}

/* The test hooks: the HOOKED_READ-th read with data is dropped or taken twice. */
static void deliver(uint32_t f, uint32_t n)
{
    static uint32_t reads;
    if (++reads == HOOKED_READ && hook == 1)
        return;
    take(f, buf, n);
    if (reads == HOOKED_READ && hook == 2)
        take(f, buf, n);
}

static void ended(uint32_t f)
{
    if (flows[f].at != HDR + bytes)
        TAPP_FAIL("tcp_flows: flow %u ended after %lu bytes, not %lu\n", f,
                  (unsigned long)(flows[f].at < HDR ? 0 : flows[f].at - HDR), (unsigned long)bytes);
    flows[f].done = 1;
    flows[f].done_cycle = read_mcycle();
}

/* Read what flow `f` has; 1 if anything happened. */
static int recv_flow(uint32_t f)
{
    int r = tcp_recv(flows[f].fd, buf, chunk);
    if (r == TCP_EAGAIN)
        return 0;
    if (r < 0)
        TAPP_FAIL("tcp_flows: flow %u failed (%d) after %lu bytes\n", f, r, (unsigned long)flows[f].at);
    if (r == 0)
        ended(f);
    else
        deliver(f, (uint32_t)r);
    return 1;
}

static void receiver(uint16_t port)
{
    uint64_t t0 = tapp_mark(), first = 0, last = 0;
    int lfd = tcp_listen(port);
    for (uint32_t f = 0; f < nflows; f++)
        flows[f].fd = tcp_accept(lfd);
    for (uint32_t left = nflows; left;) {
        int busy = 0;
        for (uint32_t f = 0; f < nflows; f++)
            if (!flows[f].done && recv_flow(f))
                busy = 1, left -= flows[f].done;
        busy ? tcp_poll() : tcp_wait();
    }
    for (uint32_t f = 0; f < nflows; f++) {
        uint64_t d = flows[f].done_cycle - t0;
        first = f == 0 || d < first ? d : first;
        last = d > last ? d : last;
        tcp_close(flows[f].fd);
    }
    printf("flows: flows=%u bytes=%lu cycles=%lu first_done=%lu last_done=%lu\n", nflows,
           (unsigned long)(bytes * nflows), (unsigned long)last, (unsigned long)first, (unsigned long)last);
    tapp_report_tcp(last);
}

/* ---- sending ---- */

/* Send what flow `f` may; 1 if the TCP took anything. */
static int send_flow(uint32_t f)
{
    struct flow *fl = &flows[f];
    uint64_t total = HDR + bytes, n = total - fl->at < chunk ? total - fl->at : chunk;
    uint32_t i = 0;
    for (; fl->at + i < HDR; i++)
        buf[i] = fl->hdr[fl->at + i];
    for (; i < n && !no_check; i++)
        buf[i] = tapp_pattern(fl->seed, fl->at + i - HDR);
    int r = tcp_send(fl->fd, buf, (uint32_t)n);
    if (r < 0)
        TAPP_FAIL("tcp_flows: send on flow %u failed (%d)\n", f, r);
    if ((fl->at += (uint64_t)r) == total)
        fl->done = (tcp_shutdown(fl->fd), 1);
    return r > 0;
}

static void sender(uint32_t ip, uint16_t port)
{
    uint64_t t0 = tapp_mark();
    for (uint32_t f = 0; f < nflows; f++) {
        flows[f].fd = tapp_connect(ip, port);
        put32(flows[f].hdr, nanopu_node_ip());
        put32(flows[f].hdr + 4, f);
        flows[f].seed = nanopu_node_ip() * MAX_FLOWS + f;
    }
    for (uint32_t left = nflows; left;) {
        int busy = 0;
        for (uint32_t f = 0; f < nflows; f++)
            if (!flows[f].done && send_flow(f))
                busy = 1, left -= flows[f].done;
        busy ? tcp_poll() : tcp_wait();
    }
    for (uint32_t f = 0; f < nflows; f++)
        if (tcp_close(flows[f].fd) < 0)
            TAPP_FAIL("tcp_flows: flow %u did not close cleanly\n", f);
    tapp_report_tcp(read_mcycle() - t0);
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    if (argc < 7) {
        printf("usage: tcp_flows recv|send:IP PORT FLOWS BYTES [nocheck] [dropone|dupone]\n");
        return 1;
    }
    tapp_init();
    uint16_t port = (uint16_t)tapp_arg(argc, argv, 4, "port");
    nflows = (uint32_t)tapp_arg(argc, argv, 5, "flows");
    bytes = tapp_arg(argc, argv, 6, "bytes");
    no_check = tapp_flag(argc, argv, 7, "nocheck");
    hook = tapp_flag(argc, argv, 7, "dropone") ? 1 : tapp_flag(argc, argv, 7, "dupone") ? 2 : 0;
    chunk = no_check ? CHUNK : CHECKED_CHUNK;
    if (nflows == 0 || nflows > MAX_FLOWS)
        TAPP_FAIL("tcp_flows: flows must be 1..%d, not %u\n", MAX_FLOWS, nflows);
    if (strcmp(argv[3], "recv") == 0)
        receiver(port);
    else if (tapp_after(argv[3], "send:"))
        sender((uint32_t)tapp_number(tapp_after(argv[3], "send:"), "send:IP"), port);
    else
        TAPP_FAIL("tcp_flows: mode '%s' is neither recv nor send:IP\n", argv[3]);
    tapp_linger();
    return 0;
}
