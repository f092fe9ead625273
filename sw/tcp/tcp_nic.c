/*
 * tcp_nic.c - frames in and out of IceNIC (icenic.h, docs/models/icenic.md) and the clock.
 *
 * Receive: every one of the NIC's ICENIC_QUEUE_DEPTH receive slots holds a posted buffer;
 * completions come back in posting order, so the n-th completion is buffer n % depth,
 * which is parsed, handed to tcp_input and posted again at once (the TCP copies what it
 * keeps into its receive buffer, as a traditional stack copies from NIC buffers).
 * Send: a ring of as many send buffers, reused in order once the NIC reports each sent.
 * Time is mcycle; sleeping uses the CLINT timer and the NIC's receive interrupt to wake
 * from wfi (RISC-V privileged spec 3.1.9, 3.2.1, 3.3.3).
 */
#include "tcp_int.h"

#ifdef TCP_ZERONIC
#include "zeronic.h"
#define NBUF ZN_CTRL_DEPTH /* ZeroNIC's control queue: headers and metadata only */
#else
#define NBUF ICENIC_QUEUE_DEPTH
#endif
#define BUF_BYTES 1536
/* Frames start 2 bytes in so that the IPv4 header is 4-byte aligned (icenet's NET_IP_ALIGN). */
#define ALIGN_OFF 2

#define CLINT_MTIMECMP(h) ((volatile uint64_t *)(0x2004000ul + 8 * (h)))
#define CLINT_MTIME       ((volatile uint64_t *)0x200bff8ul)
#define MIE_MTIE (1ul << 7)
#define MSTATUS_MIE (1ul << 3)

static uint8_t rx_bufs[NBUF][BUF_BYTES] __attribute__((aligned(64)));
static uint8_t tx_bufs[NBUF][BUF_BYTES] __attribute__((aligned(64)));
static uint32_t rx_next;          /* the buffer the next receive completion fills */
static uint32_t tx_next, tx_busy; /* the next send buffer; how many the NIC still holds */

uint64_t tcp_now(void) { return read_mcycle(); }

/* Cycles in `us` microseconds: the CLINT's mtime ticks once per microsecond (docs/abi.md),
 * every nanopu_rtc_cycles() core cycles. */
uint64_t tcp_us(uint32_t us) { return (uint64_t)us * nanopu_rtc_cycles(); }

uint64_t tcp_my_mac;
uint32_t tcp_my_ip;

void tcp_nic_init(void)
{
    tcp_my_mac = icenic_mac();
    tcp_my_ip = nanopu_node_ip();
    for (int i = 0; i < NBUF; i++)
        icenic_post_recv(rx_bufs[i] + ALIGN_OFF);
    rx_next = tx_next = tx_busy = 0;
}

static void reap_sends(void)
{
    while (tx_busy && icenic_take_send_comp())
        tx_busy--;
}

/* A free send buffer, waiting for the NIC to finish with the oldest if all are in use. */
uint8_t *tcp_tx_buf(void)
{
    TCP_PROF_IN(TP_TX);
    /* Send completions are taken in tcp_nic_poll, and here only once every buffer is in
     * use, as a Linux driver cleans its transmit ring in its NAPI poll rather than on every
     * transmit (docs/apps/tcp.md "Profile"). A request leaves the NIC's send queue (NBUF
     * deep: IceNIC's ICENIC_QUEUE_DEPTH, ZeroNIC's ctrl_queue_depth) before its completion
     * is posted, so with fewer than NBUF not yet reaped the queue has room: no register
     * read. */
    if (tx_busy == NBUF)
        reap_sends();
    while (tx_busy == NBUF) {
        icenic_wait_send();
        tx_busy--;
    }
    TCP_PROF_OUT();
    return tx_bufs[tx_next] + ALIGN_OFF;
}

/* A free send buffer holding a copy of the first `hdr` bytes of `prev`, a frame built in
 * an earlier one (tcp_seg.c's segmentation; every buffer starts ALIGN_OFF into a 64-byte
 * aligned slot, so whole words are copied). */
uint8_t *tcp_tx_copy(const uint8_t *prev, uint32_t hdr)
{
    uint8_t *f = tcp_tx_buf();
    const uint64_t *s = (const uint64_t *)(prev - ALIGN_OFF);
    uint64_t *d = (uint64_t *)(f - ALIGN_OFF);
    for (uint32_t i = 0; i < (hdr + ALIGN_OFF + 7) / 8; i++)
        d[i] = s[i];
    return f;
}

/* Send the frame built in the buffer tcp_tx_buf() returned. */
void tcp_tx(uint8_t *f, uint32_t len)
{
    TCP_PROF_IN(TP_TX);
    icenic_send(f, len);
    tx_next = (tx_next + 1) % NBUF;
    tx_busy++;
    tcp_st.segs_out++;
    TCP_PROF_OUT();
}

void tcp_nic_poll(void)
{
    uint32_t len;
    TCP_PROF_IN(TP_RX);
    reap_sends();
    while ((len = icenic_take_recv_comp()) != 0) {
        uint8_t *f = rx_bufs[rx_next] + ALIGN_OFF;
        struct tcp_seg *s = tcp_gro_slot(); /* coalesced (tcp_gro.c) */
        TCP_PROF_IN(TP_PARSE);
        int ok = tcp_parse(f, len, s) == 0;
        TCP_PROF_OUT();
        if (ok)
            tcp_gro_receive(s); /* on IceNIC, copies what it holds out of `f` first */
        icenic_post_recv(f);
        rx_next = (rx_next + 1) % NBUF;
    }
    tcp_gro_flush(); /* the end of the poll ends a batch (napi_gro_flush) */
    TCP_PROF_OUT();
}

/* Sleep until a frame is received or the cycle count reaches `until` (0: no timer). */
void tcp_nic_sleep(uint64_t until)
{
    if (icenic_recv_comps())
        return;
    uint64_t hart = nanopu_core_id(), now = tcp_now();
    if (until && until <= now)
        return;
    /* Interrupts only wake wfi, never trap: mstatus.MIE off while they are enabled. */
    uint64_t mstatus_mie = csr_read(mstatus) & MSTATUS_MIE;
    csr_clear(mstatus, MSTATUS_MIE);
    if (until) {
        uint64_t ticks = (until - now + nanopu_rtc_cycles() - 1) / nanopu_rtc_cycles();
        *CLINT_MTIMECMP(hart) = *CLINT_MTIME + ticks;
        csr_set(mie, MIE_MTIE);
    }
    ICENIC_REG(ICENIC_INTMASK, uint8_t) = 2; /* wake on a receive completion */
    csr_set(mie, 1ul << ICENIC_IRQ);
    if (!icenic_recv_comps()) {
        uint64_t t0 = tcp_now();
        TCP_PROF_IN(TP_IDLE);
        __asm__ volatile("wfi");
        TCP_PROF_OUT();
        tcp_st.idle_cycles += tcp_now() - t0;
    }
    csr_clear(mie, MIE_MTIE | (1ul << ICENIC_IRQ));
    *CLINT_MTIMECMP(hart) = ~0ull;
    csr_set(mstatus, mstatus_mie);
}
