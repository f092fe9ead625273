/*
 * tcp_bulk.c - a bulk transfer over the C TCP (sw/tcp, docs/apps/tcp.md) on an IceNIC
 * node: one connection carries `out` bytes from this node and `in` bytes to it at once,
 * every byte checked. Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP): mode (`listen` on PORT, or `connect` to the IPv4
 * address given as a number, e.g. 167772161 for 10.0.0.1, at PORT), port, in, out; then
 * optionally `nodelack` (ACK every segment), `noreno` (no fast retransmit: timeouts only),
 * `nosack` (neither offer nor use SACK)
 * `nocheck` (send whatever the buffer holds and check nothing: the stack's own cost, for
 * throughput runs) and `finfirst` (send our FIN as soon as our bytes are queued; one end of a run of two
 * nodes must, as each otherwise waits for the other's end of stream).
 * Byte i of the stream from the listening end is tcp_pattern(0, i), of the stream from the
 * connecting end tcp_pattern(1, i) (crates/harness/src/clients/tcp.rs computes the same), so
 * two nodes can run it against each other.
 *
 * Without `finfirst` the node sends its FIN once the peer's stream has ended, because
 * smoltcp, the host's TCP in the tests, stops its retransmission timer when a FIN arrives
 * while its own data is unacknowledged (smoltcp 0.12, socket/tcp.rs: a FIN or ACK in
 * CLOSE-WAIT sets the timer idle) and would then never resend a lost segment.
 *
 * A received byte that is not the pattern's, or a stream shorter or longer than `in`,
 * stops the program with exit code 2 and a message naming the offset. At the end it
 * prints one line of counters, `tcp: key=value ...` (tcp_stats), and exits with 0.
 */
#include "../tcp/tcp.h"
#include "nanopu.h"
#include "tcp_pattern.h"

/* Bytes per send and receive call: ten full segments, or (when every byte is generated and
 * checked, which takes the core a while) fewer, so that the loop polls the NIC before its
 * receive buffers fill. */
#define CHUNK 14600
#define CHECKED_CHUNK 2048

static uint8_t txb[CHUNK] __attribute__((aligned(64))), rxb[CHUNK] __attribute__((aligned(64)));
static int no_check;
static uint32_t chunk = CHECKED_CHUNK;
static uint32_t tx_dir; /* 0 when listening, 1 when connecting; we receive the other */


static uint64_t number(const char *text, const char *name)
{
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || !*text) {
            printf("tcp_bulk: %s is not a number: '%s'\n", name, text);
            nanopu_exit(1);
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v;
}

static uint64_t arg(int argc, char **argv, int i, const char *name)
{
    if (i >= argc) {
        printf("tcp_bulk: missing argument %d (%s)\n", i, name);
        nanopu_exit(1);
    }
    return number(argv[i], name);
}

static int has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 7; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return 1;
    return 0;
}

static int is_connect(const char *m)
{
    const char *want = "connect:";
    while (*want && *m == *want)
        m++, want++;
    return *want == 0;
}


static void check(const uint8_t *p, int n, uint64_t at)
{
    if (no_check)
        return;
    for (int i = 0; i < n; i++)
        if (p[i] != tcp_pattern(!tx_dir, at + (uint64_t)i)) {
            printf("tcp_bulk: byte %lu is %u, not %u: delivered out of order, twice or corrupted\n",
                   (unsigned long)(at + (uint64_t)i), p[i], tcp_pattern(!tx_dir, at + (uint64_t)i));
            nanopu_exit(2);
        }
}

static int send_some(int fd, uint64_t *sent, uint64_t out)
{
    uint32_t n = out - *sent < chunk ? (uint32_t)(out - *sent) : chunk;
    for (uint32_t i = 0; i < n && !no_check; i++)
        txb[i] = tcp_pattern(tx_dir, *sent + i);
    int r = tcp_send(fd, txb, n);
    if (r < 0) {
        printf("tcp_bulk: send failed (%d) after %lu bytes\n", r, (unsigned long)*sent);
        nanopu_exit(2);
    }
    *sent += (uint64_t)r;
    return r > 0;
}

/* Receive what is there; 1 if anything happened (bytes or the end of the stream). */
static int recv_some(int fd, uint64_t *rcvd, uint64_t in, int *eof)
{
    int r = tcp_recv(fd, rxb, chunk);
    if (r == TCP_EAGAIN)
        return 0;
    if (r < 0) {
        printf("tcp_bulk: connection failed (%d) after %lu bytes in\n", r, (unsigned long)*rcvd);
        nanopu_exit(2);
    }
    if (r == 0) {
        *eof = 1;
        if (*rcvd != in) {
            printf("tcp_bulk: stream ended after %lu bytes, not %lu\n", (unsigned long)*rcvd, (unsigned long)in);
            nanopu_exit(2);
        }
        return 1;
    }
    if (*rcvd + (uint64_t)r > in) {
        printf("tcp_bulk: more than %lu bytes arrived\n", (unsigned long)in);
        nanopu_exit(2);
    }
    check(rxb, r, *rcvd);
    *rcvd += (uint64_t)r;
    return 1;
}

static void report(uint64_t cycles)
{
    struct tcp_stats s;
    tcp_stats(&s);
    printf("tcp: cycles=%lu segs_in=%lu segs_out=%lu bytes_in=%lu bytes_out=%lu rto_timeouts=%lu "
           "fast_retransmits=%lu partial_ack_retransmits=%lu sack_retransmits=%lu segs_retransmitted=%lu dupacks_in=%lu "
           "ooo_segs_in=%lu dup_segs_in=%lu acks_out=%lu delayed_acks=%lu bad_checksums=%lu dropped=%lu "
           "idle_cycles=%lu\n",
           (unsigned long)cycles, (unsigned long)s.segs_in, (unsigned long)s.segs_out,
           (unsigned long)s.bytes_in, (unsigned long)s.bytes_out, (unsigned long)s.rto_timeouts,
           (unsigned long)s.fast_retransmits, (unsigned long)s.partial_ack_retransmits, (unsigned long)s.sack_retransmits,
           (unsigned long)s.segs_retransmitted, (unsigned long)s.dupacks_in, (unsigned long)s.ooo_segs_in,
           (unsigned long)s.dup_segs_in, (unsigned long)s.acks_out, (unsigned long)s.delayed_acks,
           (unsigned long)s.bad_checksums, (unsigned long)s.dropped, (unsigned long)s.idle_cycles);
#ifdef TCP_DCTCP
    tcp_report_dctcp(&s);
#endif
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    if (argc < 7) {
        printf("usage: tcp_bulk listen|connect:IP PORT IN OUT [nodelack] [noreno]\n");
        return 1;
    }
    tcp_init();
    tcp_cfg.delayed_ack = !has_flag(argc, argv, "nodelack");
    tcp_cfg.newreno = !has_flag(argc, argv, "noreno");
    tcp_cfg.sack = !has_flag(argc, argv, "nosack");
    no_check = has_flag(argc, argv, "nocheck");
    chunk = no_check ? CHUNK : CHECKED_CHUNK;
    uint16_t port = (uint16_t)arg(argc, argv, 4, "port");
    uint64_t in = arg(argc, argv, 5, "in"), out = arg(argc, argv, 6, "out");
    int fd;
    if (strcmp(argv[3], "listen") == 0) {
        fd = tcp_accept(tcp_listen(port));
    } else if (is_connect(argv[3])) {
        tx_dir = 1;
        fd = tcp_connect((uint32_t)number(argv[3] + 8, "connect:IP"), port);
    } else {
        printf("tcp_bulk: mode '%s' is neither listen nor connect:IP\n", argv[3]);
        return 1;
    }
    if (fd < 0) {
        printf("tcp_bulk: could not connect (%d)\n", fd);
        return 2;
    }
    uint64_t t0 = read_mcycle(), sent = 0, rcvd = 0;
    int eof = 0, shut = 0, fin_first = has_flag(argc, argv, "finfirst");
    while (!eof || !shut) {
        int busy = 0;
        if (sent < out)
            busy |= send_some(fd, &sent, out);
        if (!eof)
            busy |= recv_some(fd, &rcvd, in, &eof);
        if (sent == out && (eof || fin_first) && !shut)
            shut = (tcp_shutdown(fd), 1);
        if (busy)
            tcp_poll();
        else
            tcp_wait();
    }
    int r = tcp_close(fd);
    report(read_mcycle() - t0);
    while (tcp_lingering()) /* after the counters: TIME-WAIT is no part of the transfer */
        tcp_wait();
    if (r < 0) {
        printf("tcp_bulk: close failed (%d)\n", r);
        return 2;
    }
    return 0;
}
