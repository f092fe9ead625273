/* loopback.c - sends one message to its own IP (argv[2]) and context 0, and reads it back
   from its own RX queue. The NIC sends every message to its network port, as the
   prototype's does (docs/compat.md): the message comes back through the switch, or from
   the single node's test host, which stands where the prototype's switch stood. Prints
   "looped back after N cycles" (the send's first netTX write to the header's arrival, by
   mcycle) and exits 0 when the header and both words came back, 1 when they differ; with
   nothing back it waits until the time limit. */
#include "lnic.h"



/* Prints "looped back after N cycles\n" without printf (the runtime has printstr only). */
static void print_cycles(uint64_t n)
{
    char buf[64], digits[24];
    int d = 0, at = 0;
    for (const char *head = "looped back after "; *head; head++) {
        buf[at++] = *head;
    }
    do {
        digits[d++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    while (d) {
        buf[at++] = digits[--d];
    }
    const char *tail = " cycles\n";
    while (*tail) {
        buf[at++] = *tail++;
    }
    buf[at] = 0;
    printstr(buf);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    uint64_t ip = parse_ip(argv[2]);
    lnic_add_context(0, 0);
    uint64_t start = mcycle();
    lnic_write_r(ip << 32 | 16);
    lnic_write_r(0x1111);
    lnic_write_r(0x2222);
    lnic_wait();
    uint64_t back = mcycle();
    uint64_t hdr = lnic_read();
    uint64_t a = lnic_read();
    uint64_t b = lnic_read();
    lnic_msg_done();
    print_cycles(back - start);
    return (hdr >> 32) == ip && (hdr & 0xffff) == 16 && a == 0x1111 && b == 0x2222 ? 0 : 1;
}
