/*
 * loopback_tput.c - the single-core loopback throughput server, doing for each request the
 * work the prototype's throughput program does (its structure read from l-nic/chipyard
 * tests-lnic/lnic-loopback-throughput.c; this is our code).
 *
 * A config message {0, N, start time} comes first; then each of the N requests
 * {1, payload words..., timestamp} is answered with its header, its type word, its payload
 * copied by an unrolled copy chosen by length, and the configured start time in place of
 * its timestamp.  While it waits the core marks its context idle, as the prototype's
 * lnic_wait() does.  Any other message: a console line and exit 2.
 */
#include "nanopu.h"

#define CONFIG_TYPE 0
#define DATA_TYPE   1

static void wait_msg(void)
{
    while (lnic_ready() == 0)
        csr_write(LNICUCMD, LNICUCMD_IDLE);
}

#define COPY2 lnic_copy(); lnic_copy();
#define COPY4 COPY2 COPY2
#define COPY8 COPY4 COPY4
#define COPY16 COPY8 COPY8

/* Copy `bytes` of payload from netRX to netTX: unrolled for the sizes the benchmark sends
 * (16, 48, 112 bytes), a loop otherwise.  Not static, and the empty payload tested first,
 * so that the compiler inlines that test alone into the caller, as it does the
 * prototype's: a request without payload costs no call. */
void copy_payload(uint16_t bytes);
void copy_payload(uint16_t bytes)
{
    if (bytes == 0)
        return;
    switch (bytes) {
    case 112: COPY16 COPY16 COPY16 COPY8 COPY4 COPY4 return;
    case 48: COPY4 COPY2 return;
    case 16: COPY2 return;
    default:
        for (uint32_t i = 0; i < ((uint32_t)bytes + 7) / 8; i++)
            lnic_copy();
    }
}

static void __attribute__((noreturn)) fail(const char *what)
{
    printf("loopback_tput: %s\n", what);
    nanopu_exit(2);
}

int main(void)
{
    if (nanopu_core_id() != 0)
        return 0;
    lnic_add_context(0, 0);
    for (;;) {
        wait_msg();
        lnic_read(); /* header */
        if (lnic_read() != CONFIG_TYPE)
            fail("expected a config message first");
        uint64_t n = lnic_read(), start = lnic_read();
        lnic_msg_done();
        if (n == 0)
            continue;
        /* Tested at the bottom, as the compiler lays out the prototype's loop. */
        uint64_t done = 0;
        do {
            wait_msg();
            uint64_t hdr = lnic_read();
            lnic_write_r(hdr);
            lnic_copy(); /* type */
            copy_payload((uint16_t)(lnic_hdr_len(hdr) - 16));
            lnic_read(); /* the request's timestamp */
            lnic_write_r(start);
            lnic_msg_done();
        } while (++done != n);
    }
}
