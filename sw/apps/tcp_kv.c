/*
 * tcp_kv.c - a Redis-like key-value server over the C TCP (issue 36's key-value workload;
 * docs/apps/tcp-workloads.md): GET and SET in RESP (tcp_kv.h), any number of pipelined
 * requests per connection, answered in order. Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP): PORT CLIENTS [loseset]. It accepts CLIENTS
 * connections, serves them until each has closed, then prints `kv: requests=R gets=G
 * hits=H sets=S errors=E cycles=C` and the stack's counters, and exits with 0.
 * `loseset` is the test hook the clients' checks must catch: from the 100th SET on, a SET
 * answers +OK but stores nothing. The store and the execution of requests are
 * kv_server.h's, shared with rdma_kv.c.
 */
#include "tcp_app.h"
#include "kv_server.h"

#define MAX_CLIENTS 16
#define IN_BYTES 4096  /* a connection's unparsed requests: more than the largest request */
#define OUT_BYTES 16384 /* its replies not yet taken by the TCP */

struct conn {
    int fd, eof, closed;
    uint32_t in_len, out_len;
    uint8_t in[IN_BYTES];
    uint8_t out[OUT_BYTES];
};

static struct conn conns[MAX_CLIENTS];

/* Execute every whole request buffered, while the largest reply still fits. */
static void serve(struct conn *c)
{
    uint32_t at = 0, r;
    struct kv_out o = {c->out, &c->out_len};
    while (at < c->in_len && OUT_BYTES - c->out_len >= KV_REPLY_MAX &&
           (r = kv_execute(c->in + at, c->in_len - at, o, c->fd)) != 0)
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
    kv.lose_set = tapp_flag(argc, argv, 5, "loseset");
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
    kv_report(cycles);
    tapp_report_tcp(cycles);
    tapp_linger();
    return 0;
}
