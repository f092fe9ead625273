/*
 * kv_server.h - the store and the request execution of the key-value servers (tcp_kv.c over
 * the C TCP, rdma_kv.c over the RDMA NIC; docs/apps/tcp-workloads.md), one definition so
 * that every stack serves the same store and answers the same bytes: GET and SET in RESP
 * (tcp_kv.h), a hash table with open addressing (linear probing, FNV-1a) of KV_SLOTS
 * slots; a full table answers SET with an error. Written against the platform only.
 *
 * `kv.lose_set` is the test hook the clients' checks must catch: from the KV_LOST_SET-th SET
 * on, a SET answers +OK but stores nothing.
 */
#ifndef KV_SERVER_H
#define KV_SERVER_H

#include "nanopu.h"
#include "tcp_kv.h"

#define KV_SLOTS 8192
#define KV_LOST_SET 100

/* Stop with exit code 2, printing why (our clients sent it: a bug). */
#define KV_FAIL(...) (printf(__VA_ARGS__), nanopu_exit(2))

struct kv_slot {
    uint8_t klen;
    uint16_t vlen;
    uint8_t key[KV_KEY_MAX];
    uint8_t val[KV_VAL_MAX];
};

static struct kv_slot kv_table[KV_SLOTS];
static struct {
    uint64_t requests, gets, hits, sets, errors;
    int lose_set;
} kv;

/* Replies are appended at out[*len] (room for KV_REPLY_MAX bytes is the caller's). */
struct kv_out {
    uint8_t *buf;
    uint32_t *len;
};

/* FNV-1a, 32-bit (Fowler, Noll, Vo; the IETF draft's offset basis and prime). */
static uint32_t kv_hash(const uint8_t *k, uint32_t n)
{
    uint32_t h = 2166136261u;
    while (n--)
        h = (h ^ *k++) * 16777619u;
    return h;
}

/* The slot holding key k, or the empty slot where it would go (0 if the table is full). */
static struct kv_slot *kv_lookup(const uint8_t *k, uint32_t n)
{
    uint32_t i = kv_hash(k, n) % KV_SLOTS;
    for (uint32_t probes = 0; probes < KV_SLOTS; probes++, i = (i + 1) % KV_SLOTS) {
        struct kv_slot *s = &kv_table[i];
        if (s->klen == 0 || (s->klen == n && memcmp(s->key, k, n) == 0))
            return s;
    }
    return 0;
}

static void kv_reply(struct kv_out o, const void *p, uint32_t n)
{
    memcpy(o.buf + *o.len, p, n);
    *o.len += n;
}

static void kv_do_get(struct kv_out o, const uint8_t *k, uint32_t kn)
{
    struct kv_slot *s = kv_lookup(k, kn);
    kv.gets++;
    if (!s || s->klen == 0) {
        kv_reply(o, "$-1\r\n", 5);
        return;
    }
    kv.hits++;
    o.buf[(*o.len)++] = '$';
    *o.len += kv_put_dec(o.buf + *o.len, s->vlen);
    kv_reply(o, "\r\n", 2);
    kv_reply(o, s->val, s->vlen);
    kv_reply(o, "\r\n", 2);
}

static void kv_do_set(struct kv_out o, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn)
{
    struct kv_slot *s = kv_lookup(k, kn);
    if (!s) {
        kv.errors++;
        kv_reply(o, "-ERR store full\r\n", 17);
        return;
    }
    if (++kv.sets < KV_LOST_SET || !kv.lose_set) {
        s->klen = (uint8_t)kn;
        s->vlen = (uint16_t)vn;
        memcpy(s->key, k, kn);
        memcpy(s->val, v, vn);
    }
    kv_reply(o, "+OK\r\n", 5);
}

/* Parse one bulk string at p[0..len): its bytes in *s, *n; the bytes used, 0 if not all
 * there yet, -1 if malformed or too long. */
static int kv_bulk(const uint8_t *p, uint32_t len, uint32_t max, const uint8_t **s, uint32_t *n)
{
    uint32_t used;
    if (len < 1)
        return 0;
    int64_t l = p[0] == '$' ? kv_get_dec(p + 1, len - 1, &used) : -2;
    if (l < 0 || l > max)
        return -1;
    if (!used || 1 + used + (uint32_t)l + 2 > len)
        return 0;
    if (p[1 + used + l] != '\r' || p[2 + used + l] != '\n')
        return -1;
    *s = p + 1 + used, *n = (uint32_t)l;
    return (int)(1 + used + l + 2);
}

/* Execute the request at p[0..len) from client `who` (named in errors), appending its
 * reply to `o`; the bytes it took, 0 if it is not all there. A malformed request stops
 * the server (the clients are ours: a bug). */
static uint32_t kv_execute(const uint8_t *p, uint32_t len, struct kv_out o, int who)
{
    const uint8_t *arg[3];
    uint32_t n[3], used, at;
    int64_t argc = p[0] == '*' ? kv_get_dec(p + 1, len - 1, &used) : -2;
    if (argc == 0 && used == 0)
        return 0;
    if (argc < 2 || argc > 3)
        KV_FAIL("kv: a request that is not an array of 2 or 3 bulk strings (client %d)\n", who);
    at = 1 + used;
    for (int i = 0; i < argc; i++) {
        int r = kv_bulk(p + at, len - at, i ? KV_VAL_MAX : 8, &arg[i], &n[i]);
        if (r < 0 || (i == 1 && n[1] > KV_KEY_MAX))
            KV_FAIL("kv: malformed bulk string %d of a request (client %d)\n", i, who);
        if (r == 0)
            return 0;
        at += (uint32_t)r;
    }
    kv.requests++;
    if (argc == 2 && n[0] == 3 && memcmp(arg[0], "GET", 3) == 0)
        kv_do_get(o, arg[1], n[1]);
    else if (argc == 3 && n[0] == 3 && memcmp(arg[0], "SET", 3) == 0)
        kv_do_set(o, arg[1], n[1], arg[2], n[2]);
    else
        kv.errors++, kv_reply(o, "-ERR unknown command\r\n", 22);
    return at;
}

/* The server's line: `kv: requests=R gets=G hits=H sets=S errors=E cycles=C`. */
static void kv_report(uint64_t cycles)
{
    printf("kv: requests=%lu gets=%lu hits=%lu sets=%lu errors=%lu cycles=%lu\n", (unsigned long)kv.requests,
           (unsigned long)kv.gets, (unsigned long)kv.hits, (unsigned long)kv.sets, (unsigned long)kv.errors,
           (unsigned long)cycles);
}

#endif /* KV_SERVER_H */
