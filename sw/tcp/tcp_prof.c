/*
 * tcp_prof.c - the profile's counters and report (tcp_prof.h; -DTCP_PROF builds only).
 */
#ifdef TCP_PROF
#include "tcp_prof.h"
#include "nanopu.h"

struct tcp_prof tcp_prof;

static const char *const names[TP_N] = {"loop", "app",    "rx",     "parse", "input", "ack",  "text",
                                        "output", "emit", "tx",     "timers", "wait", "idle"};

void tcp_prof_start(void)
{
    memset(&tcp_prof, 0, sizeof tcp_prof);
    tcp_prof.last = read_mcycle();
}

void tcp_prof_print(void)
{
    tcp_prof_charge();
    printf("tcp_prof:");
    for (int r = 0; r < TP_N; r++)
        printf(" %s=%lu/%lu/%lu", names[r], (unsigned long)tcp_prof.cycles[r], (unsigned long)tcp_prof.calls[r],
               (unsigned long)tcp_prof.kids[r]);
    printf("\n");
}
#endif /* TCP_PROF */
