/*
 * kv_client.h - the model a key-value client checks every reply against (tcp_kv_client.c
 * over the C TCP, rdma_kv_client.c over the RDMA NIC; docs/apps/tcp-workloads.md), one
 * definition so that every stack's clients issue the same requests and check the same way.
 * Written against the platform only; the includer moves the bytes.
 *
 * Requests are GETs (with probability GET_PCT %) or SETs of one of KEYS keys, drawn from a
 * generator seeded with the node's index. Keys are `k:NODE:I`, so clients on different
 * nodes share no key and each client's model is the whole truth about its keys: the server
 * answers a client's requests in order, so a GET must return the value of the last SET of
 * that key issued before it (VALUE_BYTES bytes of tapp_pattern, seeded by node, key and the
 * SET's number), or the null bulk string if there was none, and a SET must answer +OK. Any
 * other reply stops the client with exit code 2, naming the request.
 */
#ifndef KV_CLIENT_H
#define KV_CLIENT_H

#include "app_pattern.h"
#include "nanopu.h"
#include "tcp_kv.h"

#define KVC_MAX_KEYS 4096
#define KVC_MAX_REQUESTS 65536

/* Stop with exit code 2, printing why. */
#define KVC_FAIL(...) (printf(__VA_ARGS__), nanopu_exit(2))

struct kvc_pending {
    uint8_t set;
    uint32_t key, version; /* a GET: the version the reply must carry (0: none) */
    uint64_t sent;
};

static uint32_t kvc_version[KVC_MAX_KEYS];
static struct kvc_pending kvc_fifo[KV_MAX_DEPTH];
static uint32_t kvc_lat[KVC_MAX_REQUESTS];
static uint8_t kvc_val[KV_VAL_MAX];
/* The model: requests outstanding from kvc_fifo[head], and what was answered. */
static struct {
    uint32_t head, outstanding, node, vbytes, keys, get_pct;
    uint64_t rng, gets, hits, sets, answered;
} kvc;

/* Start the model for this node: VALUE_BYTES, KEYS, GET_PCT. */
static void kvc_init(uint32_t vbytes, uint32_t keys, uint32_t get_pct)
{
    kvc.node = (uint32_t)nanopu_node_index();
    kvc.rng = 0x9e3779b97f4a7c15ull * (kvc.node + 1);
    kvc.vbytes = vbytes, kvc.keys = keys, kvc.get_pct = get_pct;
}

static uint64_t kvc_rand(void)
{
    kvc.rng ^= kvc.rng << 13, kvc.rng ^= kvc.rng >> 7, kvc.rng ^= kvc.rng << 17; /* xorshift64 (Marsaglia 2003) */
    return kvc.rng;
}

static uint32_t kvc_put(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    memcpy(p, s, n);
    return n;
}

/* `$LEN\r\nBYTES\r\n` at p; its length. */
static uint32_t kvc_put_bulk(uint8_t *p, const uint8_t *s, uint32_t n)
{
    uint32_t at = 1;
    p[0] = '$';
    at += kv_put_dec(p + at, n);
    at += kvc_put(p + at, "\r\n");
    memcpy(p + at, s, n);
    return at + n + kvc_put(p + at + n, "\r\n");
}

/* The key's text, k:NODE:I, at p; its length. */
static uint32_t kvc_key_text(uint8_t *p, uint32_t key)
{
    uint32_t at = kvc_put(p, "k:");
    at += kv_put_dec(p + at, kvc.node);
    p[at++] = ':';
    return at + kv_put_dec(p + at, key);
}

/* Version v of the key's value, into kvc_val. */
static void kvc_value(uint32_t key, uint32_t v)
{
    uint32_t seed = (kvc.node * KVC_MAX_KEYS + key) * 65537u + v;
    for (uint32_t i = 0; i < kvc.vbytes; i++)
        kvc_val[i] = tapp_pattern(seed, i);
}

/* Write the next request at p (room for KV_REQ_MAX bytes) and into the model; its length.
 * Its latency counts from here. */
static uint32_t kvc_issue(uint8_t *p)
{
    uint8_t k[KV_KEY_MAX];
    struct kvc_pending *q = &kvc_fifo[(kvc.head + kvc.outstanding++) % KV_MAX_DEPTH];
    uint32_t n;
    q->key = (uint32_t)(kvc_rand() % kvc.keys);
    q->set = kvc_rand() % 100 >= kvc.get_pct;
    uint32_t kn = kvc_key_text(k, q->key);
    if (q->set) {
        q->version = ++kvc_version[q->key];
        kvc_value(q->key, q->version);
        n = kvc_put(p, "*3\r\n$3\r\nSET\r\n");
        n += kvc_put_bulk(p + n, k, kn);
        n += kvc_put_bulk(p + n, kvc_val, kvc.vbytes);
    } else {
        q->version = kvc_version[q->key];
        n = kvc_put(p, "*2\r\n$3\r\nGET\r\n");
        n += kvc_put_bulk(p + n, k, kn);
    }
    q->sent = read_mcycle();
    return n;
}

static void kvc_wrong(const struct kvc_pending *q, const char *why)
{
    KVC_FAIL("kv_client: node %u: reply %lu (%s of key %u, model version %u): %s\n", kvc.node,
             (unsigned long)kvc.answered, q->set ? "SET" : "GET", q->key, q->version, why);
}

/* Check a GET's reply at p[0..len); its length, 0 if not all there. */
static uint32_t kvc_check_get(const struct kvc_pending *q, const uint8_t *p, uint32_t len)
{
    uint32_t used;
    int64_t n = p[0] == '$' ? kv_get_dec(p + 1, len - 1, &used) : -2;
    if (n == -2)
        kvc_wrong(q, "not a bulk string");
    if (n == 0 && !used)
        return 0;
    if (n == -1) {
        if (q->version)
            kvc_wrong(q, "null, but the key was set");
        return 1 + used;
    }
    if (!q->version)
        kvc_wrong(q, "a value, but the key was never set");
    if (1 + used + (uint32_t)n + 2 > len)
        return 0;
    kvc_value(q->key, q->version);
    if ((uint32_t)n != kvc.vbytes || memcmp(p + 1 + used, kvc_val, kvc.vbytes) || p[1 + used + n] != '\r')
        kvc_wrong(q, "not the value of the last SET");
    kvc.hits++;
    return 1 + used + (uint32_t)n + 2;
}

/* Check the reply at p[0..len) against the oldest request; its length, 0 if not all there. */
static uint32_t kvc_check_one(const struct kvc_pending *q, const uint8_t *p, uint32_t len)
{
    if (p[0] == '-')
        kvc_wrong(q, "an error");
    if (!q->set)
        return kvc_check_get(q, p, len);
    if (len < 5)
        return 0;
    if (memcmp(p, "+OK\r\n", 5))
        kvc_wrong(q, "not +OK");
    return 5;
}

/* Take the reply at p[0..len) if it is all there: check it against the oldest request, note
 * its latency and retire the request; its length, 0 if it is not all there (or nothing is
 * outstanding). */
static uint32_t kvc_take(const uint8_t *p, uint32_t len)
{
    if (!kvc.outstanding || !len)
        return 0;
    struct kvc_pending *q = &kvc_fifo[kvc.head];
    uint32_t n = kvc_check_one(q, p, len);
    if (!n)
        return 0;
    kvc_lat[kvc.answered++] = (uint32_t)(read_mcycle() - q->sent);
    q->set ? kvc.sets++ : kvc.gets++;
    kvc.head = (kvc.head + 1) % KV_MAX_DEPTH, kvc.outstanding--;
    return n;
}

static void kvc_sort(uint32_t *a, uint32_t n)
{
    for (uint32_t gap = n / 2; gap; gap = gap == 2 ? 1 : gap * 5 / 11) /* Shell sort */
        for (uint32_t i = gap; i < n; i++) {
            uint32_t v = a[i], j = i;
            for (; j >= gap && a[j - gap] > v; j -= gap)
                a[j] = a[j - gap];
            a[j] = v;
        }
}

/* The client's line, `kvc: node=N requests=R gets=G hits=H sets=S cycles=C p50=A p99=B
 * max=M`: each request's latency in cycles, p50 and p99 by nearest rank. */
static void kvc_report(uint32_t total, uint64_t cycles)
{
    uint32_t *lat = kvc_lat;
    kvc_sort(lat, total);
    printf("kvc: node=%u requests=%u gets=%lu hits=%lu sets=%lu cycles=%lu p50=%u p99=%u max=%u\n", kvc.node,
           total, (unsigned long)kvc.gets, (unsigned long)kvc.hits, (unsigned long)kvc.sets, (unsigned long)cycles,
           lat[(total - 1) / 2], lat[(total * 99 + 99) / 100 - 1], lat[total - 1]);
}

#endif /* KV_CLIENT_H */
