/*
 * alltoall.c - every node sends one message to every other node (issue:
 * datacenter network). Args: N nodes (argv[3], default 64), B bytes per message
 * (argv[4], default 256, a multiple of 8; above 2048 needs a larger
 * nic.max_msg_bytes). Word i of the message from src to dst is
 * (src << 40) | (dst << 20) | i. Core 0 of each node registers context 0
 * (before sending, so early arrivals are accepted), sends its N-1 messages,
 * then receives N-1 (the NIC buffers what arrives meanwhile), checking every
 * word and that each sender appears exactly once; other cores exit at once.
 * Built as alltoall.elf, the sender writes a word in four instructions (about
 * 4 cycles, 165 ns per 1 KiB message, 3.8 times a packet's time on a 200 Gb/s
 * link); built as alltoall_unrolled.elf (alltoall_unrolled.c defines
 * UNROLLED_SEND), in one, 32 words per loop iteration (about 1.2 cycles a
 * word), so that the cores nearly keep up with their links (docs/models/network.md,
 * "What the experiments show").
 */
#include "nanopu.h"

#define MAX_NODES 4096

static uint8_t seen[MAX_NODES];

static uint64_t word(uint64_t src, uint64_t dst, uint64_t i) { return (src << 40) | (dst << 20) | i; }

#ifdef UNROLLED_SEND
#define ADDI4(k) "addi t6, %0, " #k "\n\taddi t6, %0, " #k "+1\n\taddi t6, %0, " #k "+2\n\taddi t6, %0, " #k "+3\n\t"
/* Words x .. x + 31 (x's low 5 bits are zero, so + is |), one instruction each. */
static inline void write32(uint64_t x)
{
    __asm__ volatile("mv t6, %0\n\taddi t6, %0, 1\n\taddi t6, %0, 2\n\taddi t6, %0, 3\n\t"
                     ADDI4(4) ADDI4(8) ADDI4(12) ADDI4(16) ADDI4(20) ADDI4(24) ADDI4(28) :: "r"(x));
}
#endif

/* The payload of the message from me to d, word by word. */
static void send_words(uint64_t me, uint64_t d, uint64_t words)
{
    uint64_t i = 0;
#ifdef UNROLLED_SEND
    for (; i + 32 <= words; i += 32)
        write32(word(me, d, i));
#endif
    for (; i < words; i++)
        lnic_write_r(word(me, d, i));
}

/* One message to every node d != me, context 0 (node d is 10.0.0.(2+d), docs/platform.md section 2). */
static void send_all(uint64_t me, uint64_t n, uint64_t words)
{
    for (uint64_t d = 0; d < n; d++) {
        if (d == me)
            continue;
        lnic_write_r(lnic_hdr(NANOPU_IP(10, 0, 0, 2) + (uint32_t)d, 0,
                              (uint16_t)(LNIC_WORD_BYTES * words)));
        send_words(me, d, words);
    }
}

/* The header's problem, or NULL if it comes from a new sender in [0, n) \ {me} with the right length. */
static const char *check_hdr(uint64_t hdr, uint32_t from, uint64_t me, uint64_t n, uint64_t words)
{
    if (lnic_hdr_words(hdr) != words)
        return "wrong length";
    if (from >= n || from == me)
        return "sender out of range";
    if (seen[from]++)
        return "duplicate sender";
    return NULL;
}

/* Read one message (always all of it); 0 if intact and from a sender not seen before. */
static int check_one(uint64_t me, uint64_t n, uint64_t words)
{
    uint64_t hdr = lnic_read();
    uint32_t from = nanopu_node_of_ip(lnic_hdr_ip(hdr));
    const char *err = check_hdr(hdr, from, me, n, words);
    int bad = err != NULL;
    if (err)
        printf("alltoall: node %lu: message from node %u (%u bytes): %s\n", me, from, lnic_hdr_len(hdr), err);
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++) {
        uint64_t w = lnic_read();
        if (w != word(from, me, i) && !bad) {
            printf("alltoall: node %lu: word %u from node %u is %lx, expected %lx\n",
                   me, i, from, w, word(from, me, i));
            bad = 1;
        }
    }
    lnic_msg_done();
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t n = nanopu_arg_u64(argc, argv, 0, 64), bytes = nanopu_arg_u64(argc, argv, 1, 256);
    uint64_t me = nanopu_node_index(), words = bytes / LNIC_WORD_BYTES;
    if (nanopu_core_id() != 0 || me >= n)
        return 0;
    if (n > MAX_NODES || bytes % LNIC_WORD_BYTES != 0 || bytes > LNIC_LEN_MASK) {
        printf("alltoall: need N <= %d and B a multiple of 8, < 65536 (N=%lu, B=%lu)\n", MAX_NODES, n, bytes);
        return 1;
    }
    lnic_add_context(0, 0);
    send_all(me, n, words);
    int bad = 0;
    for (uint64_t k = 0; k + 1 < n; k++) {
        lnic_wait();
        bad |= check_one(me, n, words);
    }
    if (!bad)
        printf("alltoall: node %lu received %lu messages, all intact\n", me, n - 1);
    return bad;
}
