/*
 * tcp_zbulk.c - tcp_bulk.c's transfer on a ZeroNIC node, zero-copy (docs/models/zeronic.md
 * "Software"): hart 0 runs the C TCP as the control path (headers and metadata only, from
 * ZeroNIC's control queue); hart 1 is the application, reading received bytes where the NIC
 * placed them and writing bytes to send where the NIC reads them (tcp_zc.h). Other harts
 * exit. The node needs two cores.
 *
 * Arguments (after program, MAC and IP): as tcp_bulk's: listen|connect:IP, PORT, IN, OUT,
 * then optionally `nodelack`, `noreno`, `nosack`, `nocheck` (the application neither writes
 * nor checks payload: the stack's own cost), `finfirst`. The stream patterns are
 * tcp_bulk's (tcp_pattern.h), so either may be the other end.
 *
 * Hart 1 checks every received byte once, in order, and exits 2 naming the first wrong
 * offset or a stream of the wrong length; at the end it prints its own counters,
 * `app: cycles=... idle_cycles=... checked=0|1` (cycles from the stream's start to its end,
 * and those asleep in wfi; `checked=0` under `nocheck`, when the "app checked" line counts
 * bytes taken, not checked). Hart 0 prints the stack's counters, `tcp: key=value ...` as
 * tcp_bulk does, then `tcp_gro: merged=N` (segments that joined another on input,
 * tcp_gro.c), and exits 0 once the connection has closed. Built with -DTCP_PROF
 * (tcp_zbulk_prof.elf) it also prints the TCP's cycles by region (tcp_prof.h).
 */
#include "../tcp/tcp_prof.h"
#include "../tcp/tcp_zc.h"
#include "nanopu.h"
#include "tcp_pattern.h"

#define TICK_US 1 /* how often each core looks at the other's progress when idle */
/* TIME-WAIT, us: longer than the peer's retransmission timer (the stack's default 100 us is
 * shorter than its 200 us minimum RTO; the workload programs set 2 ms too), and the control
 * core stays up through it, so that a peer whose last FIN was not acknowledged (our last
 * ACK lost) gets the ACK again instead of retrying into an exited node until it gives up
 * (RFC 9293 3.3.2, TIME-WAIT's purpose). */
#define TIME_WAIT_US 2000
#define CLINT_MTIMECMP(h) ((volatile uint64_t *)(0x2004000ul + 8 * (h)))
#define CLINT_MTIME       ((volatile uint64_t *)0x200bff8ul)

static struct tcp_zc zc __attribute__((aligned(64)));
static volatile uint64_t app_done, app_failed;
static uint32_t tx_dir;
static uint64_t in_bytes, out_bytes;
static int no_check, fin_first;
static uint64_t app_idle; /* cycles hart 1 spent asleep in nap's wfi */

static int has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 7; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return 1;
    return 0;
}

static uint64_t number(const char *text)
{
    uint64_t v = 0;
    for (const char *p = text; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v;
}

static void fail(const char *why, uint64_t at)
{
    printf("tcp_zbulk: %s at byte %lu\n", why, (unsigned long)at);
    app_failed = 1;
    nanopu_exit(2);
}

/* Sleep until the CLINT timer passes `us` microseconds from now (interrupts only wake). */
static void nap(uint32_t us)
{
    uint64_t hart = nanopu_core_id();
    csr_clear(mstatus, 1ul << 3);
    *CLINT_MTIMECMP(hart) = *CLINT_MTIME + us;
    csr_set(mie, 1ul << 7);
    uint64_t t = read_mcycle();
    __asm__ volatile("wfi");
    app_idle += read_mcycle() - t;
    csr_clear(mie, 1ul << 7);
    *CLINT_MTIMECMP(hart) = ~0ull;
}

/* Check the received bytes [from, to) where the NIC placed them, then give them back. */
static void take(uint64_t from, uint64_t to)
{
    for (uint64_t i = from; i < to && !no_check; i++)
        if (zc.rx_ring[i % zc.rx_size] != tcp_pattern(!tx_dir, i))
            fail("received a wrong byte (out of order, twice, or never placed)", i);
    zc.rx_taken = to;
}

/* Write what the send ring has room for, up to `out_bytes`. */
static uint64_t put(uint64_t sent)
{
    uint64_t room = zc.tx_acked + zc.tx_size - sent, n = out_bytes - sent;
    n = n < room ? n : room;
    for (uint64_t i = sent; i < sent + n && !no_check; i++)
        zc.tx_ring[i % zc.tx_size] = tcp_pattern(tx_dir, i);
    if (n)
        zc.tx_written = sent + n;
    return sent + n;
}

/* Hart 1: the application. */
static int app(void)
{
    while (!zc.rx_ring)
        nap(TICK_US);
    uint64_t rcvd = 0, sent = 0, t0 = read_mcycle();
    int eof = 0;
    app_idle = 0;
    while (!eof || sent < out_bytes || !zc.tx_done) {
        int closed = zc.closed; /* before rx_ready and rx_eof, which the control core set first */
        uint64_t ready = zc.rx_ready, was = rcvd + sent;
        if (ready > in_bytes)
            fail("more bytes than expected arrived", in_bytes);
        if (ready > rcvd)
            take(rcvd, ready), rcvd = ready;
        if (zc.rx_eof && zc.rx_ready == rcvd && !eof) {
            if (rcvd != in_bytes)
                fail("the stream ended early", rcvd);
            eof = 1;
        }
        sent = put(sent);
        if (sent == out_bytes && (eof || fin_first))
            zc.tx_done = 1;
        if (closed && (!eof || sent < out_bytes))
            fail("the connection closed early", rcvd);
        if (rcvd + sent == was)
            nap(TICK_US);
    }
    printf("tcp_zbulk: app checked %lu bytes in, wrote %lu out\n", (unsigned long)rcvd, (unsigned long)sent);
    printf("app: cycles=%lu idle_cycles=%lu checked=%d\n", (unsigned long)(read_mcycle() - t0),
           (unsigned long)app_idle, !no_check);
    app_done = 1;
    return 0;
}

static void report(uint64_t cycles)
{
    struct tcp_stats s;
    tcp_stats(&s);
    printf("tcp: cycles=%lu segs_in=%lu segs_out=%lu bytes_in=%lu bytes_out=%lu rto_timeouts=%lu "
           "fast_retransmits=%lu segs_retransmitted=%lu ooo_segs_in=%lu dup_segs_in=%lu acks_out=%lu "
           "bad_checksums=%lu dropped=%lu idle_cycles=%lu\n",
           (unsigned long)cycles, (unsigned long)s.segs_in, (unsigned long)s.segs_out,
           (unsigned long)s.bytes_in, (unsigned long)s.bytes_out, (unsigned long)s.rto_timeouts,
           (unsigned long)s.fast_retransmits, (unsigned long)s.segs_retransmitted,
           (unsigned long)s.ooo_segs_in, (unsigned long)s.dup_segs_in, (unsigned long)s.acks_out,
           (unsigned long)s.bad_checksums, (unsigned long)s.dropped, (unsigned long)s.idle_cycles);
    printf("tcp_gro: merged=%lu\n", (unsigned long)tcp_gro_merged);
}

/* Hart 0: the control path. */
static int control(char **argv, int argc)
{
    tcp_init();
    tcp_cfg.delayed_ack = !has_flag(argc, argv, "nodelack");
    tcp_cfg.newreno = !has_flag(argc, argv, "noreno");
    tcp_cfg.sack = !has_flag(argc, argv, "nosack");
    tcp_cfg.time_wait_us = TIME_WAIT_US;
    uint16_t port = (uint16_t)number(argv[4]);
    int fd = tx_dir ? tcp_connect((uint32_t)number(argv[3] + 8), port) : tcp_accept(tcp_listen(port));
    if (fd < 0) {
        printf("tcp_zbulk: could not connect (%d)\n", fd);
        return 2;
    }
    uint64_t t0 = read_mcycle();
#ifdef TCP_PROF
    tcp_prof_start();
#endif
    tcp_zc_attach(fd, &zc);
    while (!zc.closed && !app_failed) {
        TCP_PROF_IN(TP_APP);
        int moved = tcp_zc_poll(fd, &zc);
        TCP_PROF_OUT();
        if (moved)
            tcp_poll();
        else
            tcp_zc_wait(TICK_US);
    }
    report(read_mcycle() - t0);
#ifdef TCP_PROF
    tcp_prof_print();
#endif
    while (!app_done && !app_failed)
        tcp_zc_wait(TICK_US);
    uint64_t linger = read_mcycle() + (uint64_t)TIME_WAIT_US * nanopu_rtc_cycles();
    while (read_mcycle() < linger)
        tcp_zc_wait(TICK_US);
    return zc.error ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 7 || nanopu_core_id() > 1) {
        if (nanopu_core_id() == 0)
            printf("usage: tcp_zbulk listen|connect:IP PORT IN OUT [flags]\n");
        return nanopu_core_id() == 0;
    }
    tx_dir = strcmp(argv[3], "listen") != 0;
    in_bytes = number(argv[5]);
    out_bytes = number(argv[6]);
    no_check = has_flag(argc, argv, "nocheck");
    fin_first = has_flag(argc, argv, "finfirst");
    return nanopu_core_id() == 0 ? control(argv, argc) : app();
}
