/*
 * tcp.h - a TCP for bare-metal C on IceNIC nodes (docs/apps/tcp.md): the sockets-like API.
 *
 * One core (the caller's) runs the whole stack: it polls the NIC, runs the timers and sends
 * in the calls below, so the API is blocking where a socket's would be (accept, connect,
 * send_all) and non-blocking elsewhere (tcp_send, tcp_recv return what they could do).
 * Descriptors are small integers; a negative return is one of the TCP_E* codes.
 *
 * The stack speaks IPv4 over Ethernet with static addresses (a node's MAC is 02:00 followed
 * by its IPv4 address, as every IceNIC program's: icenic.h), so it needs no ARP.
 */
#ifndef TCP_H
#define TCP_H

#include <stdint.h>

#define TCP_EAGAIN  (-1) /* nothing to do now: call again after tcp_wait() */
#define TCP_ECLOSED (-2) /* the connection is closed (reset, or closed by us) */
#define TCP_EBADF   (-3) /* no such descriptor */
#define TCP_ENOMEM  (-4) /* no free connection slot */
#define TCP_ERESET  (-5) /* the peer reset the connection, or it timed out */

/* Tunables (docs/apps/tcp.md "Parameters"); tcp_init() sets the defaults, a program may
 * change them before opening connections. Times in microseconds. */
struct tcp_config {
    uint32_t rto_init_us;   /* RFC 6298 (2.1): 1 s; ours is scaled to a datacenter RTT */
    uint32_t rto_min_us;    /* RFC 6298 (2.4): 1 s SHOULD; ours is scaled likewise */
    uint32_t rto_max_us;    /* RFC 6298 (2.5): at least 60 s MAY cap; ours is scaled */
    uint32_t delack_us;     /* RFC 1122 4.2.3.2 / RFC 5681 4.2: under 500 ms */
    uint32_t time_wait_us;  /* RFC 9293 3.3.2: 2 MSL; ours is scaled, above rto_max_us */
    uint32_t max_retries;   /* RFC 1122 4.2.3.5 R2: give up after this many timeouts */
    int delayed_ack;        /* 1: delay ACKs (RFC 5681 4.2); 0: ACK every segment */
    int newreno;            /* 1: fast retransmit and NewReno recovery (RFC 6582) */
    int sack;               /* 1: offer and use SACK (RFC 2018) */
};

/* What the stack counts, summed over its connections (tcp_stats()). */
struct tcp_stats {
    uint64_t segs_in, segs_out;
    uint64_t bytes_in, bytes_out;     /* payload bytes delivered to / accepted from the app */
    uint64_t rto_timeouts;            /* retransmission timer expiries (RFC 6298 5.4) */
    uint64_t fast_retransmits;        /* third duplicate ACK (RFC 5681 3.2, RFC 6582) */
    uint64_t partial_ack_retransmits; /* NewReno partial ACKs (RFC 6582 3.2 step 5) */
    uint64_t segs_retransmitted;      /* every segment sent again, for any reason */
    uint64_t sack_retransmits;        /* holes resent from SACK blocks (RFC 2018) */
    uint64_t dupacks_in;              /* duplicate ACKs received (RFC 5681 2) */
    uint64_t ooo_segs_in;             /* segments that arrived beyond rcv_nxt */
    uint64_t dup_segs_in;             /* segments entirely below rcv_nxt */
    uint64_t acks_out;                /* segments sent with no data (ACKs, window updates) */
    uint64_t delayed_acks;            /* ACKs sent by the delayed-ACK timer */
    uint64_t bad_checksums, dropped;  /* refused on input */
    uint64_t idle_cycles;             /* cycles asleep in wfi (tcp_wait): the rest is busy */
#ifdef TCP_DCTCP
    /* DCTCP builds only (-DTCP_DCTCP, tcp_dctcp.c) */
    uint64_t ecn_conns;               /* connections that negotiated ECN (RFC 3168 6.1.1) */
    uint64_t ce_in;                   /* data segments that arrived marked CE */
    uint64_t ece_in;                  /* ACKs that arrived with ECE */
    uint64_t ecn_reductions;          /* cwnd cut by alpha (RFC 8257 3.4), once per window */
    uint64_t alpha_1024;              /* DCTCP.Alpha at its latest update (any connection), 1/1024 */
#endif
};

extern struct tcp_config tcp_cfg;

/* Start the stack on this node's IceNIC: post receive buffers, set the defaults. */
void tcp_init(void);

int tcp_listen(uint16_t port);
/* Block until a connection to listener `lfd` is established; its descriptor. */
int tcp_accept(int lfd);
/* Block until connected to `ip`:`port` (ip in host order); the descriptor or an error. */
int tcp_connect(uint32_t ip, uint16_t port);

/* Queue up to `len` bytes for sending; how many were taken (0 if the send buffer is full). */
int tcp_send(int fd, const void *buf, uint32_t len);
/* Copy up to `len` received bytes; how many, 0 at end of stream (the peer's FIN), or
 * TCP_EAGAIN when nothing is there yet. */
int tcp_recv(int fd, void *buf, uint32_t len);
/* Send our FIN once the queued data is sent (a half close: receiving goes on). */
int tcp_shutdown(int fd);
/* Shutdown, then block until the connection has closed (both FINs acknowledged). */
int tcp_close(int fd);
/* Bytes queued and not yet acknowledged. */
uint32_t tcp_unacked(int fd);
/* Whether a connection is still in TIME-WAIT (RFC 9293 3.3.2): a program that exits before
 * it ends leaves no one to acknowledge the peer's FIN again if our last ACK was lost (a
 * kernel's TIME-WAIT outlives the process); call tcp_wait() until this is 0. */
int tcp_lingering(void);

/* Process what arrived and what timers expired, and send what may be sent. */
void tcp_poll(void);
/* Sleep (wfi) until a frame arrives or the next timer is due, then tcp_poll(). */
void tcp_wait(void);

void tcp_stats(struct tcp_stats *out);
#ifdef TCP_DCTCP
/* Print the DCTCP counters of `s` as one line, `dctcp: key=value ...`. */
void tcp_report_dctcp(const struct tcp_stats *s);
#endif
/* The smoothed RTT and current RTO of `fd`, in cycles (RFC 6298). */
uint64_t tcp_srtt(int fd);
uint64_t tcp_rto(int fd);

#endif /* TCP_H */
