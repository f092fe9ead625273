/*
 * tcp_zbulk.c - tcp_bulk.c's transfer on a ZeroNIC node, zero-copy (docs/models/zeronic.md
 * "Software"): hart 0 runs the C TCP as the control path (headers and metadata only, from
 * ZeroNIC's control queue); hart 1 is the application, reading received bytes where the NIC
 * placed them and writing bytes to send where the NIC reads them (tcp_zc.h). Other harts
 * exit. The node needs two cores.
 *
 * Arguments (after program, MAC and IP): as tcp_bulk's: listen|connect:IP, PORT, IN, OUT,
 * then optionally `nodelack`, `noreno`, `nosack`, `nocheck` (the application neither writes
 * nor checks payload: the stack's own cost), `finfirst`, and for several flows `flows=N`
 * (1..MAX_FLOWS; the listener accepts N connections on PORT, from any number of
 * connecting nodes; the connecting end opens N) with `tagged`. IN and OUT are per flow.
 * Untagged, the stream patterns are tcp_bulk's (tcp_pattern.h), so either may be the other
 * end. Tagged (required with more than one flow, on both ends), each direction that carries
 * bytes starts with an 8-byte tag, the sender's IPv4 address and the flow's index there
 * (little-endian), followed by IN or OUT bytes of tapp_pattern (app_pattern.h) seeded by the
 * tag, as tcp_flows.c's streams: the receiver checks that no two flows carry one tag, so a
 * byte placed in another flow's ring, late, twice or never is caught.
 *
 * Hart 1 checks every received byte once, in order, and exits 2 naming the flow and the
 * first wrong offset or a stream of the wrong length; at the end it prints its own
 * counters, `app: cycles=... idle_cycles=... checked=0|1 flows=N` (cycles from the streams'
 * start to their end, and those asleep in wfi; `checked=0` under `nocheck`, when the "app
 * checked" line counts bytes taken, not checked). Hart 0 prints the stack's counters,
 * `tcp: key=value ...` as tcp_bulk does (summed over the flows; cycles from the last
 * connection established), then `tcp_gro: merged=N` (segments that joined another on input,
 * tcp_gro.c), and exits 0 once every connection has closed. Built with -DTCP_PROF
 * (tcp_zbulk_prof.elf) it also prints the TCP's cycles by region (tcp_prof.h).
 */
#include "../tcp/tcp_prof.h"
#include "../tcp/tcp_zc.h"
#include "app_pattern.h"
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
/* Flows: the stack's connection slots less the listener's (TCP_MAX_CONN, sw/Makefile). */
#define MAX_FLOWS (TCP_MAX_CONN - 1)
#define TAG 8

/* One flow as the application sees it. */
struct flow {
    uint64_t rcvd, sent; /* stream bytes taken and written, tags included */
    int eof, done;
    uint32_t rx_seed, tx_seed;
    uint8_t tag[TAG];
};

static struct tcp_zc zc[MAX_FLOWS] __attribute__((aligned(64)));
static struct flow fl[MAX_FLOWS];
static volatile uint64_t app_done, app_failed;
static uint32_t tx_dir, nflows = 1;
static uint64_t in_bytes, out_bytes; /* per flow, tags included */
static int no_check, fin_first, tagged;
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

/* The value of option `name=` among the flags, or `dflt`. */
static uint64_t option(int argc, char **argv, const char *name, uint64_t dflt)
{
    for (int i = 7; i < argc; i++) {
        const char *a = argv[i], *n = name;
        while (*n && *a == *n)
            a++, n++;
        if (!*n && *a == '=')
            return number(a + 1);
    }
    return dflt;
}

static void fail(const char *why, uint32_t f, uint64_t at)
{
    printf("tcp_zbulk: flow %u: %s at byte %lu\n", f, why, (unsigned long)at);
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

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

/* Byte i of the stream flow f sends: its tag, then the pattern its tag seeds. */
static uint8_t tx_byte(uint32_t f, uint64_t i)
{
    if (!tagged)
        return tcp_pattern(tx_dir, i);
    if (i < TAG)
        return (uint8_t)((i < 4 ? nanopu_node_ip() : f) >> (8 * (i % 4)));
    return tapp_pattern(fl[f].tx_seed, i - TAG);
}

/* The tag of flow f's received stream is in: its seed, which no other flow may carry. */
static void got_tag(uint32_t f)
{
    fl[f].rx_seed = get32(fl[f].tag) * MAX_FLOWS + get32(fl[f].tag + 4);
    for (uint32_t g = 0; g < nflows; g++)
        if (g != f && fl[g].rcvd >= TAG && fl[g].rx_seed == fl[f].rx_seed)
            fail("carries the same tag as another flow", f, 0);
}

/* Check received byte i of flow f. */
static void check(uint32_t f, uint64_t i, uint8_t b)
{
    if (!tagged && b != tcp_pattern(!tx_dir, i))
        fail("received a wrong byte (out of order, twice, or never placed)", f, i);
    else if (tagged && i < TAG && (fl[f].tag[i] = b, i == TAG - 1))
        got_tag(f);
    else if (tagged && i >= TAG && b != tapp_pattern(fl[f].rx_seed, i - TAG))
        fail("received a wrong byte (out of order, twice, never placed, or another flow's)", f, i);
}

/* The bytes from stream offset i to `to` that lie unbroken in a ring of `size` bytes. */
static uint64_t unbroken(uint64_t i, uint64_t to, uint32_t size)
{
    uint64_t left = size - i % size;
    return to - i < left ? to - i : left;
}

/* Check flow f's received bytes [from, to) where the NIC placed them, then give them back.
 * A stretch at a time (no division per byte). */
static void take(uint32_t f, uint64_t from, uint64_t to)
{
    const uint8_t *ring = zc[f].rx_ring;
    uint32_t size = zc[f].rx_size;
    for (uint64_t i = from, n; i < to && !no_check; i += n) {
        const uint8_t *p = ring + i % size;
        n = unbroken(i, to, size);
        for (uint64_t k = 0; k < n; k++)
            check(f, i + k, p[k]);
    }
    zc[f].rx_taken = to;
}

/* Write what flow f's send ring has room for, up to `out_bytes`. */
static uint64_t put(uint32_t f, uint64_t sent)
{
    uint8_t *ring = zc[f].tx_ring;
    uint32_t size = zc[f].tx_size;
    uint64_t room = zc[f].tx_acked + size - sent, end = sent + (out_bytes - sent < room ? out_bytes - sent : room);
    for (uint64_t i = sent, n; i < end && !no_check; i += n) {
        uint8_t *p = ring + i % size;
        n = unbroken(i, end, size);
        for (uint64_t k = 0; k < n; k++)
            p[k] = tx_byte(f, i + k);
    }
    if (end > sent)
        zc[f].tx_written = end;
    return end;
}

/* One look at flow f: take what arrived, write what fits; 1 if any byte moved. */
static int step(uint32_t f)
{
    struct flow *w = &fl[f];
    struct tcp_zc *z = &zc[f];
    int closed = z->closed; /* before rx_ready and rx_eof, which the control core set first */
    uint64_t ready = z->rx_ready, was = w->rcvd + w->sent;
    if (ready > in_bytes)
        fail("more bytes than expected arrived", f, in_bytes);
    if (ready > w->rcvd)
        take(f, w->rcvd, ready), w->rcvd = ready;
    if (z->rx_eof && z->rx_ready == w->rcvd && !w->eof) {
        if (w->rcvd != in_bytes)
            fail("the stream ended early", f, w->rcvd);
        w->eof = 1;
    }
    w->sent = put(f, w->sent);
    if (w->sent == out_bytes && (w->eof || fin_first))
        z->tx_done = 1;
    if (closed && (!w->eof || w->sent < out_bytes))
        fail("the connection closed early", f, w->rcvd);
    w->done = w->eof && w->sent == out_bytes && z->tx_done;
    return w->rcvd + w->sent != was;
}

/* Hart 1: the application. */
static int app(void)
{
    for (uint32_t f = 0; f < nflows; f++) {
        fl[f].tx_seed = nanopu_node_ip() * MAX_FLOWS + f;
        while (!zc[f].rx_ring)
            nap(TICK_US);
    }
    uint64_t t0 = read_mcycle(), rcvd = 0, sent = 0;
    uint32_t done = 0;
    app_idle = 0;
    while (done < nflows) {
        int moved = 0;
        done = 0;
        for (uint32_t f = 0; f < nflows; f++) {
            if (!fl[f].done)
                moved |= step(f);
            done += fl[f].done;
        }
        if (!moved && done < nflows)
            nap(TICK_US);
    }
    for (uint32_t f = 0; f < nflows; f++)
        rcvd += fl[f].rcvd, sent += fl[f].sent;
    printf("tcp_zbulk: app checked %lu bytes in, wrote %lu out\n", (unsigned long)rcvd, (unsigned long)sent);
    printf("app: cycles=%lu idle_cycles=%lu checked=%d flows=%u\n", (unsigned long)(read_mcycle() - t0),
           (unsigned long)app_idle, !no_check, nflows);
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

/* Connect, trying again every 10 us while the peer answers with a reset (it has not
 * listened yet: every node starts at once); -1 after 1,000 tries. */
static int connect_patiently(uint32_t ip, uint16_t port)
{
    for (int tries = 0; tries < 1000; tries++) {
        int fd = tcp_connect(ip, port);
        if (fd >= 0)
            return fd;
        for (uint64_t until = read_mcycle() + 10 * nanopu_rtc_cycles(); read_mcycle() < until;)
            tcp_poll();
    }
    return -1;
}

/* Control core: serve every flow until all have closed (or the app failed). */
static void serve(const int *fd)
{
    uint32_t open = nflows;
    while (open && !app_failed) {
        int moved = 0;
        open = 0;
        for (uint32_t f = 0; f < nflows; f++)
            if (!zc[f].closed) {
                TCP_PROF_IN(TP_APP);
                moved |= tcp_zc_poll(fd[f], &zc[f]);
                TCP_PROF_OUT();
                open++;
            }
        if (moved)
            tcp_poll();
        else if (open)
            tcp_zc_wait(TICK_US);
    }
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
    int fd[MAX_FLOWS], lfd = tx_dir ? -1 : tcp_listen(port), err = 0;
    for (uint32_t f = 0; f < nflows; f++) {
        fd[f] = tx_dir ? connect_patiently((uint32_t)number(argv[3] + 8), port) : tcp_accept(lfd);
        if (fd[f] < 0) {
            printf("tcp_zbulk: could not connect flow %u (%d)\n", f, fd[f]);
            return 2;
        }
    }
    uint64_t t0 = read_mcycle();
#ifdef TCP_PROF
    tcp_prof_start();
#endif
    for (uint32_t f = 0; f < nflows; f++)
        tcp_zc_attach(fd[f], &zc[f]);
    serve(fd);
    report(read_mcycle() - t0);
#ifdef TCP_PROF
    tcp_prof_print();
#endif
    while (!app_done && !app_failed)
        tcp_zc_wait(TICK_US);
    uint64_t linger = read_mcycle() + (uint64_t)TIME_WAIT_US * nanopu_rtc_cycles();
    while (read_mcycle() < linger)
        tcp_zc_wait(TICK_US);
    for (uint32_t f = 0; f < nflows; f++)
        err |= zc[f].error != 0;
    return err ? 2 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 7 || nanopu_core_id() > 1) {
        if (nanopu_core_id() == 0)
            printf("usage: tcp_zbulk listen|connect:IP PORT IN OUT [flags]\n");
        return nanopu_core_id() == 0;
    }
    tx_dir = strcmp(argv[3], "listen") != 0;
    no_check = has_flag(argc, argv, "nocheck");
    fin_first = has_flag(argc, argv, "finfirst");
    tagged = has_flag(argc, argv, "tagged");
    nflows = (uint32_t)option(argc, argv, "flows", 1);
    in_bytes = number(argv[5]), out_bytes = number(argv[6]);
    in_bytes += tagged && in_bytes ? TAG : 0;
    out_bytes += tagged && out_bytes ? TAG : 0;
    if (nflows < 1 || nflows > MAX_FLOWS || (nflows > 1 && !tagged)) {
        if (nanopu_core_id() == 0)
            printf("tcp_zbulk: flows=%u: 1..%d, and more than one only with `tagged`\n", nflows, MAX_FLOWS);
        return nanopu_core_id() == 0;
    }
    return nanopu_core_id() == 0 ? control(argv, argc) : app();
}
