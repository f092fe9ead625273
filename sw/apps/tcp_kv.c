/*
 * tcp_kv.c - a Redis-like key-value server over the C TCP (issue 36's key-value workload;
 * docs/apps/tcp-workloads.md): GET and SET in RESP (tcp_kv.h), any number of pipelined
 * requests per connection, answered in order. Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP): PORT CLIENTS [loseset]. It accepts CLIENTS
 * connections, serves them until each has closed, then prints `kv: requests=R gets=G
 * hits=H sets=S errors=E cycles=C` and the stack's counters, and exits with 0.
 * `loseset` is the test hook the clients' checks must catch: from the 100th SET on, a SET
 * answers +OK but stores nothing.
 *
 * The store is a hash table with open addressing (linear probing, FNV-1a) of KV_SLOTS
 * slots; a full table answers SET with an error.
 */
#include "tcp_app.h"
#include "tcp_kv.h"

#define MAX_CLIENTS 16
#define KV_SLOTS 8192
#define IN_BYTES 4096  /* a connection's unparsed requests: more than the largest request */
#define OUT_BYTES 16384 /* its replies not yet taken by the TCP */
#define LOST_SET 100

struct slot {
    uint8_t klen;
    uint16_t vlen;
    uint8_t key[KV_KEY_MAX];
    uint8_t val[KV_VAL_MAX];
};

struct conn {
    int fd, eof, closed;
    uint32_t in_len, out_len;
    uint8_t in[IN_BYTES];
    uint8_t out[OUT_BYTES];
};

static struct slot table[KV_SLOTS];
static struct conn conns[MAX_CLIENTS];
static uint64_t requests, gets, hits, sets, errors;
static int lose_set;

/* FNV-1a, 32-bit (Fowler, Noll, Vo; the IETF draft's offset basis and prime). */
static uint32_t hash(const uint8_t *k, uint32_t n)
{
    uint32_t h = 2166136261u;
    while (n--)
        h = (h ^ *k++) * 16777619u;
    return h;
}

/* The slot holding key k, or the empty slot where it would go (0 if the table is full). */
static struct slot *lookup(const uint8_t *k, uint32_t n)
{
    uint32_t i = hash(k, n) % KV_SLOTS;
    for (uint32_t probes = 0; probes < KV_SLOTS; probes++, i = (i + 1) % KV_SLOTS) {
        struct slot *s = &table[i];
        if (s->klen == 0 || (s->klen == n && memcmp(s->key, k, n) == 0))
            return s;
    }
    return 0;
}

static void reply(struct conn *c, const void *p, uint32_t n)
{
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

static void do_get(struct conn *c, const uint8_t *k, uint32_t kn)
{
    struct slot *s = lookup(k, kn);
    gets++;
    if (!s || s->klen == 0) {
        reply(c, "$-1\r\n", 5);
        return;
    }
    hits++;
    c->out[c->out_len++] = '$';
    c->out_len += kv_put_dec(c->out + c->out_len, s->vlen);
    reply(c, "\r\n", 2);
    reply(c, s->val, s->vlen);
    reply(c, "\r\n", 2);
}

static void do_set(struct conn *c, const uint8_t *k, uint32_t kn, const uint8_t *v, uint32_t vn)
{
    struct slot *s = lookup(k, kn);
    if (!s) {
        errors++;
        reply(c, "-ERR store full\r\n", 17);
        return;
    }
    if (++sets < LOST_SET || !lose_set) {
        s->klen = (uint8_t)kn;
        s->vlen = (uint16_t)vn;
        memcpy(s->key, k, kn);
        memcpy(s->val, v, vn);
    }
    reply(c, "+OK\r\n", 5);
}

/* Parse one bulk string at p[0..len): its bytes in *s, *n; the bytes used, 0 if not all
 * there yet, -1 if malformed or too long. */
static int bulk(const uint8_t *p, uint32_t len, uint32_t max, const uint8_t **s, uint32_t *n)
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

/* Execute the request at p[0..len) for connection c; the bytes it took, 0 if it is not
 * all there. A malformed request stops the server (the clients are ours: a bug). */
static uint32_t execute(struct conn *c, const uint8_t *p, uint32_t len)
{
    const uint8_t *arg[3];
    uint32_t n[3], used, at;
    int64_t argc = p[0] == '*' ? kv_get_dec(p + 1, len - 1, &used) : -2;
    if (argc == 0 && used == 0)
        return 0;
    if (argc < 2 || argc > 3)
        TAPP_FAIL("tcp_kv: a request that is not an array of 2 or 3 bulk strings (fd %d)\n", c->fd);
    at = 1 + used;
    for (int i = 0; i < argc; i++) {
        int r = bulk(p + at, len - at, i ? KV_VAL_MAX : 8, &arg[i], &n[i]);
        if (r < 0 || (i == 1 && n[1] > KV_KEY_MAX))
            TAPP_FAIL("tcp_kv: malformed bulk string %d of a request (fd %d)\n", i, c->fd);
        if (r == 0)
            return 0;
        at += (uint32_t)r;
    }
    requests++;
    if (argc == 2 && n[0] == 3 && memcmp(arg[0], "GET", 3) == 0)
        do_get(c, arg[1], n[1]);
    else if (argc == 3 && n[0] == 3 && memcmp(arg[0], "SET", 3) == 0)
        do_set(c, arg[1], n[1], arg[2], n[2]);
    else
        errors++, reply(c, "-ERR unknown command\r\n", 22);
    return at;
}

/* Execute every whole request buffered, while the largest reply still fits. */
static void serve(struct conn *c)
{
    uint32_t at = 0, r;
    while (at < c->in_len && OUT_BYTES - c->out_len >= KV_VAL_MAX + 32 &&
           (r = execute(c, c->in + at, c->in_len - at)) != 0)
        at += r;
    memmove(c->in, c->in + at, c->in_len - at);
    c->in_len -= at;
}

/* Hand the TCP what replies it takes. */
static int flush(struct conn *c)
{
    if (!c->out_len)
        return 0;
    int r = tcp_send(c->fd, c->out, c->out_len);
    if (r < 0)
        TAPP_FAIL("tcp_kv: send failed (%d) on fd %d\n", r, c->fd);
    memmove(c->out, c->out + r, c->out_len - (uint32_t)r);
    c->out_len -= (uint32_t)r;
    return r > 0;
}

/* Read, execute and answer what connection c has; 1 if anything happened. */
static int step(struct conn *c)
{
    int busy = flush(c), r = 0;
    if (!c->eof && c->in_len < IN_BYTES)
        r = tcp_recv(c->fd, c->in + c->in_len, IN_BYTES - c->in_len);
    if (r == 0 && !c->eof && c->in_len < IN_BYTES)
        c->eof = 1, busy = 1;
    else if (r > 0)
        c->in_len += (uint32_t)r, busy = 1;
    else if (r < 0 && r != TCP_EAGAIN)
        TAPP_FAIL("tcp_kv: receive failed (%d) on fd %d\n", r, c->fd);
    serve(c);
    busy |= flush(c);
    if (c->eof && !c->out_len && !c->in_len && !c->closed)
        c->closed = (tcp_shutdown(c->fd), 1), busy = 1;
    return busy;
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    uint16_t port = (uint16_t)tapp_arg(argc, argv, 3, "port");
    uint32_t clients = (uint32_t)tapp_arg(argc, argv, 4, "clients");
    lose_set = tapp_flag(argc, argv, 5, "loseset");
    if (clients == 0 || clients > MAX_CLIENTS)
        TAPP_FAIL("tcp_kv: clients must be 1..%d, not %u\n", MAX_CLIENTS, clients);
    tapp_init();
    int lfd = tcp_listen(port);
    for (uint32_t i = 0; i < clients; i++)
        conns[i].fd = tcp_accept(lfd);
    uint64_t t0 = tapp_mark();
    for (uint32_t open = clients; open;) {
        int busy = 0;
        open = 0;
        for (uint32_t i = 0; i < clients; i++) {
            busy |= step(&conns[i]);
            open += !conns[i].closed;
        }
        busy ? tcp_poll() : tcp_wait();
    }
    uint64_t cycles = read_mcycle() - t0;
    for (uint32_t i = 0; i < clients; i++)
        tcp_close(conns[i].fd);
    printf("kv: requests=%lu gets=%lu hits=%lu sets=%lu errors=%lu cycles=%lu\n", (unsigned long)requests,
           (unsigned long)gets, (unsigned long)hits, (unsigned long)sets, (unsigned long)errors,
           (unsigned long)cycles);
    tapp_report_tcp(cycles);
    tapp_linger();
    return 0;
}
