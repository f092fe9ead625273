/*
 * tcp_prof.h - where the TCP's core cycles go, by region of its code (docs/apps/tcp.md
 * "Profile"). Built in only with -DTCP_PROF (apps/tcp_zbulk_prof.elf); otherwise every
 * mark is empty and the stack's code is unchanged.
 *
 * Each region's cycles are exclusive: entering a region charges the cycles since the last
 * mark to the region running until then, and leaving charges them to the region left, so
 * the regions' sums add up to the core's cycles since tcp_prof_start(). A mark reads only
 * mcycle (reading minstret and the miss counter as well made it ten times dearer). Its own
 * cost falls in the regions around it: each region's entry and exit and each entry of a
 * region inside it (`kids`) add about one mark's cost, which the report's reader takes off
 * (experiments/zeronic-bulk/profile: the profiled run's extra cycles over the plain
 * build's, spread over the marks: 26-45 cycles; marks timed back to back in a loop came
 * out near 200 cycles each, why not traced, so that is no guide).
 */
#ifndef TCP_PROF_H
#define TCP_PROF_H

#include <stdint.h>

enum tcp_prof_region {
    TP_LOOP,   /* the program's own loop, outside the stack */
    TP_APP,    /* exchange with the application core (tcp_zc_poll less output) */
    TP_RX,     /* taking frames from the NIC's queue, posting buffers back */
    TP_PARSE,  /* tcp_parse: headers, metadata, options */
    TP_INPUT,  /* tcp_input less the parts below: lookup, state machine, acceptability */
    TP_ACK,    /* ack_input: SACK, new_ack (RTT, congestion control, timer) */
    TP_TEXT,   /* text_input: trimming, reassembly, ACK scheduling */
    TP_OUTPUT, /* tcp_output: what may be sent */
    TP_EMIT,   /* tcp_emit: headers built (IPv4 checksum included), payload posted */
    TP_TX,     /* tcp_tx_buf and tcp_tx: send buffers, the NIC's send registers */
    TP_TIMERS, /* tcp_poll's pass over the connections (timers) */
    TP_WAIT,   /* tcp_zc_wait and tcp_nic_sleep around the sleep */
    TP_IDLE,   /* asleep in wfi */
    TP_N
};

#ifdef TCP_PROF
#include "nanopu.h"

struct tcp_prof {
    uint64_t cycles[TP_N], calls[TP_N], kids[TP_N], last;
    uint32_t depth;
    uint8_t stack[16];
};
extern struct tcp_prof tcp_prof;

static inline void tcp_prof_charge(void)
{
    uint64_t now = read_mcycle();
    tcp_prof.cycles[tcp_prof.stack[tcp_prof.depth]] += now - tcp_prof.last;
    tcp_prof.last = now;
}

static inline void tcp_prof_in(int r)
{
    tcp_prof_charge();
    tcp_prof.kids[tcp_prof.stack[tcp_prof.depth]]++;
    tcp_prof.stack[++tcp_prof.depth] = (uint8_t)r;
    tcp_prof.calls[r]++;
}

static inline void tcp_prof_out(void)
{
    tcp_prof_charge();
    tcp_prof.depth--;
}

/* Start counting now, in TP_LOOP (all counts cleared). */
void tcp_prof_start(void);
/* Print `tcp_prof:` and, per region, `NAME=CYCLES/CALLS/KIDS` (raw: the marks' cost not
 * yet taken off). */
void tcp_prof_print(void);
#define TCP_PROF_IN(r) tcp_prof_in(r)
#define TCP_PROF_OUT() tcp_prof_out()
#else
#define TCP_PROF_IN(r) ((void)0)
#define TCP_PROF_OUT() ((void)0)
#endif

#endif /* TCP_PROF_H */
