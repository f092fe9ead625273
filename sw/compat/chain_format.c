/* chain_format.c - a small chain of three replicas and a proxy client that speak the nanoPU
   prototype's chain replication format (docs/apps/chain.md "The prototype's chain"), in the
   prototype's program style, so that `nanopu chain` with `[chain] format = "prototype"` is
   tested without the prototype's code. The node at 10.0.0.2 is the proxy: a write from the
   load generator (10.0.0.1) goes to the head, 10.0.0.3, with its word 0 replaced by the
   proxy's cycle counter; an answer from the tail goes back to the load generator with word 0
   the cycles since. A replica (10.0.0.3-5) stores the 8 value words of key k (1..NKEYS) in
   place and forwards the write to the first node its list names, dropping it from the list;
   with none left it answers the client named in the metadata without the value. Each node
   announces itself to the load generator with {core, context} = {0, 0} first. */
#include "lnic.h"

#define NKEYS 10000
#define VALUE_WORDS 8
#define LOAD_GEN 0x0a000001ull
#define PROXY 0x0a000002ull
#define HEAD 0x0a000003ull
#define HDR(ip, context, len) (((uint64_t)(ip) << 32) | ((uint64_t)(context) << 16) | (len))

static uint64_t store[NKEYS + 1][VALUE_WORDS];



/* The proxy: forward a write to the head, an answer to the load generator. */
static void proxy(uint64_t hdr)
{
    uint64_t len = hdr & 0xffff, stamp = lnic_read(), now = mcycle();
    int from_gen = (hdr >> 32) == LOAD_GEN;
    lnic_write_r(from_gen ? HDR(HEAD, 0, len) : HDR(LOAD_GEN, 0, len));
    lnic_write_r(from_gen ? now : now - stamp);
    for (uint64_t i = 1; i < len / 8; i++)
        lnic_write_r(lnic_read());
}

/* A replica: store the value, forward down the list or answer the client. */
static void replica(void)
{
    uint64_t service = lnic_read(), sent = lnic_read(), meta = lnic_read();
    uint64_t count = (meta >> 40) & 0xff, nodes[2];
    for (uint64_t i = 0; i < count; i++)
        nodes[i] = lnic_read();
    uint64_t k0 = lnic_read(), k1 = lnic_read(), hash = lnic_read();
    uint64_t *v = store[k0 <= NKEYS ? k0 : 0];
    for (int i = 0; i < VALUE_WORDS; i++)
        v[i] = lnic_read();
    uint64_t rest = count ? count - 1 : 0, words = 6 + rest + (count ? VALUE_WORDS : 0);
    uint64_t to = count ? HDR((uint32_t)nodes[0], nodes[0] >> 32, 8 * words)
                        : HDR((uint32_t)meta, (meta >> 32) & 0xff, 8 * words);
    lnic_write_r(to);
    lnic_write_r(service);
    lnic_write_r(sent);
    lnic_write_r((meta & ~(0xffull << 40)) | rest << 40);
    for (uint64_t i = 1; i < count; i++)
        lnic_write_r(nodes[i]);
    lnic_write_r(k0);
    lnic_write_r(k1);
    lnic_write_r(hash);
    for (int i = 0; count && i < VALUE_WORDS; i++)
        lnic_write_r(v[i]);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int is_proxy = parse_ip(argv[2]) == PROXY;
    lnic_add_context(0, 0);
    lnic_write_r(HDR(LOAD_GEN, 0, 16));
    lnic_write_r(0);
    lnic_write_r(0);
    for (;;) {
        lnic_wait();
        uint64_t hdr = lnic_read();
        if (is_proxy)
            proxy(hdr);
        else
            replica();
        lnic_msg_done();
    }
}
