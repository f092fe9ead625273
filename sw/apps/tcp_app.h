/*
 * tcp_app.h - what the workloads over the C TCP share (tcp_flows.c, tcp_allreduce.c,
 * tcp_kv.c, tcp_kv_client.c; docs/apps/tcp-workloads.md): arguments, a patient connect,
 * the checked byte pattern (app_pattern.h) and the counter line. Written against tcp.h and
 * the platform (nanopu.h) only, never the NIC, so the same programs run over any NIC the
 * TCP runs on.
 */
#ifndef TCP_APP_H
#define TCP_APP_H

#include "../tcp/tcp.h"
#include "app_pattern.h"
#include "nanopu.h"

/* Stop with exit code 2 (a failed check or a broken connection), printing why. */
#define TAPP_FAIL(...) (printf(__VA_ARGS__), nanopu_exit(2))

/* `text` as a decimal number; a malformed one stops the program with exit code 1. */
static inline uint64_t tapp_number(const char *text, const char *name)
{
    uint64_t v = 0;
    for (const char *p = text; *p || p == text; p++) {
        if (*p < '0' || *p > '9') {
            printf("argument %s is not a number: '%s'\n", name, text);
            nanopu_exit(1);
        }
        v = v * 10 + (uint64_t)(*p - '0');
    }
    return v;
}

/* argv[i] (argv[3] is the first user argument, after program, MAC and IP) as a decimal
 * number; a missing or malformed one stops the program with exit code 1, naming it. */
static inline uint64_t tapp_arg(int argc, char **argv, int i, const char *name)
{
    if (i >= argc) {
        printf("missing argument %d (%s)\n", i - 2, name);
        nanopu_exit(1);
    }
    return tapp_number(argv[i], name);
}

/* What follows `prefix` in `text`, or 0 if `text` does not start with it. */
static inline const char *tapp_after(const char *text, const char *prefix)
{
    while (*prefix && *text == *prefix)
        text++, prefix++;
    return *prefix ? 0 : text;
}

/* Whether `flag` is among argv[from..]. */
static inline int tapp_flag(int argc, char **argv, int from, const char *flag)
{
    for (int i = from; i < argc; i++)
        if (strcmp(argv[i], flag) == 0)
            return 1;
    return 0;
}

/* TIME-WAIT of the workloads, us: ten times the TCP's minimum RTO (tcp.md "Parameters"),
 * so that a peer whose FIN is resent because our last ACK was lost still finds the
 * connection in TIME-WAIT (what 2 MSL is for, RFC 9293 3.3.2) and gets that ACK again, not
 * a reset. A choice: shorter than the stack's default (245.76 ms, above its largest RTO)
 * because each workload lingers this long before it exits (tapp_linger) and its runs'
 * RTOs stay near the minimum. */
#define TAPP_TIME_WAIT_US 2000

/* Start the stack as the workloads run it. */
static inline void tapp_init(void)
{
    tcp_init();
    tcp_cfg.time_wait_us = TAPP_TIME_WAIT_US;
}

/* Run the stack (and nothing else) for `us` microseconds. */
static inline void tapp_spin_us(uint32_t us)
{
    uint64_t until = read_mcycle() + (uint64_t)us * nanopu_rtc_cycles();
    while (read_mcycle() < until)
        tcp_poll();
}

/* Keep the stack running through TIME-WAIT after the last close, as an operating system
 * keeps a closed connection's TIME-WAIT after its process has exited: a program that
 * exits at once leaves a peer whose last ACK was lost resending its FIN to no one. Polls
 * (tcp_wait could sleep for good once TIME-WAIT has ended and no timer is left). */
static inline void tapp_linger(void) { tapp_spin_us(TAPP_TIME_WAIT_US); }

/* Connect to `ip`:`port`, trying again every 10 us while the peer answers with a reset
 * (it has not listened yet: every node starts at once, and a SYN may overtake the peer's
 * tcp_listen). Stops the program after 1,000 tries. */
static inline int tapp_connect(uint32_t ip, uint16_t port)
{
    for (int tries = 0; tries < 1000; tries++) {
        int fd = tcp_connect(ip, port);
        if (fd >= 0)
            return fd;
        tapp_spin_us(10);
    }
    TAPP_FAIL("could not connect to %u:%u\n", (unsigned)ip, (unsigned)port);
    return -1;
}

/* The stack's sleeping cycles when the timed part began (tapp_mark). */
static uint64_t tapp_idle0;

/* Start the timed part: its first cycle; its idle cycles count from here. */
static inline uint64_t tapp_mark(void)
{
    struct tcp_stats s;
    tcp_stats(&s);
    tapp_idle0 = s.idle_cycles;
    return read_mcycle();
}

/* One line of the stack's counters (tcp_stats), `tcp: key=value ...`, as tcp_bulk.c's;
 * `cycles` is the timed part's length and `idle_cycles` its cycles asleep in wfi (since
 * tapp_mark), so the core was busy for the difference. */
static inline void tapp_report_tcp(uint64_t cycles)
{
    struct tcp_stats s;
    tcp_stats(&s);
    s.idle_cycles -= tapp_idle0;
    printf("tcp: cycles=%lu segs_in=%lu segs_out=%lu bytes_in=%lu bytes_out=%lu rto_timeouts=%lu "
           "fast_retransmits=%lu sack_retransmits=%lu segs_retransmitted=%lu dupacks_in=%lu "
           "ooo_segs_in=%lu dup_segs_in=%lu acks_out=%lu bad_checksums=%lu idle_cycles=%lu\n",
           (unsigned long)cycles, (unsigned long)s.segs_in, (unsigned long)s.segs_out,
           (unsigned long)s.bytes_in, (unsigned long)s.bytes_out, (unsigned long)s.rto_timeouts,
           (unsigned long)s.fast_retransmits, (unsigned long)s.sack_retransmits,
           (unsigned long)s.segs_retransmitted, (unsigned long)s.dupacks_in,
           (unsigned long)s.ooo_segs_in, (unsigned long)s.dup_segs_in, (unsigned long)s.acks_out,
           (unsigned long)s.bad_checksums, (unsigned long)s.idle_cycles);
#ifdef TCP_DCTCP
    tcp_report_dctcp(&s);
#endif
}

#endif /* TCP_APP_H */
