/* loopback.c - sends one message to its own IP (argv[2]) and context 0, and reads it back
   from its own RX queue: the NIC hands a message to the node's own address back to the
   node's RX path, never to the port (docs/compat.md). Exits 0 when the header and both
   words came back, 1 when they differ; with nothing back it waits until the time limit. */
#include "lnic.h"

/* "a.b.c.d" as a 32-bit address, a in the top byte. */
static uint64_t parse_ip(const char *s)
{
    uint64_t ip = 0, part = 0;
    for (;; s++) {
        if (*s == '.' || *s == 0) {
            ip = ip << 8 | part;
            part = 0;
            if (*s == 0) {
                return ip;
            }
        } else {
            part = part * 10 + (uint64_t)(*s - '0');
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        return 2;
    }
    uint64_t ip = parse_ip(argv[2]);
    lnic_add_context(0, 0);
    lnic_write_r(ip << 32 | 16);
    lnic_write_r(0x1111);
    lnic_write_r(0x2222);
    lnic_wait();
    uint64_t hdr = lnic_read();
    uint64_t a = lnic_read();
    uint64_t b = lnic_read();
    lnic_msg_done();
    printstr("looped back\n");
    return (hdr >> 32) == ip && (hdr & 0xffff) == 16 && a == 0x1111 && b == 0x2222 ? 0 : 1;
}
