/*
 * ice_tput.c - receive- and transmit-rate benchmarks on an IceNIC node (`nanopu bench
 * nic-throughput`, experiments/nic-compare; docs/models/icenic.md).  Hart 0 only.
 *
 * Every frame from the host is IPv4/UDP whose payload's first 8-byte word (in the cores'
 * byte order) is its type: 0 data, 1 done, 2 start transmitting.
 *
 * Receive (argument 0 = 0): ICE_NBUF (64) receive buffers stay posted; each frame's completion is
 * taken, its type read from its buffer, and the buffer posted again.  Data frames are
 * counted, the cycle noted when the MARK-th (argument 1, default 100) and the last were
 * taken; at a done frame the program prints "frames=C mark_cycle=M end_cycle=E" and exits
 * with 0.  Frames the NIC had no room for never reach the program: its packet buffer drops
 * them (counted by the NIC, docs/models/icenic.md "Receive path").
 *
 * Transmit (argument 0 = 1): the first frame must be a start frame {2, N}; it is turned
 * around, its type set to 0 (data), and sent N times from its buffer as fast as the NIC
 * takes requests: the send queue is kept full and completions taken as they come (each
 * send request is one frame, docs/models/icenic.md "Send path").  Then it exits with 0.
 *
 * Anything else stops the program with exit code 2 and a message naming it.
 */
#include "ice_echo.h"

enum { DATA = 0, DONE = 1, START_TX = 2 };

static uint64_t payload_word(const uint8_t *f, int i)
{
    return ((const uint64_t *)(f + ICE_FRAME_PAYLOAD))[i];
}

static int receive(uint64_t mark)
{
    for (int i = 0; i < ICE_NBUF; i++)
        icenic_post_recv(ice_bufs[i] + ICE_RX_OFFSET);
    uint64_t frames = 0, mark_cycle = 0, end_cycle = 0;
    for (uint64_t i = 0;; i = (i + 1) % ICE_NBUF) {
        uint8_t *f = ice_bufs[i] + ICE_RX_OFFSET;
        uint32_t len = icenic_wait_recv();
        uint64_t type = len >= ICE_FRAME_PAYLOAD + 8 ? payload_word(f, 0) : ~0ull;
        icenic_post_recv(f);
        if (type == DONE)
            break;
        if (type != DATA) {
            printf("ice_tput: frame %lu is neither data nor done\n", (unsigned long)frames);
            return 2;
        }
        end_cycle = read_mcycle();
        if (++frames == mark)
            mark_cycle = end_cycle;
    }
    printf("frames=%lu mark_cycle=%lu end_cycle=%lu\n", (unsigned long)frames, (unsigned long)mark_cycle,
           (unsigned long)end_cycle);
    return 0;
}

/* Keep the send queue full until n frames of `len` bytes at `f` have been sent. */
static void flood(const uint8_t *f, uint32_t len, uint64_t n)
{
    uint64_t sent = 0, done = 0;
    while (done < n) {
        uint32_t c = icenic_counts();
        for (uint32_t space = c & 0xff; space > 0 && sent < n; space--, sent++)
            icenic_send(f, len);
        for (uint32_t comps = (c >> 16) & 0xff; comps > 0; comps--, done++)
            icenic_take_send_comp();
    }
}

static int transmit(void)
{
    uint8_t *f = ice_bufs[0] + ICE_RX_OFFSET;
    icenic_post_recv(f);
    uint32_t len = icenic_wait_recv();
    if (len < ICE_FRAME_PAYLOAD + 16 || payload_word(f, 0) != START_TX) {
        printf("ice_tput: expected a start frame {2, N} first\n");
        return 2;
    }
    uint64_t n = payload_word(f, 1);
    ice_turn_around(f);
    ((uint64_t *)(f + ICE_FRAME_PAYLOAD))[0] = DATA;
    flood(f, len, n);
    return 0;
}

int main(int argc, char **argv)
{
    if (nanopu_core_id() != 0)
        return 0;
    return nanopu_arg_u64(argc, argv, 0, 0) ? transmit() : receive(nanopu_arg_u64(argc, argv, 1, 100));
}
