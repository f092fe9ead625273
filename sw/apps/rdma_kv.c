/*
 * rdma_kv.c - tcp_kv.c's key-value server on the RDMA NIC (nic = "rdma"; rdmanic.h,
 * docs/models/rdma-nic.md, docs/apps/tcp-workloads.md): the same store and RESP text
 * (kv_server.h), each request a SEND from a client into a receive buffer posted here, each
 * reply a SEND into one the client posted, over the NIC's reliable connections. Hart 0 runs
 * it; other harts exit.
 *
 * Arguments (after program, MAC and IP): CLIENTS [loseset]. The clients are nodes
 * 1..CLIENTS (rdma_kv_client.c); QP i-1 here is connected to client i's QP 0. `loseset`
 * is kv_server.h's test hook, which the clients' checks must catch.
 *
 * Each client has SLOTS receive buffers posted, as many as the deepest pipeline a client
 * keeps (KV_MAX_DEPTH), so a request never meets an empty receive queue; request k of a
 * client lands in buffer k mod SLOTS (RC delivers a QP's SENDs once and in order, into its
 * RECVs in the order posted), which is posted again once the request is answered. A message
 * must hold exactly one request. Reply k is built in reply buffer k mod SLOTS and sent from
 * there; the buffer is reused only once that SEND has completed (acknowledged: until then
 * go-back-N may read it again), so a request waits while its reply buffer is in flight.
 *
 * The server sends READY to each client once the buffers are posted (a client sends
 * nothing before). A client's last message is QUIT (KV_QUIT), answered +OK; the server ends
 * when every client has quit and every reply has been acknowledged, and prints
 * `kv: requests=R gets=G hits=H sets=S errors=E cycles=C` (QUIT not counted) and
 * `rdma: cycles=C idle_cycles=I wrs=W completions=K`: cycles from READY to the end,
 * idle_cycles asleep in wfi meanwhile.
 */
#include "kv_server.h"
#include "rdma_app.h"

#define MAX_CLIENTS 16
#define SLOTS KV_MAX_DEPTH
#define KEY_REQ 1
#define KEY_REP 2
#define KEY_CTL 3
#define READY 0x52454144u
#define READY_ID 0xffffffffu /* wr_id of READY's SEND */

struct client {
    uint32_t arrived, served, acked; /* requests received, answered, replies acknowledged */
    uint32_t ready_acked, quit;
    uint32_t len[SLOTS];
};

static uint8_t req[MAX_CLIENTS][SLOTS][KV_REQ_MAX] __attribute__((aligned(64)));
static uint8_t rep[MAX_CLIENTS][SLOTS][KV_REPLY_MAX] __attribute__((aligned(64)));
static uint64_t ready_msg = READY;
static struct client cl[MAX_CLIENTS];
static uint32_t clients;
static struct rdma_app_counts cq;
static uint64_t wrs;

static void setup(void)
{
    rdma_reg_mr(req, sizeof req, KEY_REQ);
    rdma_reg_mr(rep, sizeof rep, KEY_REP);
    rdma_reg_mr(&ready_msg, 8, KEY_CTL);
    for (uint32_t i = 0; i < clients; i++) {
        rdma_connect((uint8_t)i, 0, nanopu_ip_of_node(i + 1));
        for (uint32_t k = 0; k < SLOTS; k++)
            rdma_post_recv((uint8_t)i, k, req[i][k], KV_REQ_MAX);
        wrs += SLOTS;
    }
}

/* Answer client i's oldest unanswered request (kv_server.h; QUIT here) from reply buffer
 * k, and post its receive buffer again. */
static void answer(uint32_t i)
{
    struct client *c = &cl[i];
    uint32_t k = c->served % SLOTS, n = c->len[k], out = 0;
    if (n == KV_QUIT_LEN && memcmp(req[i][k], KV_QUIT, KV_QUIT_LEN) == 0) {
        c->quit = 1;
        memcpy(rep[i][k], "+OK\r\n", 5), out = 5;
    } else if (kv_execute(req[i][k], n, (struct kv_out){rep[i][k], &out}, (int)i + 1) != n) {
        KV_FAIL("rdma_kv: client %u's message %u is not one whole request (%u bytes)\n", i + 1, c->served, n);
    }
    rdma_post_send((uint8_t)i, c->served, rep[i][k], out);
    rdma_post_recv((uint8_t)i, c->served + SLOTS, req[i][k], KV_REQ_MAX);
    c->served++, wrs += 2;
}

/* Answer what client i has sent, while reply buffers are free. */
static void serve(uint32_t i)
{
    struct client *c = &cl[i];
    while (c->served < c->arrived && c->served - c->acked < SLOTS && !c->quit)
        answer(i);
}

/* One completion: a request arrived, or a reply (or READY) was acknowledged. Both come in
 * the order posted on their QP: anything else is the NIC's error, and stops the server. */
static void take(const struct rdma_wc *wc)
{
    if (wc->qp >= clients)
        KV_FAIL("rdma_kv: a completion on QP %u, which serves no client\n", wc->qp);
    struct client *c = &cl[wc->qp];
    if (wc->opcode == RDMA_OP_RECV) {
        if (wc->wr_id != c->arrived || c->quit)
            KV_FAIL("rdma_kv: client %u: message %u arrived as number %u\n", wc->qp + 1, wc->wr_id, c->arrived);
        c->len[c->arrived++ % SLOTS] = wc->byte_len;
    } else if (wc->wr_id == READY_ID) {
        c->ready_acked = 1;
    } else if (wc->wr_id != c->acked++) {
        KV_FAIL("rdma_kv: client %u: reply %u completed as number %u\n", wc->qp + 1, wc->wr_id, c->acked - 1);
    }
    serve(wc->qp);
}

/* Whether every client has quit and every reply (and READY) has been acknowledged. */
static int finished(void)
{
    for (uint32_t i = 0; i < clients; i++)
        if (!cl[i].quit || cl[i].acked != cl[i].served || !cl[i].ready_acked)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    clients = (uint32_t)rdma_arg(argc, argv, 3, "clients");
    kv.lose_set = argc > 4 && strcmp(argv[4], "loseset") == 0;
    if (clients == 0 || clients > MAX_CLIENTS)
        KV_FAIL("rdma_kv: clients must be 1..%d, not %u\n", MAX_CLIENTS, clients);
    setup();
    uint64_t t0 = read_mcycle();
    for (uint32_t i = 0; i < clients; i++)
        rdma_post_send((uint8_t)i, READY_ID, &ready_msg, 8), wrs++;
    struct rdma_wc wc;
    while (!finished()) {
        rdma_next_wc(&wc, &cq);
        take(&wc);
    }
    uint64_t cycles = read_mcycle() - t0;
    kv_report(cycles);
    printf("rdma: cycles=%lu idle_cycles=%lu wrs=%lu completions=%lu\n", (unsigned long)cycles,
           (unsigned long)cq.idle, (unsigned long)wrs, (unsigned long)cq.cqes);
    return 0;
}
