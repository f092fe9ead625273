/*
 * tcp_zc.h - zero-copy use of the C TCP on a ZeroNIC node (docs/models/zeronic.md
 * "Software"): the stack runs on one core as the control path and never touches payload;
 * the application, on another core, reads received bytes where the NIC placed them and
 * writes bytes to send where the NIC will read them. The two cores share a `struct tcp_zc`
 * per connection: stream offsets, each written by one side only.
 *
 * Byte k of the received stream is at rx_ring[k % rx_size], byte k of the sent stream at
 * tx_ring[k % tx_size]. The app may read up to rx_ready, and must set rx_taken once done
 * with bytes (their memory then takes later bytes); it may write up to tx_acked + tx_size
 * and publishes them in tx_written. The plain API of tcp.h keeps working on a ZeroNIC node
 * (tcp_send and tcp_recv copy between the app's buffer and these rings).
 */
#ifndef TCP_ZC_H
#define TCP_ZC_H

#include "tcp.h"

struct tcp_zc {
    /* control -> app */
    volatile uint64_t rx_ready;   /* received in order */
    volatile uint64_t rx_eof;     /* the peer's FIN follows rx_ready */
    volatile uint64_t tx_acked;   /* acknowledged by the peer */
    volatile uint64_t closed;     /* the connection has closed (or failed: error) */
    volatile int64_t error;
    /* app -> control (its own cache line) */
    volatile uint64_t rx_taken __attribute__((aligned(64)));
    volatile uint64_t tx_written;
    volatile uint64_t tx_done;    /* no more bytes: send our FIN after them */
    /* set by tcp_zc_attach */
    uint8_t *volatile rx_ring;
    uint8_t *volatile tx_ring;
    uint32_t rx_size, tx_size;
    /* the control core's own */
    uint64_t rx_seen, tx_seen, acked_seen;
};

/* Control core: start serving connection `fd` through `z` (rings set last). */
void tcp_zc_attach(int fd, struct tcp_zc *z);
/* Control core: one exchange with the app; 1 if anything moved. */
int tcp_zc_poll(int fd, struct tcp_zc *z);
/* Control core: sleep as tcp_wait() does, but at most `us` microseconds (the app's
 * progress is seen only when the control core looks). */
void tcp_zc_wait(uint32_t us);
/* Segments that joined another on input (tcp_gro.c), since tcp_init. */
extern uint64_t tcp_gro_merged;

#endif /* TCP_ZC_H */
