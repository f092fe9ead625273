/*
 * chain.c - chain replication (R. van Renesse and F. B. Schneider, "Chain Replication for
 * Supporting High Throughput and Availability", OSDI 2004) over the MICA-style store of
 * kvstore.h.  Roles, wire format, timeouts and where it departs from the paper:
 * docs/apps/chain.md; the client is the test host (crates/harness/src/clients/chain.rs).
 *
 * Node 0 is the master, nodes 1..R the replicas, chained 1 -> 2 -> ... -> R at the start
 * (head node 1, tail node R); one core each.  A SET enters at the head, which numbers it;
 * every replica applies it to its store and forwards it to its successor, keeping it in its
 * Sent list; the tail applies it, answers the client and acknowledges the number up the
 * chain, and each replica drops what is acknowledged from Sent.  GETs are served by the tail.
 * The master pings every replica each period and removes one that has not answered for the
 * timeout: it tells each live replica its predecessor and successor (a replica with a new
 * successor resends its Sent list; a new tail answers and acknowledges its Sent list), and
 * the client the new head and tail once every live replica has taken its new place.
 *
 * Every message goes through appnet (appnet.h, with its header words), so one source builds
 * for both NICs (sw/Makefile): apps/chain.elf for nanoPU nodes, whose words stream through
 * netRX and netTX, and apps/chain_ice.elf for IceNIC nodes, where each message is one UDP
 * frame (appnet_ice.h; docs/apps/chain.md "On IceNIC").
 *
 * argv[3] replicas R, argv[4] items, argv[5] seed, argv[6], argv[7] smallest and largest
 * preloaded value (bytes), argv[8] ping period (mtime ticks: us), argv[9] timeout (cycles).
 */
#include "appnet.h"
#include "kvstore.h"

enum { OP_FWD = 3, OP_ACK = 4, OP_PING = 5, OP_PONG = 6, OP_CHAIN = 7, OP_CHAIN_ACK = 8,
       OP_READY = 9, OP_CONFIG = 10 };
enum { ST_ROLE = 4 };                   /* a SET not at the head, a GET not at the tail */

#define MAX_REPLICAS 8
#define SENT_MAX     4096               /* writes forwarded and not yet acknowledged */
#define FWD_HDR      6                  /* op | length, seq, client, tag, key (2 words) */
#define CLINT_MTIMECMP 0x2004000ul      /* docs/abi.md, memory map */
#define CLINT_MTIME    0x200bff8ul
#define MIE_MTIE       (1ul << 7)
#define MSTATUS_MIE    (1ul << 3)

static uint64_t replicas;
static uint32_t ip_of(uint64_t node) { return appnet_node_ip(node); }
static uint64_t node_of(uint32_t ip) { return nanopu_node_of_ip(ip); }

static void send2(uint32_t ip, uint64_t w0, uint64_t w1)
{
    appnet_send_hdr(appnet_hdr(ip, 0, 16));
    appnet_send_word(w0);
    appnet_send_word(w1);
    appnet_send_end();
}

/* ---- Replica ------------------------------------------------------------------------ */

/* A write as it travels down the chain and waits in Sent: the client's address (a header
 * word with its IP and context), the client's tag, the key and the value. */
struct write {
    uint64_t seq, client, tag, k0, k1, len;
    uint64_t value[MAX_VALUE / 8];
};

static struct partition store;
static struct write sent[SENT_MAX];     /* Sent, oldest first from sent_first */
static uint64_t sent_first, sent_count;
static uint32_t pred, succ;             /* neighbours' IPs, 0: none (head, tail) */
static uint64_t last_seq, removed;      /* the last write applied; removed by the master */

static struct write *sent_at(uint64_t i) { return &sent[(sent_first + i) % SENT_MAX]; }

/* Where the next write is read to: the slot after Sent's newest (kept only if forwarded). */
static struct write *next_slot(void)
{
    if (sent_count == SENT_MAX) {
        printf("chain: node %lu: Sent is full (%d writes unacknowledged)\n",
               (unsigned long)nanopu_node_index(), SENT_MAX);
        nanopu_exit(6);
    }
    return sent_at(sent_count);
}

static void read_value(struct write *w)
{
    for (uint64_t i = 0; i < w->len / 8; i++)
        w->value[i] = appnet_recv_word();
}

static void apply(const struct write *w)
{
    uint64_t h = key_hash(w->k0, w->k1), off = append_hdr(&store, w->k0, w->k1, w->len);
    for (uint64_t i = 0; i < w->len / 8; i++)
        logw_set(&store, off + 24 + 8 * i, w->value[i]);
    index_set(&store, h, w->k0, w->k1, off);
    last_seq = w->seq;
}

static void forward(const struct write *w)
{
    appnet_send_hdr(appnet_hdr(succ, 0, (uint16_t)(8 * FWD_HDR + w->len)));
    appnet_send_word(OP_FWD | w->len << 16);
    appnet_send_word(w->seq);
    appnet_send_word(w->client);
    appnet_send_word(w->tag);
    appnet_send_word(w->k0);
    appnet_send_word(w->k1);
    for (uint64_t i = 0; i < w->len / 8; i++)
        appnet_send_word(w->value[i]);
    appnet_send_end();
}

static void ack_up(uint64_t seq)
{
    if (pred)
        send2(pred, OP_ACK, seq);
}

/* A write applied here: forwarded and kept in Sent, or, at the tail, answered and acked. */
static void pass_on(struct write *w)
{
    if (succ) {
        forward(w);
        sent_count++;
        return;
    }
    reply_status(w->client, OP_SET, ST_OK, w->tag);
    ack_up(w->seq);
}

static void on_set(uint64_t hdr, uint64_t len, uint64_t tag, uint64_t k0, uint64_t k1)
{
    if (pred || removed) {
        skip(len / 8);
        reply_status(hdr, OP_SET, ST_ROLE, tag);
        return;
    }
    struct write *w = next_slot();
    *w = (struct write){ .seq = last_seq + 1, .client = hdr, .tag = tag, .k0 = k0, .k1 = k1, .len = len };
    read_value(w);
    apply(w);
    pass_on(w);
}

/* A write from the predecessor; one already applied (resent after a reconfiguration) is
 * dropped, and a gap would break the chain's order (the links are FIFO: never seen). */
static void on_fwd(uint64_t len, uint64_t seq)
{
    struct write *w = next_slot();
    *w = (struct write){ .seq = seq, .client = appnet_recv_word(), .tag = appnet_recv_word(), .len = len };
    w->k0 = appnet_recv_word();
    w->k1 = appnet_recv_word();
    if (seq <= last_seq || removed) {
        skip(len / 8);
        return;
    }
    if (seq != last_seq + 1) {
        printf("chain: node %lu: write %lu after %lu\n", (unsigned long)nanopu_node_index(),
               (unsigned long)seq, (unsigned long)last_seq);
        nanopu_exit(7);
    }
    read_value(w);
    apply(w);
    pass_on(w);
}

static void on_ack(uint64_t seq)
{
    while (sent_count && sent_at(0)->seq <= seq) {
        sent_first = (sent_first + 1) % SENT_MAX;
        sent_count--;
    }
    ack_up(seq);
}

static void on_get(uint64_t hdr, uint64_t tag, uint64_t k0, uint64_t k1)
{
    if (succ || removed) {
        reply_status(hdr, OP_GET, ST_ROLE, tag);
        return;
    }
    get_exclusive(&store, hdr, tag, key_hash(k0, k1), k0, k1);
}

/* A new place in the chain.  A new successor gets all of Sent again (it drops what it has);
 * a new tail answers every write in Sent (the writes are now at the tail) and acks them. */
static void on_chain(uint32_t master, uint64_t epoch, uint64_t places)
{
    uint32_t new_pred = (uint32_t)(places >> 32), new_succ = (uint32_t)places;
    removed = places == ~0ull;
    pred = removed ? 0 : new_pred;
    if (!removed && new_succ != succ) {
        succ = new_succ;
        for (uint64_t i = 0; i < sent_count; i++) {
            if (succ)
                forward(sent_at(i));
            else
                reply_status(sent_at(i)->client, OP_SET, ST_OK, sent_at(i)->tag);
        }
        if (!succ && sent_count)
            ack_up(sent_at(sent_count - 1)->seq);
        if (!succ)
            sent_count = 0;
    }
    send2(master, OP_CHAIN_ACK | epoch << 8, last_seq);
}

static void serve_replica(void)
{
    uint64_t hdr = appnet_recv_hdr(), words = appnet_hdr_words(hdr);
    if (words < 2) {
        skip(words);
        reply_status(hdr, 0, ST_BAD, 0);
        appnet_recv_end();
        return;
    }
    uint64_t w0 = appnet_recv_word(), w1 = appnet_recv_word(), op = w0 & 0xff, len = w0 >> 16;
    if (op == OP_ACK && words == 2) {
        on_ack(w1);
    } else if (op == OP_FWD && words == FWD_HDR + len / 8 && len % 8 == 0 && len <= MAX_VALUE) {
        on_fwd(len, w1);
    } else if (op == OP_PING && words == 2) {
        send2(appnet_hdr_ip(hdr), OP_PONG, w1);
    } else if (op == OP_CHAIN && words == 2) {
        on_chain(appnet_hdr_ip(hdr), w0 >> 8, w1);
    } else if (op == OP_SET && words == 4 + len / 8 && len % 8 == 0 && len <= MAX_VALUE) {
        uint64_t k0 = appnet_recv_word();
        on_set(hdr, len, w1, k0, appnet_recv_word());
    } else if (op == OP_GET && words == 4) {
        uint64_t k0 = appnet_recv_word();
        on_get(hdr, w1, k0, appnet_recv_word());
    } else {
        skip(words - 2);
        reply_status(hdr, op, ST_BAD, w1);
    }
    appnet_recv_end();
}

static int replica(uint64_t items)
{
    uint64_t me = nanopu_node_index();
    pred = me > 1 ? ip_of(me - 1) : 0;
    succ = me < replicas ? ip_of(me + 1) : 0;
    preload(&store, 0, items);
    if (store.evicted) {
        printf("chain: node %lu: the index dropped %lu keys while preloading\n",
               (unsigned long)me, (unsigned long)store.evicted);
        return 5;
    }
    appnet_init(0);
    send2(ip_of(0), OP_READY, me);
    appnet_boot_msg();
    for (;;)
        serve_replica();
}

/* ---- Master --------------------------------------------------------------------------- */

static uint64_t alive[MAX_REPLICAS + 1], last_pong[MAX_REPLICAS + 1];
static uint64_t ping_ticks, timeout_cycles, epoch, waiting, failed, detected;

/* The live neighbours of replica n in the chain's order (node numbers), 0: none. */
static uint64_t live_pred(uint64_t n) { while (--n && !alive[n]) { } return n; }
static uint64_t live_succ(uint64_t n) { while (++n <= replicas && !alive[n]) { } return n > replicas ? 0 : n; }
static uint64_t ip_or_0(uint64_t n) { return n ? ip_of(n) : 0; }

/* Remove replica n: every live replica learns its place, n that it is out. */
static void remove_replica(uint64_t n, uint64_t now)
{
    alive[n] = 0;
    epoch++;
    failed = n;
    detected = now;
    waiting = 0;
    send2(ip_of(n), OP_CHAIN | epoch << 8, ~0ull);
    for (uint64_t m = 1; m <= replicas; m++) {
        if (!alive[m])
            continue;
        send2(ip_of(m), OP_CHAIN | epoch << 8, ip_or_0(live_pred(m)) << 32 | ip_or_0(live_succ(m)));
        waiting++;
    }
}

/* The client learns the new head and tail once every live replica took its place. */
static void on_chain_ack(uint64_t e)
{
    if (e != epoch || !waiting || --waiting)
        return;
    uint64_t head = live_succ(0), tail = live_pred(replicas + 1);
    appnet_send_hdr(appnet_hdr(NANOPU_HOST_IP, 0, 48));
    appnet_send_word(OP_CONFIG | epoch << 8);
    appnet_send_word(head);
    appnet_send_word(tail);
    appnet_send_word(failed);
    appnet_send_word(detected);
    appnet_send_word(read_mcycle());
    appnet_send_end();
}

static void arm_timer(void)
{
    volatile uint64_t *mtime = (volatile uint64_t *)CLINT_MTIME;
    *(volatile uint64_t *)(CLINT_MTIMECMP + 8 * nanopu_core_id()) = *mtime + ping_ticks;
}

/* Each period: remove the replicas silent for longer than the timeout, ping the others.
 * Taken only while the main loop waits for a message (mstatus.MIE is set only there), so
 * its messages never interleave with one the main loop writes. */
static void on_tick(void)
{
    uint64_t now = read_mcycle();
    for (uint64_t n = 1; n <= replicas; n++)
        if (alive[n] && now - last_pong[n] > timeout_cycles)
            remove_replica(n, now);
    for (uint64_t n = 1; n <= replicas; n++)
        if (alive[n])
            send2(ip_of(n), OP_PING, now);
    arm_timer();
}

APPNET_IRQ_ENTRY(tick, on_tick);

static void serve_master(void)
{
    csr_set(mstatus, MSTATUS_MIE);
    uint64_t hdr = appnet_recv_hdr();
    csr_clear(mstatus, MSTATUS_MIE);
    uint64_t words = appnet_hdr_words(hdr), w0 = appnet_recv_word(), n = node_of(appnet_hdr_ip(hdr));
    skip(words - 1);
    if ((w0 & 0xff) == OP_PONG && n >= 1 && n <= replicas)
        last_pong[n] = read_mcycle();
    else if ((w0 & 0xff) == OP_CHAIN_ACK)
        on_chain_ack(w0 >> 8);
    appnet_recv_end();
}

static void __attribute__((noreturn)) master(void)
{
    appnet_init(0);
    for (uint64_t ready = 0; ready < replicas;) {
        uint64_t hdr = appnet_recv_hdr(), words = appnet_hdr_words(hdr), w0 = appnet_recv_word();
        uint64_t n = node_of(appnet_hdr_ip(hdr));
        skip(words - 1);
        if (w0 == OP_READY && n >= 1 && n <= replicas && !alive[n]) {
            alive[n] = 1;
            last_pong[n] = read_mcycle();
            ready++;
        }
        appnet_recv_end();
    }
    appnet_boot_msg();
    csr_write(mtvec, (uint64_t)tick);
    arm_timer();
    csr_set(mie, MIE_MTIE);
    for (;;)
        serve_master();
}

static int usage(const char *why)
{
    printf("chain: %s\nusage: chain.elf REPLICAS ITEMS SEED VALUE_MIN VALUE_MAX PING_TICKS TIMEOUT_CYCLES\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 10)
        return usage("missing arguments");
    replicas = nanopu_arg_u64(argc, argv, 0, 0);
    uint64_t items = nanopu_arg_u64(argc, argv, 1, 0);
    seed = nanopu_arg_u64(argc, argv, 2, 0);
    vmin = nanopu_arg_u64(argc, argv, 3, 0);
    vmax = nanopu_arg_u64(argc, argv, 4, 0);
    ping_ticks = nanopu_arg_u64(argc, argv, 5, 0);
    timeout_cycles = nanopu_arg_u64(argc, argv, 6, 0);
    nparts = 1;
    if (!replicas || replicas > MAX_REPLICAS || !items || items > BUCKETS || vmin % 8 || vmax % 8
        || !vmin || vmin > vmax || vmax > MAX_VALUE || !ping_ticks || !timeout_cycles
        || nanopu_num_cores() != 1 || nanopu_node_index() > replicas)
        return usage("bad arguments (1..8 replicas on nodes 1.., 1..16384 items, one core per node)");
    if (nanopu_node_index() == 0)
        master();
    return replica(items);
}
