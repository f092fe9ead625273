/*
 * raft.c - Raft consensus (Ongaro and Ousterhout, "In Search of an Understandable Consensus
 * Algorithm", USENIX ATC 2014; its Figure 2 is the specification followed here) on nanoPU
 * nodes: one replica per node (core 0), a replicated key-value state machine, clients that
 * contact a follower redirected to the leader.  Wire format, parameters, and what departs
 * from the paper: docs/apps/raft.md.
 *
 * Replicas are nodes 0..N-1 (10.0.0.(2+i)).  Arguments (after program, MAC, IP):
 *   argv[3] N replicas (3..7)      argv[4] seed (election timeouts are drawn from a PRNG
 *   argv[5] election timeout min, ns          seeded by it and the node)
 *   argv[6] election timeout max, ns   argv[7] heartbeat period, ns
 *   argv[8] most entries per AppendEntries
 *
 * One core polls its receive queue and the cycle counter: messages are handled as they
 * come, timers (election timeout, heartbeats) when the counter passes them.  The state the
 * host checks after a run (crates/harness/src/clients/raft/state.rs) is the `raft` structure, the log and
 * the store, read from the node's memory through their symbols.
 *
 * Every message goes through appnet (appnet.h, with its header words), so one source builds
 * for both NICs (sw/Makefile): apps/raft.elf for nanoPU nodes and apps/raft_ice.elf for
 * IceNIC nodes, where each message is one UDP frame (docs/apps/raft.md "On IceNIC").
 */
#include "appnet.h"

#define MAX_NODES   7
#define LOG_CAP     (1u << 16)          /* entries; no snapshots (docs/apps/raft.md) */
#define NKEYS       4096                /* keys 0..NKEYS-1, one 64-bit value each */
#define SLOTS       (1u << 18)          /* dedup table: > 2 x LOG_CAP, never half full */
#define NONE        (~0ull)
#define RAFT_MAGIC  0x54464152ull       /* "RAFT" */

/* Message types (word 0 of every payload). */
enum { M_SET = 1, M_GET = 2, M_REPLY = 0x10, M_REDIRECT = 0x11, M_LEADER = 0x12,
       M_VOTE = 0x20, M_VOTE_REPLY = 0x21, M_APPEND = 0x22, M_APPEND_REPLY = 0x23 };
enum { E_NOOP = 0, E_SET = 1, E_GET = 2 };
enum { FOLLOWER = 0, CANDIDATE = 1, LEADER = 2 };
enum { ST_OK = 0, ST_MISS = 1, ST_FULL = 2, ST_BAD = 3 };
#define ENTRY_WORDS 6
/* Payload words of a SET beyond its one-word key and value, carried in the log and stored:
 * 0 here; raft_kv.c sets 8, the nanoPU prototype's 16-byte keys and 64-byte values (one
 * more key word, seven more value words; docs/apps/raft.md "Keys and values"). */
#ifndef RAFT_EXTRA
#define RAFT_EXTRA 0
#endif
#define WIRE_ENTRY_WORDS (ENTRY_WORDS + RAFT_EXTRA) /* an entry in an AppendEntries */
#define AE_WORDS    8                   /* AppendEntries words before the entries */
#define HOST_LEADER_CONTEXT 1           /* the host's context for leader announcements */

struct entry { uint64_t term, kind, req, key, value, client; };
struct slot { uint64_t req, status, value, index; };

/* Everything the host reads after the run; layout in docs/apps/raft.md. */
struct raft {
    uint64_t magic, me, n;
    uint64_t current_term, voted_for, last_index;      /* persistent (Figure 2) */
    uint64_t commit_index, last_applied, role, leader; /* volatile */
    uint64_t elections, truncated_committed;           /* counters */
    uint64_t next_index[MAX_NODES], match_index[MAX_NODES];
};

struct raft raft;
struct entry raft_log[LOG_CAP + 1];     /* index 0: the empty prefix, term 0 */
uint64_t raft_kv[NKEYS];
static struct slot slots[SLOTS];
#if RAFT_EXTRA
uint64_t raft_log_extra[LOG_CAP + 1][RAFT_EXTRA]; /* entry i's extra words */
uint64_t raft_kv_extra[NKEYS][RAFT_EXTRA];        /* a key's extra words, as applied */
static uint64_t set_extra[RAFT_EXTRA];            /* those of the SET or entry being read */

static void read_extra(uint64_t *to)
{
    for (int i = 0; i < RAFT_EXTRA; i++)
        to[i] = appnet_recv_word();
}

static void copy_extra(uint64_t *to, const uint64_t *from)
{
    for (int i = 0; i < RAFT_EXTRA; i++)
        to[i] = from[i];
}
#endif

static uint64_t t_min, t_max, heartbeat, batch, rng;
static uint64_t election_due, votes, hb_due[MAX_NODES], inflight[MAX_NODES], misses[MAX_NODES];
/* AppendEntries sent to each follower, numbered: a reply echoes the number, and only the
 * answer to the latest one sends the next (a heartbeat resent while one was unanswered
 * would otherwise start a second request-reply chain, and chains multiplied until the
 * leader's queue held nothing else). */
static uint64_t sent_seq[MAX_NODES];
/* A follower that answers nothing is sent to at doubling intervals, up to 2^this
 * heartbeats apart (8 us by default: below the shortest election timeout, so a follower
 * back from a partition hears the leader before it stands): the transport retransmits
 * every message until it is acknowledged, so a dead follower's messages would otherwise
 * pile up on the leader's link. */
#define MAX_BACKOFF_SHIFT 2

/* ---- Helpers --------------------------------------------------------------------- */

/* SplitMix64 (Steele, Lea, Flood, OOPSLA 2014): the election timeouts' PRNG. */
static uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The host reads `raft`, the log and the store from memory wherever the run stops
 * (crates/harness/src/clients/raft/state.rs): what it relies on is stored in order (an entry
 * before the index that makes it part of the log, a store update before lastApplied). */
#define ORDERED() __asm__ volatile("" ::: "memory")

static uint64_t cycles_of_ns(uint64_t ns) { return ns * nanopu_rtc_cycles() / 1000; }
static uint32_t ip_of(uint64_t node) { return appnet_node_ip(node); }
static uint64_t last_term(void) { return raft_log[raft.last_index].term; }

static void skip(uint64_t words)
{
    while (words--)
        appnet_recv_word();
}

/* Start a message of `words` words; its words follow (appnet_send_word), then
 * appnet_send_end. */
static void send_hdr(uint32_t ip, uint16_t context, uint64_t words)
{
    appnet_send_hdr(appnet_hdr(ip, context, (uint16_t)(8 * words)));
}

/* A new randomized election timeout from now (paper section 5.2). */
static void reset_election_timer(void)
{
    election_due = read_mcycle() + t_min + next_random() % (t_max - t_min + 1);
}

/* ---- State machine and clients ------------------------------------------------------ */

/* The dedup slot of request `req`: its own, or the empty one where it would go. */
static struct slot *slot_of(uint64_t req)
{
    uint64_t i = req * 0x9e3779b97f4a7c15ull >> 46;
    while (slots[i].req && slots[i].req != req)
        i = (i + 1) & (SLOTS - 1);
    return &slots[i];
}

static void reply(uint64_t client, uint64_t req, const struct slot *s)
{
    send_hdr((uint32_t)(client >> 16), (uint16_t)client, 6);
    appnet_send_word(M_REPLY);
    appnet_send_word(req);
    appnet_send_word(s->status);
    appnet_send_word(s->value);
    appnet_send_word(s->index);
    appnet_send_word(raft.me);
    appnet_send_end();
}

/* Execute entry i once per request id (paper section 8); the leader answers the client. */
static void apply(uint64_t i)
{
    const struct entry *e = &raft_log[i];
    if (e->kind == E_NOOP)
        return;
    struct slot *s = slot_of(e->req);
    if (s->req != e->req) {
        s->req = e->req;
        s->index = i;
        if (e->kind == E_SET)
            raft_kv[e->key] = e->value;
#if RAFT_EXTRA
        if (e->kind == E_SET)
            copy_extra(raft_kv_extra[e->key], raft_log_extra[i]);
#endif
        s->value = raft_kv[e->key];
        s->status = s->value ? ST_OK : ST_MISS;
    }
    if (raft.role == LEADER)
        reply(e->client, e->req, s);
}

static void apply_committed(void)
{
    while (raft.last_applied < raft.commit_index) {
        apply(raft.last_applied + 1);
        ORDERED();
        raft.last_applied++;
        ORDERED();
    }
}

static void redirect(uint64_t hdr, uint64_t req)
{
    send_hdr(appnet_hdr_ip(hdr), appnet_hdr_context(hdr), 3);
    appnet_send_word(M_REDIRECT);
    appnet_send_word(req);
    appnet_send_word(raft.role == CANDIDATE ? NONE : raft.leader);
    appnet_send_end();
}

static void refuse(uint64_t hdr, uint64_t req, uint64_t status)
{
    struct slot s = { req, status, 0, 0 };
    reply((uint64_t)appnet_hdr_ip(hdr) << 16 | appnet_hdr_context(hdr), req, &s);
}

static void append(uint64_t kind, uint64_t req, uint64_t key, uint64_t value, uint64_t client)
{
    struct entry *e = &raft_log[raft.last_index + 1];
    e->term = raft.current_term;
    e->kind = kind;
    e->req = req;
    e->key = key;
    e->value = value;
    e->client = client;
#if RAFT_EXTRA
    copy_extra(raft_log_extra[raft.last_index + 1], set_extra); /* a SET's; stale otherwise, unread */
#endif
    ORDERED();
    raft.last_index++;
    ORDERED();
}

static void replicate_idle(void);

/* SET {req, key, value} or GET {req, key}: the leader appends it to its log. */
static void client_request(uint64_t hdr, uint64_t op, uint64_t words)
{
    uint64_t want = op == M_SET ? 4 + RAFT_EXTRA : 3, req = appnet_recv_word(), key = appnet_recv_word();
    uint64_t value = op == M_SET ? appnet_recv_word() : 0;
#if RAFT_EXTRA
    if (op == M_SET)
        read_extra(set_extra);
#endif
    skip(words - want);
    struct slot *s = slot_of(req);
    if (words != want || key >= NKEYS || req == 0 || (op == M_SET && value == 0))
        refuse(hdr, req, ST_BAD);
    else if (raft.role != LEADER)
        redirect(hdr, req);
    else if (s->req == req)
        reply((uint64_t)appnet_hdr_ip(hdr) << 16 | appnet_hdr_context(hdr), req, s);
    else if (raft.last_index >= LOG_CAP)
        refuse(hdr, req, ST_FULL);
    else {
        append(op == M_SET ? E_SET : E_GET, req, key, value,
               (uint64_t)appnet_hdr_ip(hdr) << 16 | appnet_hdr_context(hdr));
        replicate_idle();
    }
}

/* ---- Terms and elections ------------------------------------------------------------ */

/* A term newer than ours: adopt it and follow (Figure 2, "Rules for Servers").  A leader
 * that steps down starts a fresh election timeout: its timer last ran before it led, so
 * it would otherwise stand for election at once (measured: a leader cut off from the
 * majority and healed started a term at once, deposing the new leader). */
static void observe_term(uint64_t term)
{
    if (term > raft.current_term) {
        if (raft.role == LEADER)
            reset_election_timer();
        raft.current_term = term;
        raft.voted_for = NONE;
        raft.role = FOLLOWER;
        raft.leader = NONE;
    }
}

static void send_vote_request(uint64_t p)
{
    send_hdr(ip_of(p), 0, 5);
    appnet_send_word(M_VOTE);
    appnet_send_word(raft.current_term);
    appnet_send_word(raft.me);
    appnet_send_word(raft.last_index);
    appnet_send_word(last_term());
    appnet_send_end();
}

static void start_election(void)
{
    raft.current_term++;
    raft.role = CANDIDATE;
    raft.voted_for = raft.me;
    raft.leader = NONE;
    raft.elections++;
    votes = 1ull << raft.me;
    reset_election_timer();
    for (uint64_t p = 0; p < raft.n; p++)
        if (p != raft.me)
            send_vote_request(p);
}

/* RequestVote RPC receiver (Figure 2): grant at most one vote per term, only to a
 * candidate whose log is at least as up to date as ours (section 5.4.1). */
static void on_vote_request(void)
{
    uint64_t term = appnet_recv_word(), cand = appnet_recv_word(), lli = appnet_recv_word(), llt = appnet_recv_word();
    observe_term(term);
    int up_to_date = llt > last_term() || (llt == last_term() && lli >= raft.last_index);
    int granted = term == raft.current_term && up_to_date && cand < raft.n
                  && (raft.voted_for == NONE || raft.voted_for == cand);
    if (granted) {
        raft.voted_for = cand;
        reset_election_timer();
    }
    send_hdr(ip_of(cand < raft.n ? cand : 0), 0, 4);
    appnet_send_word(M_VOTE_REPLY);
    appnet_send_word(raft.current_term);
    appnet_send_word((uint64_t)granted);
    appnet_send_word(raft.me);
    appnet_send_end();
}

static void send_append(uint64_t p);

/* Section 5.2: a candidate with a majority's votes leads; it appends a no-op of its term
 * (section 8) and tells the host (for the timeline only: clients find it by redirects). */
static void become_leader(void)
{
    raft.role = LEADER;
    raft.leader = raft.me;
    for (uint64_t p = 0; p < raft.n; p++) {
        raft.next_index[p] = raft.last_index + 1;
        raft.match_index[p] = 0;
        inflight[p] = 0;
        misses[p] = 0;
    }
    send_hdr(NANOPU_HOST_IP, HOST_LEADER_CONTEXT, 3);
    appnet_send_word(M_LEADER);
    appnet_send_word(raft.current_term);
    appnet_send_word(raft.me);
    appnet_send_end();
    if (raft.last_index < LOG_CAP)
        append(E_NOOP, 0, 0, 0, 0);
    for (uint64_t p = 0; p < raft.n; p++)
        if (p != raft.me)
            send_append(p);
}

static void on_vote_reply(void)
{
    uint64_t term = appnet_recv_word(), granted = appnet_recv_word(), from = appnet_recv_word();
    observe_term(term);
    if (raft.role != CANDIDATE || term != raft.current_term || !granted || from >= raft.n)
        return;
    votes |= 1ull << from;
    uint64_t have = 0;
    for (uint64_t p = 0; p < raft.n; p++)
        have += votes >> p & 1;
    if (2 * have > raft.n)
        become_leader();
}

/* ---- Log replication ------------------------------------------------------------------ */

/* AppendEntries to p from nextIndex[p], at most `batch` entries (none: a heartbeat). */
static void send_append(uint64_t p)
{
    uint64_t prev = raft.next_index[p] - 1, count = raft.last_index - prev;
    count = count < batch ? count : batch;
    send_hdr(ip_of(p), 0, AE_WORDS + WIRE_ENTRY_WORDS * count);
    appnet_send_word(M_APPEND);
    appnet_send_word(raft.current_term);
    appnet_send_word(raft.me);
    appnet_send_word(prev);
    appnet_send_word(raft_log[prev].term);
    appnet_send_word(raft.commit_index);
    appnet_send_word(count);
    appnet_send_word(++sent_seq[p]);
#if RAFT_EXTRA
    for (uint64_t i = prev + 1; i <= prev + count; i++) {
        const uint64_t *w = (const uint64_t *)&raft_log[i];
        for (int j = 0; j < ENTRY_WORDS; j++)
            appnet_send_word(w[j]);
        for (int j = 0; j < RAFT_EXTRA; j++)
            appnet_send_word(raft_log_extra[i][j]);
    }
#else
    const uint64_t *w = (const uint64_t *)&raft_log[prev + 1];
    for (uint64_t i = 0; i < ENTRY_WORDS * count; i++)
        appnet_send_word(w[i]);
#endif
    appnet_send_end();
    misses[p] += inflight[p];
    hb_due[p] = read_mcycle() + (heartbeat << (misses[p] < MAX_BACKOFF_SHIFT ? misses[p] : MAX_BACKOFF_SHIFT));
    inflight[p] = 1;
}

/* New entries go at once to followers with no AppendEntries unanswered; the others get
 * them with the reply (entries accumulating meanwhile travel as one batch). */
static void replicate_idle(void)
{
    for (uint64_t p = 0; p < raft.n; p++)
        if (p != raft.me && !inflight[p] && raft.next_index[p] <= raft.last_index)
            send_append(p);
}

/* Rule 1 for leaders' commitIndex (Figure 2): the largest N stored on a majority is the
 * majority-th largest of the matchIndex values (ours: the last index), and it commits if
 * its entry is of the current term (entries of earlier terms commit with it, section
 * 5.4.2; below an entry of an earlier term there is none of ours).  A sort of at most 7
 * values per reply, where scanning the uncommitted entries cost a backlog's length. */
static void advance_commit(void)
{
    uint64_t m[MAX_NODES];
    for (uint64_t p = 0; p < raft.n; p++) {
        uint64_t v = p == raft.me ? raft.last_index : raft.match_index[p], i = p;
        for (; i > 0 && m[i - 1] < v; i--)
            m[i] = m[i - 1];
        m[i] = v;
    }
    uint64_t n = m[raft.n / 2]; /* raft.n / 2 + 1 values are >= it: a majority */
    if (n > raft.commit_index && raft_log[n].term == raft.current_term)
        raft.commit_index = n;
    apply_committed();
}

static void send_append_reply(uint64_t to, uint64_t ok, uint64_t index, uint64_t seq)
{
    send_hdr(ip_of(to), 0, 6);
    appnet_send_word(M_APPEND_REPLY);
    appnet_send_word(raft.current_term);
    appnet_send_word(ok);
    appnet_send_word(raft.me);
    appnet_send_word(index);
    appnet_send_word(seq);
    appnet_send_end();
}

/* Store entry `index` from the message being read: a conflicting entry and all after it go first (receiver
 * rule 3), an entry we already hold is kept (rule 4). */
static void store_entry(uint64_t index)
{
    struct entry e;
    uint64_t *w = (uint64_t *)&e;
    for (int i = 0; i < ENTRY_WORDS; i++)
        w[i] = appnet_recv_word();
#if RAFT_EXTRA
    read_extra(set_extra);
#endif
    if (index <= raft.last_index && raft_log[index].term != e.term) {
        raft.truncated_committed += index <= raft.commit_index; /* must stay 0 */
        raft.last_index = index - 1;
        ORDERED();
    }
    if (index > raft.last_index && index <= LOG_CAP) {
        raft_log[index] = e;
#if RAFT_EXTRA
        copy_extra(raft_log_extra[index], set_extra);
#endif
        ORDERED();
        raft.last_index = index;
        ORDERED();
    }
}

/* AppendEntries RPC receiver (Figure 2, rules 1-5). */
static void on_append(uint64_t words)
{
    uint64_t term = appnet_recv_word(), leader = appnet_recv_word(), prev = appnet_recv_word(), prev_term = appnet_recv_word();
    uint64_t commit = appnet_recv_word(), count = appnet_recv_word(), seq = appnet_recv_word();
    if (words != AE_WORDS + WIRE_ENTRY_WORDS * count || leader >= raft.n) {
        skip(words - AE_WORDS);
        return;
    }
    observe_term(term);
    if (term < raft.current_term) {
        skip(WIRE_ENTRY_WORDS * count);
        return send_append_reply(leader, 0, prev, seq);
    }
    raft.role = FOLLOWER;
    raft.leader = leader;
    reset_election_timer();
    if (prev > raft.last_index || raft_log[prev].term != prev_term) {
        skip(WIRE_ENTRY_WORDS * count);
        return send_append_reply(leader, 0, prev, seq);
    }
    for (uint64_t k = 1; k <= count; k++)
        store_entry(prev + k);
    uint64_t last_new = prev + count < raft.last_index ? prev + count : raft.last_index;
    ORDERED();
    if (commit > raft.commit_index)
        raft.commit_index = commit < last_new ? commit : last_new;
    apply_committed();
    send_append_reply(leader, 1, last_new, seq);
}

/* The leader's side: advance matchIndex and commit, or back nextIndex off by one (never
 * below 1, never on a stale reply) and retry; either way send what is left. */
static void on_append_reply(void)
{
    uint64_t term = appnet_recv_word(), ok = appnet_recv_word(), from = appnet_recv_word(), index = appnet_recv_word();
    uint64_t seq = appnet_recv_word();
    observe_term(term);
    if (raft.role != LEADER || term != raft.current_term || from >= raft.n || from == raft.me)
        return;
    int latest = seq == sent_seq[from];
    if (ok) {
        if (index > raft.match_index[from])
            raft.match_index[from] = index;
        raft.next_index[from] = raft.match_index[from] + 1;
        advance_commit();
    } else if (latest && index + 1 == raft.next_index[from] && index >= 1) {
        raft.next_index[from] = index;
    }
    if (!latest)
        return; /* an older request's answer: the latest one is still on its way */
    inflight[from] = 0;
    misses[from] = 0;
    if (raft.next_index[from] <= raft.last_index || !ok)
        send_append(from);
}

/* ---- The loop ----------------------------------------------------------------------- */

static void handle_message(void)
{
    uint64_t hdr = appnet_recv_hdr(), words = appnet_hdr_words(hdr);
    if (words == 0)
        return;
    uint64_t type = appnet_recv_word();
    switch (type) {
    case M_SET:
    case M_GET:          return client_request(hdr, type, words);
    case M_VOTE:         if (words == 5) return on_vote_request(); break;
    case M_VOTE_REPLY:   if (words == 4) return on_vote_reply(); break;
    case M_APPEND:       if (words >= AE_WORDS) return on_append(words); break;
    case M_APPEND_REPLY: if (words == 6) return on_append_reply(); break;
    }
    skip(words - 1);
}

static void on_timers(uint64_t now)
{
    if (raft.role != LEADER) {
        if (now >= election_due)
            start_election();
        return;
    }
    for (uint64_t p = 0; p < raft.n; p++)
        if (p != raft.me && now >= hb_due[p])
            send_append(p);
}

static int usage(const char *why)
{
    printf("raft: %s\nusage: raft.elf N SEED TIMEOUT_MIN_NS TIMEOUT_MAX_NS HEARTBEAT_NS BATCH\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    uint64_t n = nanopu_arg_u64(argc, argv, 0, 0), me = nanopu_node_index();
    uint64_t lo = nanopu_arg_u64(argc, argv, 2, 0), hi = nanopu_arg_u64(argc, argv, 3, 0);
    uint64_t hb = nanopu_arg_u64(argc, argv, 4, 0);
    batch = nanopu_arg_u64(argc, argv, 5, 0);
    if (argc < 9 || n < 3 || n > MAX_NODES || !lo || lo > hi || !hb || !batch
        || AE_WORDS + WIRE_ENTRY_WORDS * batch > APPNET_LONGEST_WORDS)
        return usage("bad arguments");
    if (me >= n)
        return 0; /* not a replica */
    raft = (struct raft){ RAFT_MAGIC, me, n, 0, NONE, 0, 0, 0, FOLLOWER, NONE, 0, 0, {0}, {0} };
    t_min = cycles_of_ns(lo);
    t_max = cycles_of_ns(hi);
    heartbeat = cycles_of_ns(hb);
    rng = nanopu_arg_u64(argc, argv, 1, 0) * 0x100000001b3ull ^ (me + 1) * 0x9e3779b97f4a7c15ull;
    appnet_init(0);
    reset_election_timer();
    for (;;) {
        if (appnet_ready()) {
            handle_message();
            appnet_recv_end();
        }
        on_timers(read_mcycle());
    }
}
