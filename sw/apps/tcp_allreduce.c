/*
 * tcp_allreduce.c - ring all-reduce over the C TCP (issue 36's collective workload;
 * docs/apps/tcp-workloads.md): nodes 0..N-1 each hold ELEMS 64-bit integers and end with
 * their element-wise sum (wrapping), as NCCL's ring algorithm computes it: a reduce-scatter
 * of N-1 steps, then an all-gather of N-1 steps, each step moving one of N equal chunks to
 * the next node on the ring over one TCP connection. Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP): HOSTS ELEMS PORT [skipone]; ELEMS a multiple of
 * HOSTS. `skipone` is the test hook the check must catch: rank 0 leaves out the first
 * element it should add.
 * The node's rank is its node index (nanopu_node_index), so the ring is nodes 0..HOSTS-1.
 *
 * Steps, for rank r (chunks indexed mod N): reduce-scatter step s sends chunk r-s and adds
 * the chunk r-s-1 it receives into its own; after N-1 steps rank r holds chunk r+1 reduced.
 * All-gather step s sends chunk r+1-s and stores the chunk r-s it receives. What a step
 * sends is what the previous step received, so the two streams are pipelined element by
 * element (NCCL pipelines by slices of a chunk): the send stream may run at most one chunk
 * ahead of what has been received and reduced.
 *
 * Input element k of rank h is tapp_input(h, k), a mix of both, so every rank computes the
 * expected sums itself (after the timed part) and checks every element; a wrong one stops
 * it with exit code 2. It prints `allreduce: rank=R hosts=N elems=E cycles=C` (cycles from
 * both ring connections being open to the last element received) and the stack's counters.
 */
#include "tcp_app.h"

#define MAX_ELEMS (1u << 20) /* 8 MiB of data per node */
#define RECV_CHUNK 2048

static uint64_t data[MAX_ELEMS] __attribute__((aligned(64)));
static uint8_t rx[RECV_CHUNK + 8] __attribute__((aligned(64)));
static uint32_t hosts, rank, elems, chunk_elems;
static int skip_one;

/* SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014): a well-mixed input. */
static uint64_t tapp_input(uint32_t h, uint32_t k)
{
    uint64_t z = ((uint64_t)h << 32 | k) + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t mod(int64_t x) { return (uint32_t)(((x % hosts) + hosts) % hosts); }

/* The chunk step `s` of the whole run (0 .. 2(N-1)-1) sends and receives: reduce-scatter
 * steps first, then all-gather steps (numbered again from 0 in the comment above). */
static uint32_t send_chunk(uint32_t s)
{
    int64_t r = rank, rs = s < hosts - 1;
    return rs ? mod(r - s) : mod(r + 1 - (s - (hosts - 1)));
}

static uint32_t recv_chunk(uint32_t s)
{
    int64_t r = rank, rs = s < hosts - 1;
    return rs ? mod(r - s - 1) : mod(r - (s - (hosts - 1)));
}

/* `n` elements `v` of the receive stream from element `e` on, all within one step: added
 * into their chunk in the reduce-scatter, stored into it in the all-gather. */
static void take(uint64_t e, const uint64_t *v, uint32_t n)
{
    uint32_t s = (uint32_t)(e / chunk_elems);
    uint64_t *d = &data[(uint64_t)recv_chunk(s) * chunk_elems + e % chunk_elems];
    if (s < hosts - 1)
        for (uint32_t i = skip_one && rank == 0 && e == 0; i < n; i++)
            d[i] += v[i];
    else
        for (uint32_t i = 0; i < n; i++)
            d[i] = v[i];
}

/* Take `n` whole elements from element `e` on, split where a step ends. */
static void take_all(uint64_t e, const uint64_t *v, uint32_t n)
{
    while (n) {
        uint32_t in_step = chunk_elems - (uint32_t)(e % chunk_elems), k = n < in_step ? n : in_step;
        take(e, v, k);
        e += k, v += k, n -= k;
    }
}

/* Send what the pipeline allows: up to one chunk beyond what was received. */
static void send_some(int fd, uint64_t *sent, uint64_t total, uint64_t rcvd)
{
    uint64_t cb = (uint64_t)chunk_elems * 8, limit = rcvd + cb < total ? rcvd + cb : total;
    while (*sent < limit) {
        uint64_t s = *sent / cb, off = *sent % cb, n = cb - off < limit - *sent ? cb - off : limit - *sent;
        const uint8_t *p = (const uint8_t *)&data[(uint64_t)send_chunk((uint32_t)s) * chunk_elems] + off;
        int r = tcp_send(fd, p, (uint32_t)n);
        if (r < 0)
            TAPP_FAIL("allreduce: rank %u: send failed (%d)\n", rank, r);
        if (r == 0)
            return;
        *sent += (uint64_t)r;
    }
}

/* Receive what is there and reduce the whole elements; 1 if anything arrived. */
static int recv_some(int fd, uint64_t *rcvd, uint32_t *partial)
{
    int r = tcp_recv(fd, rx + *partial, RECV_CHUNK);
    if (r == TCP_EAGAIN)
        return 0;
    if (r <= 0)
        TAPP_FAIL("allreduce: rank %u: receive failed (%d) after %lu bytes\n", rank, r, (unsigned long)*rcvd);
    uint32_t have = *partial + (uint32_t)r, whole = have & ~7u;
    take_all(*rcvd / 8, (const uint64_t *)rx, whole / 8);
    *rcvd += whole;
    memmove(rx, rx + whole, have - whole);
    *partial = have - whole;
    return 1;
}

static void ring(int next, int prev)
{
    uint64_t total = 2ull * (hosts - 1) * chunk_elems * 8, sent = 0, rcvd = 0;
    uint32_t partial = 0;
    while (rcvd < total || sent < total) {
        send_some(next, &sent, total, rcvd);
        int busy = rcvd < total && recv_some(prev, &rcvd, &partial);
        busy ? tcp_poll() : tcp_wait();
    }
}

static void check(void)
{
    for (uint32_t k = 0; k < elems; k++) {
        uint64_t want = 0;
        for (uint32_t h = 0; h < hosts; h++)
            want += tapp_input(h, k);
        if (data[k] != want)
            TAPP_FAIL("allreduce: rank %u: element %u is %lx, not %lx\n", rank, k, (unsigned long)data[k],
                      (unsigned long)want);
    }
}

/* Close the ring: our FIN to the next rank, the previous rank's FIN read, our FIN to it;
 * only then wait for the closes, since each waits on a neighbour's FIN (tcp_close). */
static void finish(int next, int prev)
{
    int r;
    tcp_shutdown(next);
    while ((r = tcp_recv(prev, rx, RECV_CHUNK)) == TCP_EAGAIN)
        tcp_wait();
    if (r != 0)
        TAPP_FAIL("allreduce: rank %u: %d more bytes or an error after the last step\n", rank, r);
    tcp_shutdown(prev);
    if (tcp_close(next) < 0 || tcp_close(prev) < 0)
        TAPP_FAIL("allreduce: rank %u: a ring connection did not close cleanly\n", rank);
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    hosts = (uint32_t)tapp_arg(argc, argv, 3, "hosts");
    elems = (uint32_t)tapp_arg(argc, argv, 4, "elems");
    uint16_t port = (uint16_t)tapp_arg(argc, argv, 5, "port");
    rank = (uint32_t)nanopu_node_index();
    skip_one = tapp_flag(argc, argv, 6, "skipone");
    if (hosts < 2 || rank >= hosts || elems == 0 || elems % hosts || elems > MAX_ELEMS)
        TAPP_FAIL("allreduce: needs 2 or more hosts, this node's rank %u below them, and 1..%u "
                  "elements a multiple of the hosts (hosts %u, elems %u)\n", rank, MAX_ELEMS, hosts, elems);
    chunk_elems = elems / hosts;
    for (uint32_t k = 0; k < elems; k++)
        data[k] = tapp_input(rank, k);
    tapp_init();
    int lfd = tcp_listen(port);
    int next = tapp_connect(nanopu_ip_of_node((rank + 1) % hosts), port);
    int prev = tcp_accept(lfd);
    uint64_t t0 = tapp_mark();
    ring(next, prev);
    uint64_t cycles = read_mcycle() - t0;
    finish(next, prev);
    check();
    printf("allreduce: rank=%u hosts=%u elems=%u cycles=%lu\n", rank, hosts, elems, (unsigned long)cycles);
    tapp_report_tcp(cycles);
    tapp_linger();
    return 0;
}
