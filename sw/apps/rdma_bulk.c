/*
 * rdma_bulk.c - a bulk transfer over the RDMA NIC (nic = "rdma"; sw/include/rdmanic.h,
 * docs/models/rdma-nic.md): one node sends BYTES to another over Q queue pairs, as RDMA
 * WRITEs or SENDs of MSG bytes each, every byte checked at the receiver. Hart 0 runs it;
 * other harts exit.
 *
 * Arguments (after program, MAC and IP): role (`send` or `recv`), the peer's IPv4 address
 * as a number (167772162 is 10.0.0.2, node 0), BYTES, Q (1..64), `write` or `send`, MSG
 * (bytes per work request, up to 1 GiB), then optionally `nocheck` (neither fill nor
 * check the buffers: the transfer's own cost, for throughput runs), `window=W` (WRs in
 * flight per QP at the sender, default 16), and for incast `peers=N` (receiver: N senders,
 * at PEER_IP and the N-1 addresses after it, each sending BYTES over its own Q QPs, N x Q
 * at most 64) and `index=P` (sender: it is the receiver's peer P, default 0). The build
 * rdma_bulk_wait.elf (-DRDMA_BULK_WAIT) also takes `wait=C` (sender: post the first WR C
 * cycles after READY, default 0): a start moved by a few ns, to compare senders' start
 * phases (experiments/host-stacks, "Why the 8-sender RDMA incast fails"); the plain build
 * has none of it, so its timing is not moved by the option's code.
 *
 * Sender P's bytes go to offset P x BYTES of the receiver's buffer, over the receiver's
 * QPs P x Q .. P x Q + Q-1 (its own QPs 0..Q-1); byte i of the receiver's buffer is
 * pattern(i), so a byte of one sender placed in another's range is caught. The receiver
 * fills its buffer with the pattern's complement, registers it (key 1), posts its receive
 * buffers, waits for each sender's HELLO (sent once its own buffer is filled) and sends
 * READY on each sender's first QP; a sender, having waited for READY, posts its message k
 * on its QP k mod Q into offset P x BYTES + k x MSG. Both clocks start at READY, after the
 * filling.
 * WRITEs: after its last WRITE on each QP the sender SENDs DONE there; RC delivers a QP's
 * requests in order, so the receiver's DONE completion on a QP comes after that QP's
 * bytes are in its memory. SENDs: each lands in the receive buffer posted for its offset,
 * and the receiver checks each completion's length and order. At the end the receiver
 * checks every byte (exit 2 and the offset on the first wrong one) and each node prints
 * `rdma: key=value ...` (bytes it received or sent, N x BYTES at the receiver; peers;
 * cycles from READY to the end, idle_cycles slept in wfi, wrs, completions) and exits
 * with 0.
 */
#include "nanopu.h"
#include "rdma_app.h"

#define REGION_MAX (24u << 20)
#define MAX_QPS 64
/* Receive buffers kept posted per QP (the NIC's queues hold 1,024). */
#define RECV_WINDOW 256
#define KEY_DATA 1
#define KEY_CTL 2

static uint8_t region[REGION_MAX] __attribute__((aligned(4096)));
/* READY and DONE messages: one 8-byte slot per QP, each way. */
static uint64_t ctl_rx[MAX_QPS], ctl_tx[MAX_QPS];

enum { READY = 0x52454144, DONE = 0x444f4e45, HELLO = 0x48454c4f };

static struct {
    int sender, writes, check;
    uint32_t peer, qps, window, peers, index;
    uint64_t bytes, msg, msgs, base; /* base: this sender's offset, index x BYTES */
#ifdef RDMA_BULK_WAIT
    uint64_t wait;                   /* cycles from READY to the first WR (`wait=C`) */
#endif
} cfg;

static struct {
    uint64_t start, end, wrs;
} st;
static struct rdma_app_counts cq; /* completions taken, cycles asleep waiting */

static inline uint8_t pattern(uint64_t i)
{
    return (uint8_t)(((uint32_t)i * 2654435761u) >> 24) ^ (uint8_t)(i >> 32);
}

/* region[from, to) = the pattern, each byte XOR `flip` (the receiver starts from its
 * complement). One loop for both sides, so that each fills a byte as fast as the other. */
static void fill(uint64_t from, uint64_t to, uint8_t flip)
{
    for (uint64_t i = from; i < to; i++)
        region[i] = pattern(i) ^ flip;
}

static void fail(const char *what, uint64_t a, uint64_t b)
{
    printf("rdma_bulk: %s (%lu, %lu)\n", what, (unsigned long)a, (unsigned long)b);
    nanopu_exit(2);
}

static int starts_with(const char *s, const char *prefix)
{
    while (*prefix && *s == *prefix)
        s++, prefix++;
    return *prefix == 0;
}

static uint64_t number(const char *text)
{
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9')
            fail("an argument is not a number", 0, 0);
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v;
}

static void parse(int argc, char **argv)
{
    if (argc < 9)
        fail("usage: send|recv PEER_IP BYTES QPS write|send MSG [nocheck] [window=W]", (uint64_t)argc, 9);
    cfg.sender = strcmp(argv[3], "send") == 0;
    cfg.peer = (uint32_t)number(argv[4]);
    cfg.bytes = number(argv[5]);
    cfg.qps = (uint32_t)number(argv[6]);
    cfg.writes = strcmp(argv[7], "write") == 0;
    cfg.msg = number(argv[8]);
    cfg.check = 1;
    cfg.window = 16;
    cfg.peers = 1;
    for (int i = 9; i < argc; i++) {
        if (strcmp(argv[i], "nocheck") == 0)
            cfg.check = 0;
        else if (starts_with(argv[i], "window="))
            cfg.window = (uint32_t)number(argv[i] + 7);
        else if (starts_with(argv[i], "peers="))
            cfg.peers = (uint32_t)number(argv[i] + 6);
        else if (starts_with(argv[i], "index="))
            cfg.index = (uint32_t)number(argv[i] + 6);
#ifdef RDMA_BULK_WAIT
        else if (starts_with(argv[i], "wait="))
            cfg.wait = number(argv[i] + 5);
#endif
    }
    uint32_t lanes = (cfg.sender ? cfg.index + 1 : cfg.peers) * cfg.qps;
    if (cfg.qps < 1 || cfg.peers < 1 || lanes > MAX_QPS || (uint64_t)lanes / cfg.qps * cfg.bytes > REGION_MAX ||
        cfg.msg < 1 || cfg.msg > (1u << 30) || cfg.window < 1)
        fail("BYTES, QPS, MSG, window, peers or index out of range", cfg.bytes, cfg.qps);
    cfg.msgs = (cfg.bytes + cfg.msg - 1) / cfg.msg;
    cfg.base = cfg.sender ? cfg.index * cfg.bytes : 0;
}

static uint32_t msg_len(uint64_t k)
{
    uint64_t left = cfg.bytes - k * cfg.msg;
    return (uint32_t)(left < cfg.msg ? left : cfg.msg);
}

static void setup(void)
{
    rdma_reg_mr(region, REGION_MAX, KEY_DATA);
    rdma_reg_mr(ctl_rx, sizeof ctl_rx, KEY_CTL);
    rdma_reg_mr(ctl_tx, sizeof ctl_tx, KEY_CTL + 1);
    if (cfg.sender)
        for (uint32_t q = 0; q < cfg.qps; q++)
            rdma_connect((uint8_t)q, (uint8_t)(cfg.index * cfg.qps + q), cfg.peer);
    else
        for (uint32_t g = 0; g < cfg.peers * cfg.qps; g++)
            rdma_connect((uint8_t)g, (uint8_t)(g % cfg.qps), cfg.peer + g / cfg.qps);
    for (uint32_t p = 0; p < cfg.peers && !cfg.sender; p++) /* HELLO's buffers, before all */
        rdma_post_recv((uint8_t)(p * cfg.qps), HELLO, &ctl_rx[p * cfg.qps], 8);
}

/* Post message k: on QP k mod Q, from offset base + k x MSG. */
static void post_msg(uint64_t k)
{
    uint8_t q = (uint8_t)(k % cfg.qps);
    uint8_t *p = region + cfg.base + k * cfg.msg;
    if (cfg.writes)
        rdma_post_write(q, k, p, msg_len(k), (uintptr_t)p, KEY_DATA);
    else
        rdma_post_send(q, k, p, msg_len(k));
    st.wrs++;
}

static void send_side(void)
{
    rdma_post_recv(0, READY, &ctl_rx[0], 8);
    if (cfg.check)
        fill(cfg.base, cfg.base + cfg.bytes, 0);
    ctl_tx[0] = HELLO;
    rdma_post_send(0, HELLO, &ctl_tx[0], 8);
    struct rdma_wc wc;
    for (int seen = 0; seen < 2; seen++) { /* HELLO's send completion and READY, any order */
        rdma_next_wc(&wc, &cq);
        if (wc.opcode == RDMA_OP_RECV && ctl_rx[0] != READY)
            fail("the first message was not READY", wc.opcode, ctl_rx[0]);
    }
    st.start = read_mcycle();
    cq.idle = 0; /* from READY on */
#ifdef RDMA_BULK_WAIT
    while (read_mcycle() - st.start < cfg.wait)
        ;
#endif
    uint32_t inflight[MAX_QPS] = {0};
    uint64_t next = 0, done = 0;
    while (done < cfg.msgs) {
        while (next < cfg.msgs && inflight[next % cfg.qps] < cfg.window)
            inflight[next % cfg.qps]++, post_msg(next++);
        rdma_next_wc(&wc, &cq);
        inflight[wc.qp]--, done++;
    }
    for (uint32_t q = 0; q < cfg.qps && cfg.writes; q++) {
        ctl_tx[q] = DONE;
        rdma_post_send((uint8_t)q, DONE, &ctl_tx[q], 8);
    }
    for (uint32_t q = 0; q < cfg.qps && cfg.writes; q++)
        rdma_next_wc(&wc, &cq);
    st.end = read_mcycle();
}

/* SENDs: the receive buffer of sender p's message k, posted on its QP (they complete in
 * order), at offset p x BYTES + k x MSG. */
static void post_recv_msg(uint32_t p, uint64_t k)
{
    rdma_post_recv((uint8_t)(p * cfg.qps + k % cfg.qps), k, region + p * cfg.bytes + k * cfg.msg, msg_len(k));
    st.wrs++;
}

/* SENDs: check a message's completion on QP g against the next one expected there, and
 * post sender p's next receive buffer in its place. */
static void took_msg(const struct rdma_wc *wc, uint64_t *expect, uint64_t *posted)
{
    uint32_t p = wc->qp / cfg.qps;
    if (wc->wr_id != (uint32_t)expect[wc->qp] || wc->byte_len != msg_len(expect[wc->qp]))
        fail("a message completed out of order or with the wrong length (wr_id, len)", wc->wr_id, wc->byte_len);
    expect[wc->qp] += cfg.qps;
    if (posted[p] < cfg.msgs)
        post_recv_msg(p, posted[p]++);
}

/* Post what the receiver waits for: a DONE per QP (WRITEs) or each sender's first
 * messages' buffers (SENDs); the completions it waits for. */
static uint64_t post_recvs(uint64_t *expect, uint64_t *posted)
{
    uint32_t lanes = cfg.peers * cfg.qps;
    for (uint32_t g = 0; g < lanes; g++)
        expect[g] = g % cfg.qps;
    for (uint32_t g = 0; g < lanes && cfg.writes; g++)
        rdma_post_recv((uint8_t)g, DONE, &ctl_rx[g], 8);
    for (uint32_t p = 0; p < cfg.peers && !cfg.writes; p++)
        for (posted[p] = 0; posted[p] < cfg.msgs && posted[p] < (uint64_t)RECV_WINDOW * cfg.qps; posted[p]++)
            post_recv_msg(p, posted[p]);
    return cfg.writes ? lanes : cfg.peers * cfg.msgs;
}

/* Each sender's HELLO (its buffer filled, READY's posted): the receiver's clock starts
 * only then, so that neither side's filling is timed. */
static void wait_hellos(void)
{
    struct rdma_wc wc;
    for (uint32_t got = 0; got < cfg.peers; got++) {
        rdma_next_wc(&wc, &cq);
        if (wc.opcode != RDMA_OP_RECV || ctl_rx[wc.qp] != HELLO)
            fail("a sender's first message was not HELLO (qp, value)", wc.qp, ctl_rx[wc.qp]);
    }
}

static void recv_side(void)
{
    uint64_t total = cfg.peers * cfg.bytes;
    if (cfg.check)
        fill(0, total, 0xff);
    uint64_t expect[MAX_QPS], posted[MAX_QPS], got = 0, want = post_recvs(expect, posted);
    wait_hellos();
    st.start = read_mcycle();
    cq.idle = 0; /* from READY on */
    for (uint32_t p = 0; p < cfg.peers; p++) {
        ctl_tx[p * cfg.qps] = READY;
        rdma_post_send((uint8_t)(p * cfg.qps), READY, &ctl_tx[p * cfg.qps], 8);
    }
    struct rdma_wc wc;
    while (got < want) {
        rdma_next_wc(&wc, &cq);
        if (wc.opcode != RDMA_OP_RECV)
            continue; /* READY's send completion */
        if (cfg.writes && (ctl_rx[wc.qp] != DONE || wc.byte_len != 8))
            fail("a DONE message was wrong (qp, value)", wc.qp, ctl_rx[wc.qp]);
        if (!cfg.writes)
            took_msg(&wc, expect, posted);
        got++;
    }
    st.end = read_mcycle();
    for (uint64_t i = 0; i < total && cfg.check; i++)
        if (region[i] != pattern(i))
            fail("byte is wrong: lost, misplaced or written twice (offset, value)", i, region[i]);
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    parse(argc, argv);
    setup();
    if (cfg.sender)
        send_side();
    else
        recv_side();
    printf("rdma: role=%s bytes=%lu peers=%u qps=%u msg=%lu cycles=%lu idle_cycles=%lu wrs=%lu completions=%lu "
           "checked=%d\n", cfg.sender ? "send" : "recv", (unsigned long)(cfg.sender ? cfg.bytes : cfg.peers * cfg.bytes),
           cfg.sender ? 1 : cfg.peers, cfg.qps, (unsigned long)cfg.msg,
           (unsigned long)(st.end - st.start), (unsigned long)cq.idle, (unsigned long)st.wrs,
           (unsigned long)cq.cqes, cfg.check);
    return 0;
}
