/*
 * tcp_kv_client.c - a pipelined client of tcp_kv.c (docs/apps/tcp-workloads.md) that
 * checks every reply against its own model of the store. Hart 0 runs it.
 *
 * Arguments (after program, MAC and IP):
 *   connect:IP PORT DEPTH REQUESTS KEYS VALUE_BYTES GET_PCT
 * It keeps DEPTH requests outstanding on one connection (a sliding window: a new request
 * goes out as each reply comes back) until REQUESTS have been answered. Each request is a
 * GET (with probability GET_PCT %) or a SET of one of KEYS keys, drawn from a generator
 * seeded with the node's index. Keys are `k:NODE:I`, so clients on different nodes share
 * no key and each client's model is the whole truth about its keys: the server answers a
 * connection's requests in order, so a GET must return the value of the last SET of that
 * key issued before it (VALUE_BYTES bytes of tapp_pattern, seeded by node, key and the
 * SET's number), or the null bulk string if there was none, and a SET must answer +OK.
 * Any other reply stops the client with exit code 2, naming the request.
 *
 * It prints `kvc: node=N requests=R gets=G hits=H sets=S cycles=C p50=A p99=B max=M`:
 * cycles from connected to the last reply, and each request's latency (from the request
 * being written into the client's send buffer to its whole reply parsed) in cycles.
 */
#include "tcp_app.h"
#include "tcp_kv.h"

#define MAX_DEPTH 256
#define MAX_KEYS 4096
#define MAX_REQUESTS 65536
#define TX_BYTES 16384
#define RX_BYTES 4096
#define REQ_MAX (KV_KEY_MAX + KV_VAL_MAX + 64)

struct pending {
    uint8_t set;
    uint32_t key, version; /* a GET: the version the reply must carry (0: none) */
    uint64_t sent;
};

static uint32_t version[MAX_KEYS];
static struct pending fifo[MAX_DEPTH];
static uint32_t lat[MAX_REQUESTS];
static uint8_t tx[TX_BYTES], rx[RX_BYTES], val[KV_VAL_MAX];
static uint32_t tx_len, rx_len, head, outstanding, node, vbytes;
static uint64_t rng, gets, hits, sets, answered;

static uint64_t next_rand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; /* xorshift64 (Marsaglia 2003) */
    return rng;
}

static uint32_t value_seed(uint32_t key, uint32_t v) { return (node * MAX_KEYS + key) * 65537u + v; }

static uint32_t put(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    memcpy(p, s, n);
    return n;
}

/* `$LEN\r\nBYTES\r\n` at p; its length. */
static uint32_t put_bulk(uint8_t *p, const uint8_t *s, uint32_t n)
{
    uint32_t at = 1;
    p[0] = '$';
    at += kv_put_dec(p + at, n);
    at += put(p + at, "\r\n");
    memcpy(p + at, s, n);
    return at + n + put(p + at + n, "\r\n");
}

/* The key's text, k:NODE:I, at p; its length. */
static uint32_t key_text(uint8_t *p, uint32_t key)
{
    uint32_t at = put(p, "k:");
    at += kv_put_dec(p + at, node);
    p[at++] = ':';
    return at + kv_put_dec(p + at, key);
}

static void value(uint32_t key, uint32_t v)
{
    for (uint32_t i = 0; i < vbytes; i++)
        val[i] = tapp_pattern(value_seed(key, v), i);
}

/* Write the next request into tx and the model. */
static void issue(uint32_t keys, uint32_t get_pct)
{
    uint8_t k[KV_KEY_MAX];
    struct pending *q = &fifo[(head + outstanding++) % MAX_DEPTH];
    q->key = (uint32_t)(next_rand() % keys);
    q->set = next_rand() % 100 >= get_pct;
    uint32_t kn = key_text(k, q->key);
    if (q->set) {
        q->version = ++version[q->key];
        value(q->key, q->version);
        tx_len += put(tx + tx_len, "*3\r\n$3\r\nSET\r\n");
        tx_len += put_bulk(tx + tx_len, k, kn);
        tx_len += put_bulk(tx + tx_len, val, vbytes);
    } else {
        q->version = version[q->key];
        tx_len += put(tx + tx_len, "*2\r\n$3\r\nGET\r\n");
        tx_len += put_bulk(tx + tx_len, k, kn);
    }
    q->sent = read_mcycle();
}

static void wrong(const struct pending *q, const char *why)
{
    TAPP_FAIL("tcp_kv_client: node %u: reply %lu (%s of key %u, model version %u): %s\n", node,
              (unsigned long)answered, q->set ? "SET" : "GET", q->key, q->version, why);
}

/* Check a GET's reply at p[0..len); its length, 0 if not all there. */
static uint32_t check_get(const struct pending *q, const uint8_t *p, uint32_t len)
{
    uint32_t used;
    int64_t n = p[0] == '$' ? kv_get_dec(p + 1, len - 1, &used) : -2;
    if (n == -2)
        wrong(q, "not a bulk string");
    if (n == 0 && !used)
        return 0;
    if (n == -1) {
        if (q->version)
            wrong(q, "null, but the key was set");
        return 1 + used;
    }
    if (!q->version)
        wrong(q, "a value, but the key was never set");
    if (1 + used + (uint32_t)n + 2 > len)
        return 0;
    value(q->key, q->version);
    if ((uint32_t)n != vbytes || memcmp(p + 1 + used, val, vbytes) || p[1 + used + n] != '\r')
        wrong(q, "not the value of the last SET");
    hits++;
    return 1 + used + (uint32_t)n + 2;
}

/* Check the reply at p[0..len) against the oldest request; its length, 0 if not all there. */
static uint32_t check_reply(const struct pending *q, const uint8_t *p, uint32_t len)
{
    if (p[0] == '-')
        wrong(q, "an error");
    if (!q->set)
        return check_get(q, p, len);
    if (len < 5)
        return 0;
    if (memcmp(p, "+OK\r\n", 5))
        wrong(q, "not +OK");
    return 5;
}

/* Take every whole reply received. */
static void replies(void)
{
    uint32_t at = 0, n;
    while (outstanding && at < rx_len && (n = check_reply(&fifo[head], rx + at, rx_len - at)) != 0) {
        struct pending *q = &fifo[head];
        at += n;
        lat[answered++] = (uint32_t)(read_mcycle() - q->sent);
        q->set ? sets++ : gets++;
        head = (head + 1) % MAX_DEPTH, outstanding--;
    }
    if (at < rx_len && !outstanding)
        TAPP_FAIL("tcp_kv_client: node %u: a reply to no request\n", node);
    memmove(rx, rx + at, rx_len - at);
    rx_len -= at;
}

static void sort(uint32_t *a, uint32_t n)
{
    for (uint32_t gap = n / 2; gap; gap = gap == 2 ? 1 : gap * 5 / 11) /* Shell sort */
        for (uint32_t i = gap; i < n; i++) {
            uint32_t v = a[i], j = i;
            for (; j >= gap && a[j - gap] > v; j -= gap)
                a[j] = a[j - gap];
            a[j] = v;
        }
}

static void run(int fd, uint32_t depth, uint32_t total, uint32_t keys, uint32_t get_pct)
{
    uint32_t issued = 0;
    while (answered < total) {
        while (issued < total && outstanding < depth && tx_len + REQ_MAX <= TX_BYTES)
            issue(keys, get_pct), issued++;
        int r = tx_len ? tcp_send(fd, tx, tx_len) : 0, busy = r > 0;
        if (r < 0)
            TAPP_FAIL("tcp_kv_client: node %u: send failed (%d)\n", node, r);
        memmove(tx, tx + r, tx_len - (uint32_t)r);
        tx_len -= (uint32_t)r;
        r = tcp_recv(fd, rx + rx_len, RX_BYTES - rx_len);
        if (r == 0 || (r < 0 && r != TCP_EAGAIN))
            TAPP_FAIL("tcp_kv_client: node %u: the connection ended (%d) after %lu replies\n", node, r,
                      (unsigned long)answered);
        if (r > 0)
            rx_len += (uint32_t)r, busy = 1, replies();
        busy ? tcp_poll() : tcp_wait();
    }
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    const char *ip = argc > 3 ? tapp_after(argv[3], "connect:") : 0;
    uint16_t port = (uint16_t)tapp_arg(argc, argv, 4, "port");
    uint32_t depth = (uint32_t)tapp_arg(argc, argv, 5, "depth");
    uint32_t total = (uint32_t)tapp_arg(argc, argv, 6, "requests");
    uint32_t keys = (uint32_t)tapp_arg(argc, argv, 7, "keys");
    vbytes = (uint32_t)tapp_arg(argc, argv, 8, "value_bytes");
    uint32_t get_pct = (uint32_t)tapp_arg(argc, argv, 9, "get_pct");
    if (!ip || !depth || depth > MAX_DEPTH || !total || total > MAX_REQUESTS || !keys || keys > MAX_KEYS ||
        !vbytes || vbytes > KV_VAL_MAX || get_pct > 100)
        TAPP_FAIL("usage: tcp_kv_client connect:IP PORT DEPTH(1..%d) REQUESTS(1..%d) KEYS(1..%d) "
                  "VALUE_BYTES(1..%d) GET_PCT(0..100)\n", MAX_DEPTH, MAX_REQUESTS, MAX_KEYS, KV_VAL_MAX);
    node = (uint32_t)nanopu_node_index();
    rng = 0x9e3779b97f4a7c15ull * (node + 1);
    tapp_init();
    int fd = tapp_connect((uint32_t)tapp_number(ip, "connect:IP"), port);
    uint64_t t0 = tapp_mark();
    run(fd, depth, total, keys, get_pct);
    uint64_t cycles = read_mcycle() - t0;
    if (tcp_close(fd) < 0)
        TAPP_FAIL("tcp_kv_client: node %u: the connection did not close cleanly\n", node);
    sort(lat, total);
    printf("kvc: node=%u requests=%u gets=%lu hits=%lu sets=%lu cycles=%lu p50=%u p99=%u max=%u\n", node,
           total, (unsigned long)gets, (unsigned long)hits, (unsigned long)sets, (unsigned long)cycles,
           lat[(total - 1) / 2], lat[(total * 99 + 99) / 100 - 1], lat[total - 1]);
    tapp_report_tcp(cycles);
    tapp_linger();
    return 0;
}
