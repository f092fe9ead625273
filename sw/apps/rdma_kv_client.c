/*
 * rdma_kv_client.c - tcp_kv_client.c on the RDMA NIC (nic = "rdma"): a pipelined client of
 * rdma_kv.c that checks every reply against the same model of the store (kv_client.h).
 * Each request is a SEND of its RESP text, each reply arrives as a SEND into a receive
 * buffer posted here. Hart 0 runs it; other harts exit.
 *
 * Arguments (after program, MAC and IP): DEPTH REQUESTS KEYS VALUE_BYTES GET_PCT, as
 * tcp_kv_client.c's after its port. The server is node 0, and this client (node n) talks
 * to its QP n-1 from QP 0. It keeps DEPTH requests outstanding (a new one goes out as each
 * reply comes back) until REQUESTS have been answered; a wrong reply, or a message that is
 * not one whole reply, stops it with exit code 2, naming the request.
 *
 * Buffers: SLOTS request buffers, request k written in buffer k mod SLOTS and reused only
 * once its SEND has completed (acknowledged: until then go-back-N may read it again), and
 * SLOTS reply buffers, posted before anything is sent (after one for the server's READY)
 * and each posted again once its reply is checked. Having waited for READY, it runs; then
 * it sends QUIT (KV_QUIT) and waits for its +OK and every SEND's completion.
 *
 * It prints tcp_kv_client.c's `kvc:` line (cycles from READY to the last reply; each
 * request's latency from its text being written into the request buffer to its reply
 * checked) and `rdma: cycles=C idle_cycles=I wrs=W completions=K`.
 */
#include "kv_client.h"
#include "rdma_app.h"

#define SLOTS KV_MAX_DEPTH
#define KEY_REQ 1
#define KEY_REP 2
#define KEY_CTL 3
#define READY 0x52454144u
#define READY_ID 0xffffffffu /* wr_id of READY's RECV */

static uint8_t req[SLOTS][KV_REQ_MAX] __attribute__((aligned(64)));
static uint8_t rep[SLOTS][KV_REPLY_MAX] __attribute__((aligned(64)));
static uint8_t quit_msg[KV_QUIT_LEN];
static uint64_t ready_rx;
static struct rdma_app_counts cq;
/* Requests sent, their SENDs completed, replies received; work requests posted. */
static uint32_t issued, acked, got;
static uint64_t wrs;

static void setup(void)
{
    rdma_reg_mr(req, sizeof req, KEY_REQ);
    rdma_reg_mr(rep, sizeof rep, KEY_REP);
    rdma_reg_mr(&ready_rx, 8, KEY_CTL);
    rdma_reg_mr(quit_msg, sizeof quit_msg, KEY_CTL + 1);
    rdma_connect(0, (uint8_t)(kvc.node - 1), nanopu_ip_of_node(0));
    rdma_post_recv(0, READY_ID, &ready_rx, 8);
    for (uint32_t k = 0; k < SLOTS; k++)
        rdma_post_recv(0, k, rep[k], KV_REPLY_MAX);
    wrs += SLOTS + 1;
}

static void wait_ready(void)
{
    struct rdma_wc wc;
    rdma_next_wc(&wc, &cq);
    if (wc.opcode != RDMA_OP_RECV || wc.wr_id != READY_ID || ready_rx != READY)
        KVC_FAIL("rdma_kv_client: node %u: the first message was not READY (wr_id %u)\n", kvc.node, wc.wr_id);
}

/* One completion: a request's SEND acknowledged, or a reply arrived (checked by `check`,
 * which returns its length when it is one whole reply); both in the order posted. */
static void take(const struct rdma_wc *wc, uint32_t (*check)(const uint8_t *, uint32_t))
{
    if (wc->opcode != RDMA_OP_RECV) {
        if (wc->wr_id != acked++)
            KVC_FAIL("rdma_kv_client: node %u: request %u completed as number %u\n", kvc.node, wc->wr_id, acked - 1);
        return;
    }
    uint8_t *p = rep[got % SLOTS];
    if (wc->wr_id != got)
        KVC_FAIL("rdma_kv_client: node %u: reply buffer %u filled as number %u\n", kvc.node, wc->wr_id, got);
    if (check(p, wc->byte_len) != wc->byte_len)
        KVC_FAIL("rdma_kv_client: node %u: reply %u is not one whole reply (%u bytes)\n", kvc.node, got, wc->byte_len);
    rdma_post_recv(0, got + SLOTS, p, KV_REPLY_MAX);
    got++, wrs++;
}

static void run(uint32_t depth, uint32_t total)
{
    struct rdma_wc wc;
    while (kvc.answered < total) {
        while (issued < total && kvc.outstanding < depth && issued - acked < SLOTS) {
            uint8_t *p = req[issued % SLOTS];
            rdma_post_send(0, issued, p, kvc_issue(p));
            issued++, wrs++;
        }
        rdma_next_wc(&wc, &cq);
        take(&wc, kvc_take);
    }
}

/* QUIT's reply: +OK. */
static uint32_t check_quit(const uint8_t *p, uint32_t len)
{
    return len == 5 && memcmp(p, "+OK\r\n", 5) == 0 ? 5 : 0;
}

/* Say QUIT, and wait for its +OK and every SEND's completion. */
static void quit(void)
{
    struct rdma_wc wc;
    memcpy(quit_msg, KV_QUIT, KV_QUIT_LEN);
    rdma_post_send(0, issued++, quit_msg, KV_QUIT_LEN);
    wrs++;
    while (got < issued || acked < issued) {
        rdma_next_wc(&wc, &cq);
        take(&wc, check_quit);
    }
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    uint32_t depth = (uint32_t)rdma_arg(argc, argv, 3, "depth");
    uint32_t total = (uint32_t)rdma_arg(argc, argv, 4, "requests");
    uint32_t keys = (uint32_t)rdma_arg(argc, argv, 5, "keys");
    uint32_t vbytes = (uint32_t)rdma_arg(argc, argv, 6, "value_bytes");
    uint32_t get_pct = (uint32_t)rdma_arg(argc, argv, 7, "get_pct");
    if (!depth || depth > KV_MAX_DEPTH || !total || total > KVC_MAX_REQUESTS || !keys || keys > KVC_MAX_KEYS ||
        !vbytes || vbytes > KV_VAL_MAX || get_pct > 100 || nanopu_node_index() == 0)
        KVC_FAIL("usage: rdma_kv_client DEPTH(1..%d) REQUESTS(1..%d) KEYS(1..%d) VALUE_BYTES(1..%d) "
                 "GET_PCT(0..100), on a node other than 0\n", KV_MAX_DEPTH, KVC_MAX_REQUESTS, KVC_MAX_KEYS,
                 KV_VAL_MAX);
    kvc_init(vbytes, keys, get_pct);
    setup();
    wait_ready();
    uint64_t t0 = read_mcycle();
    cq.idle = 0; /* from READY on, as the timed part */
    run(depth, total);
    uint64_t cycles = read_mcycle() - t0;
    quit();
    kvc_report(total, cycles);
    printf("rdma: cycles=%lu idle_cycles=%lu wrs=%lu completions=%lu\n", (unsigned long)cycles,
           (unsigned long)cq.idle, (unsigned long)wrs, (unsigned long)cq.cqes);
    return 0;
}
