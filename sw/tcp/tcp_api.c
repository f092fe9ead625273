/*
 * tcp_api.c - the connection table, the timers' dispatch and the sockets-like API
 * (tcp.h). Connections are slots of tcp_conns; a descriptor is a slot's index.
 */
#include "tcp_int.h"

struct tcp_conn tcp_conns[TCP_MAX_CONN];
struct tcp_stats tcp_st;
struct tcp_config tcp_cfg;

static uint8_t sbufs[TCP_MAX_CONN][TCP_SNDBUF] __attribute__((aligned(64)));
static uint8_t rbufs[TCP_MAX_CONN][TCP_RCVBUF] __attribute__((aligned(64)));
static uint16_t next_port = 49152; /* the dynamic ports (RFC 6335 6) */

void tcp_init(void)
{
    tcp_cfg.rto_init_us = 1000;
    tcp_cfg.rto_min_us = 200;
    tcp_cfg.rto_max_us = 100000;
    tcp_cfg.delack_us = 40;
    tcp_cfg.time_wait_us = 245760; /* 2 MSL scaled: docs/apps/tcp.md "Parameters" */
    tcp_cfg.max_retries = 15;
    tcp_cfg.delayed_ack = 1;
    tcp_cfg.newreno = 1;
    tcp_cfg.sack = 1;
    memset(tcp_conns, 0, sizeof tcp_conns);
    memset(&tcp_st, 0, sizeof tcp_st);
    tcp_nic_init();
}

/* An initial sequence number from a clock ticking every 4 us (RFC 9293 3.4.1), offset by
 * the connection's ports (a stand-in for RFC 6528's keyed hash: nothing here is hostile). */
static uint32_t new_iss(const struct tcp_conn *c)
{
    uint32_t clock = (uint32_t)(tcp_now() / tcp_us(4));
    return clock + ((uint32_t)c->lport << 16 | c->rport) * 2654435761u;
}

struct tcp_conn *tcp_new_conn(void)
{
    for (int i = 0; i < TCP_MAX_CONN; i++) {
        struct tcp_conn *c = &tcp_conns[i];
        if (c->state != TS_FREE)
            continue;
        memset(c, 0, sizeof *c);
        c->state = TS_CLOSED;
        c->sbuf = sbufs[i];
        c->rbuf = rbufs[i];
        c->listener = -1;
        c->mss = TCP_MSS;
        c->rto = tcp_us(tcp_cfg.rto_init_us); /* RFC 6298 2.1 */
        return c;
    }
    return 0;
}

/* The state's entry actions: the sequence numbers of an opening connection, the TIME-WAIT
 * timer (2 MSL, RFC 9293 3.3.2). */
void tcp_set_state(struct tcp_conn *c, enum tcp_state st)
{
    if ((st == TS_SYN_SENT || st == TS_SYN_RCVD) && c->state != TS_SYN_SENT) {
        c->iss = new_iss(c);
        c->snd_una = c->iss;
        c->snd_nxt = c->snd_max = c->iss + 1;
        c->recover = c->iss;
    }
    if (st == TS_TIME_WAIT) {
        c->rto_at = 0;
        c->tw_at = tcp_now() + tcp_us(tcp_cfg.time_wait_us);
    }
    c->state = st;
}

void tcp_reset_conn(struct tcp_conn *c)
{
    c->state = TS_CLOSED;
    c->rto_at = c->delack_at = c->tw_at = 0;
}

struct tcp_conn *tcp_find(uint32_t rip, uint16_t rport, uint16_t lport)
{
    for (int i = 0; i < TCP_MAX_CONN; i++) {
        struct tcp_conn *c = &tcp_conns[i];
        if (c->state > TS_LISTEN && c->rip == rip && c->rport == rport && c->lport == lport)
            return c;
    }
    return 0;
}

struct tcp_conn *tcp_find_listener(uint16_t lport)
{
    for (int i = 0; i < TCP_MAX_CONN; i++)
        if (tcp_conns[i].state == TS_LISTEN && tcp_conns[i].lport == lport)
            return &tcp_conns[i];
    return 0;
}

static void run_timers(struct tcp_conn *c, uint64_t now)
{
    if (c->tw_at && now >= c->tw_at) {
        c->tw_at = 0;
        c->state = TS_FREE;
        return;
    }
    if (c->rto_at && now >= c->rto_at)
        tcp_rto_timer(c);
    if (c->delack_at && now >= c->delack_at)
        tcp_ack_timer(c);
}

void tcp_poll(void)
{
    tcp_nic_poll();
    uint64_t now = tcp_now();
    TCP_PROF_IN(TP_TIMERS);
    for (int i = 0; i < TCP_MAX_CONN; i++) {
        struct tcp_conn *c = &tcp_conns[i];
        if (c->state <= TS_LISTEN)
            continue;
        run_timers(c, now);
        if (c->state > TS_CLOSED)
            tcp_output(c);
    }
    TCP_PROF_OUT();
}

static uint64_t earliest(uint64_t a, uint64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* The cycle the earliest timer of any connection expires, 0 if none is armed. */
static uint64_t next_timer(void)
{
    uint64_t until = 0;
    for (int i = 0; i < TCP_MAX_CONN; i++) {
        struct tcp_conn *c = &tcp_conns[i];
        if (c->state > TS_LISTEN)
            until = earliest(earliest(until, c->rto_at), earliest(c->delack_at, c->tw_at));
    }
    return until;
}

void tcp_wait(void)
{
    tcp_nic_sleep(next_timer());
    tcp_poll();
}

#ifdef TCP_ZERONIC
uint64_t tcp_next_timer(void) { return next_timer(); } /* tcp_zc_wait's */
#endif

static struct tcp_conn *conn(int fd)
{
    if (fd < 0 || fd >= TCP_MAX_CONN || tcp_conns[fd].state == TS_FREE)
        return 0;
    return &tcp_conns[fd];
}

int tcp_listen(uint16_t port)
{
    struct tcp_conn *c = tcp_new_conn();
    if (!c)
        return TCP_ENOMEM;
    c->lport = port;
    c->state = TS_LISTEN;
    return (int)(c - tcp_conns);
}

int tcp_accept(int lfd)
{
    if (!conn(lfd) || tcp_conns[lfd].state != TS_LISTEN)
        return TCP_EBADF;
    for (;;) {
        for (int i = 0; i < TCP_MAX_CONN; i++) {
            struct tcp_conn *c = &tcp_conns[i];
            if (c->listener == lfd && !c->accepted && c->state >= TS_ESTABLISHED) {
                c->accepted = 1;
                return i;
            }
        }
        tcp_wait();
    }
}

int tcp_connect(uint32_t ip, uint16_t port)
{
    struct tcp_conn *c = tcp_new_conn();
    if (!c)
        return TCP_ENOMEM;
    c->rip = ip;
    c->rport = port;
    c->lport = next_port++;
    c->rcv_shift_offered = 1;
    c->sack_offered = tcp_cfg.sack;
    c->accepted = 1;
    tcp_set_state(c, TS_SYN_SENT);
    tcp_emit(c, c->iss, F_SYN, 0);
    tcp_rto_restart(c);
    while (c->state == TS_SYN_SENT || c->state == TS_SYN_RCVD)
        tcp_wait();
    if (c->state == TS_CLOSED) {
        c->state = TS_FREE;
        return c->error ? c->error : TCP_ECLOSED;
    }
    return (int)(c - tcp_conns);
}

int tcp_send(int fd, const void *buf, uint32_t len)
{
    struct tcp_conn *c = conn(fd);
    if (!c)
        return TCP_EBADF;
    if (c->error)
        return c->error;
    if ((c->state != TS_ESTABLISHED && c->state != TS_CLOSE_WAIT) || c->fin_queued)
        return TCP_ECLOSED;
    uint32_t room = TCP_SNDBUF - c->sbuf_len, n = len < room ? len : room;
    uint32_t at = (c->snd_una + c->sbuf_len - c->iss - 1) % TCP_SNDBUF, first = TCP_SNDBUF - at;
    first = first < n ? first : n;
    tcp_copy(c->sbuf + at, buf, first);
    tcp_copy(c->sbuf, (const uint8_t *)buf + first, n - first);
    c->sbuf_len += n;
    tcp_st.bytes_out += n;
    tcp_output(c);
    return (int)n;
}

int tcp_recv(int fd, void *buf, uint32_t len)
{
    struct tcp_conn *c = conn(fd);
    if (!c)
        return TCP_EBADF;
    uint32_t n = tcp_rcv_read(c, buf, len);
    if (n) {
        if (c->ack_now)
            tcp_output(c);
        return (int)n;
    }
    if (c->fin_rcvd)
        return 0;
    return c->error ? c->error : TCP_EAGAIN;
}

int tcp_shutdown(int fd)
{
    struct tcp_conn *c = conn(fd);
    if (!c)
        return TCP_EBADF;
    if (c->fin_queued)
        return 0;
    if (c->state == TS_ESTABLISHED)
        tcp_set_state(c, TS_FIN_WAIT_1);
    else if (c->state == TS_CLOSE_WAIT)
        tcp_set_state(c, TS_LAST_ACK);
    else
        return c->error ? c->error : TCP_ECLOSED;
    c->fin_queued = 1;
    tcp_output(c);
    return 0;
}

int tcp_close(int fd)
{
    struct tcp_conn *c = conn(fd);
    if (!c)
        return TCP_EBADF;
    int r = tcp_shutdown(fd);
    while (r == 0 && c->state != TS_CLOSED && c->state != TS_TIME_WAIT && c->state != TS_FREE)
        tcp_wait();
    if (c->state == TS_CLOSED)
        c->state = TS_FREE;
    return r == 0 && c->error ? c->error : r;
}

int tcp_lingering(void)
{
    for (int i = 0; i < TCP_MAX_CONN; i++)
        if (tcp_conns[i].state == TS_TIME_WAIT)
            return 1;
    return 0;
}

uint32_t tcp_unacked(int fd)
{
    struct tcp_conn *c = conn(fd);
    return c ? c->sbuf_len : 0;
}

void tcp_stats(struct tcp_stats *out) { *out = tcp_st; }
uint64_t tcp_srtt(int fd) { return conn(fd) ? conn(fd)->srtt : 0; }
uint64_t tcp_rto(int fd) { return conn(fd) ? conn(fd)->rto : 0; }
