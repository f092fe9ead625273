/*
 * rdma_allreduce.c - ring all-reduce over the RDMA NIC (nic = "rdma"; sw/include/rdmanic.h,
 * docs/models/rdma-nic.md; docs/apps/tcp-workloads.md): tcp_allreduce.c's collective with
 * the NIC's reliable connections instead of TCP. Nodes 0..N-1 each hold ELEMS 64-bit
 * integers and end with their element-wise sum (wrapping): a reduce-scatter of N-1 steps,
 * then an all-gather of N-1 steps, each step moving one of N equal chunks to the next node.
 * Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP): HOSTS ELEMS [skipone]; ELEMS a multiple of HOSTS.
 * `skipone` is the test hook the check must catch: rank 0 leaves out the first element it
 * should add. The rank is the node index, as in tcp_allreduce.c, with the same chunk order.
 *
 * Transport: QP 0 is connected to the next rank's QP 1, QP 1 to the previous rank's QP 0.
 * Each chunk moves as SLICES messages (RDMA SENDs; NCCL likewise pipelines a step's chunk in
 * slices), so a rank forwards the first slice of a step as soon as it has reduced it. A SEND
 * lands in the receiver's oldest posted RECV, and RC delivers a QP's messages once and in
 * order, so every rank posts, before the run, one RECV per message it will receive, each at
 * the place that message belongs: reduce-scatter messages into `stage` (then added into
 * `data`), all-gather messages straight into `result` (zero copy, nothing to add). Every
 * byte of `stage` and `result` is written once by the network; `data` only by its own core;
 * so no buffer is overwritten while the NIC may still read it for a retransmission.
 * The last reduce-scatter step writes its sums into `result`, whose chunk r+1 the all-gather
 * sends first.
 *
 * Before sending, a rank waits for READY from the next rank (sent once that rank's RECVs are
 * posted), so no message meets an empty receive queue (RNR). The timed part runs from READY
 * to the last message received and every send completed; idle_cycles (asleep in wfi) count
 * from READY too. Then every element of `result` is
 * checked against the sums of tapp_input (allreduce_input.h); a wrong one stops the program
 * with exit code 2. It prints `allreduce: rank=R hosts=N elems=E cycles=C` and
 * `rdma: cycles=C idle_cycles=I wrs=W completions=K bytes_in=B bytes_out=B`.
 */
#include "allreduce_input.h"
#include "nanopu.h"
#include "rdma_app.h"

#define MAX_ELEMS (1u << 19) /* 4 MiB per array per node */
#define MAX_HOSTS 64
/* Messages a chunk is cut into (a choice: NCCL's ring moves a chunk through its buffer in
 * NCCL_STEPS = 8 slots). Fewer when a chunk has fewer elements. */
#define SLICES 8
#define QP_NEXT 0
#define QP_PREV 1
#define KEY_DATA 1
#define KEY_STAGE 2
#define KEY_RESULT 3
#define KEY_CTL 4
#define READY 0x52454144u

static uint64_t data[MAX_ELEMS] __attribute__((aligned(4096)));
static uint64_t stage[MAX_ELEMS] __attribute__((aligned(4096)));
static uint64_t result[MAX_ELEMS] __attribute__((aligned(4096)));
static uint64_t ctl_rx, ctl_tx;
static uint32_t hosts, rank, elems, chunk_elems, slice_elems, per_chunk, units;
static int skip_one;

static struct {
    uint64_t wrs, bytes_in, bytes_out;
} st;
static struct rdma_app_counts cq; /* completions taken, cycles asleep waiting */

static void fail(const char *what, uint64_t a, uint64_t b)
{
    printf("allreduce: rank %u: %s (%lu, %lu)\n", rank, what, (unsigned long)a, (unsigned long)b);
    nanopu_exit(2);
}

static uint32_t number(const char *text)
{
    uint32_t v = 0;
    for (const char *p = text; *p || p == text; p++) {
        if (*p < '0' || *p > '9')
            fail("an argument is not a number", 0, 0);
        v = v * 10 + (uint32_t)(*p - '0');
    }
    return v;
}

static uint32_t mod(int64_t x) { return (uint32_t)(((x % hosts) + hosts) % hosts); }

/* The chunks step s (0 .. 2(N-1)-1, reduce-scatter first) sends and receives, as in
 * tcp_allreduce.c: what step s sends is what step s-1 received. */
static uint32_t send_chunk(uint32_t s)
{
    return s < hosts - 1 ? mod((int64_t)rank - s) : mod((int64_t)rank + 1 - (s - (hosts - 1)));
}

static uint32_t recv_chunk(uint32_t s)
{
    return s < hosts - 1 ? mod((int64_t)rank - s - 1) : mod((int64_t)rank - (s - (hosts - 1)));
}

/* Message u is slice u mod per_chunk of step u / per_chunk: its first element in a chunk. */
static uint32_t unit_first(uint32_t u, uint32_t chunk) { return chunk * chunk_elems + (u % per_chunk) * slice_elems; }

static uint32_t unit_len(uint32_t u)
{
    uint32_t off = (u % per_chunk) * slice_elems, left = chunk_elems - off;
    return left < slice_elems ? left : slice_elems;
}

static void parse(int argc, char **argv)
{
    if (argc < 5)
        fail("usage: HOSTS ELEMS [skipone]", (uint64_t)argc, 5);
    hosts = number(argv[3]);
    elems = number(argv[4]);
    skip_one = argc > 5 && strcmp(argv[5], "skipone") == 0;
    rank = (uint32_t)nanopu_node_index();
    if (hosts < 2 || hosts > MAX_HOSTS || rank >= hosts || elems == 0 || elems % hosts || elems > MAX_ELEMS)
        fail("needs 2..64 hosts, this rank below them, 1..524288 elements a multiple of hosts (hosts, elems)",
             hosts, elems);
    chunk_elems = elems / hosts;
    slice_elems = (chunk_elems + SLICES - 1) / SLICES;
    per_chunk = (chunk_elems + slice_elems - 1) / slice_elems;
    units = 2 * (hosts - 1) * per_chunk;
}

/* Register the buffers, connect the ring, post READY's and every message's RECV. */
static void setup(void)
{
    rdma_reg_mr(data, sizeof data, KEY_DATA);
    rdma_reg_mr(stage, sizeof stage, KEY_STAGE);
    rdma_reg_mr(result, sizeof result, KEY_RESULT);
    rdma_reg_mr(&ctl_rx, 8, KEY_CTL);
    rdma_reg_mr(&ctl_tx, 8, KEY_CTL + 1);
    rdma_connect(QP_NEXT, QP_PREV, nanopu_ip_of_node((rank + 1) % hosts));
    rdma_connect(QP_PREV, QP_NEXT, nanopu_ip_of_node((rank + hosts - 1) % hosts));
    rdma_post_recv(QP_NEXT, READY, &ctl_rx, 8);
    for (uint32_t u = 0; u < units; u++) {
        uint32_t s = u / per_chunk;
        uint64_t *dst = s < hosts - 1 ? stage : result;
        rdma_post_recv(QP_PREV, u, &dst[unit_first(u, recv_chunk(s))], unit_len(u) * 8);
    }
    st.wrs += units + 1;
}

/* Send message u: a reduce-scatter step's partial sums from `data`, an all-gather step's
 * final sums from `result`. */
static void send_unit(uint32_t u)
{
    uint32_t s = u / per_chunk;
    const uint64_t *src = s < hosts - 1 ? data : result;
    rdma_post_send(QP_NEXT, u, &src[unit_first(u, send_chunk(s))], unit_len(u) * 8);
    st.wrs++, st.bytes_out += unit_len(u) * 8;
}

/* Message u arrived in place: a reduce-scatter slice is added into `data`, or into `result`
 * in the last reduce-scatter step (those sums are final). */
static void take_unit(uint32_t u, uint32_t len)
{
    uint32_t s = u / per_chunk, first = unit_first(u, recv_chunk(s));
    if (len != unit_len(u) * 8)
        fail("a message arrived with the wrong length (message, bytes)", u, len);
    st.bytes_in += len;
    if (s >= hosts - 1)
        return;
    uint64_t *out = s == hosts - 2 ? result : data;
    for (uint32_t i = skip_one && rank == 0 && u == 0; i < unit_len(u); i++)
        out[first + i] = data[first + i] + stage[first + i];
}

/* One completion of the ring: READY from the next rank (sending may start: the clock
 * starts), a message received in place, one of ours sent (READY's own is ~0u). */
static void on_completion(const struct rdma_wc *wc, uint32_t *rcvd, uint32_t *done, uint64_t *t0)
{
    if (wc->opcode == RDMA_OP_RECV && wc->qp == QP_NEXT) {
        if (*t0 || ctl_rx != READY)
            fail("a message from the next rank that is not one READY (value, qp)", ctl_rx, wc->qp);
        *t0 = read_mcycle();
        cq.idle = 0; /* idle_cycles count from READY, as the timed part */
    } else if (wc->opcode == RDMA_OP_RECV) {
        if (wc->wr_id != *rcvd)
            fail("a message completed out of order (message, expected)", wc->wr_id, *rcvd);
        take_unit((*rcvd)++, wc->byte_len);
    } else if (wc->qp == QP_NEXT) {
        (*done)++;
    }
}

/* The ring, from READY on: message u may go once message u - per_chunk (the same slice one
 * step earlier) has arrived and been reduced; messages of step 0 at once. Messages may
 * arrive before our READY (the previous rank had its own). Returns the cycles from READY
 * to the last message received and sent. */
static uint64_t ring(void)
{
    uint32_t sent = 0, rcvd = 0, done = 0;
    uint64_t t0 = 0;
    struct rdma_wc wc;
    while (rcvd < units || done < units) {
        while (t0 && sent < units && (sent < per_chunk || sent - per_chunk < rcvd))
            send_unit(sent++);
        rdma_next_wc(&wc, &cq);
        on_completion(&wc, &rcvd, &done, &t0);
    }
    return read_mcycle() - t0;
}

static void check(void)
{
    for (uint32_t k = 0; k < elems; k++) {
        uint64_t want = tapp_sum(hosts, k);
        if (result[k] != want)
            fail("an element is wrong (element, value); it should be tapp_sum", k, result[k]);
    }
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    parse(argc, argv);
    for (uint32_t k = 0; k < elems; k++)
        data[k] = tapp_input(rank, k);
    setup();
    ctl_tx = READY;
    rdma_post_send(QP_PREV, ~0u, &ctl_tx, 8);
    st.wrs++;
    uint64_t cycles = ring();
    check();
    printf("allreduce: rank=%u hosts=%u elems=%u cycles=%lu\n", rank, hosts, elems, (unsigned long)cycles);
    printf("rdma: cycles=%lu idle_cycles=%lu wrs=%lu completions=%lu bytes_in=%lu bytes_out=%lu\n",
           (unsigned long)cycles, (unsigned long)cq.idle, (unsigned long)st.wrs, (unsigned long)cq.cqes,
           (unsigned long)st.bytes_in, (unsigned long)st.bytes_out);
    return 0;
}
