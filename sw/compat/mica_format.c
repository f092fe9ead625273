/* mica_format.c - a small key-value server that speaks the nanoPU prototype's MICA request
   format (docs/apps/mica.md "The prototype's request format"), in the prototype's program
   style, so that `nanopu load` with `[load.kv] format = "prototype"` is tested without the
   prototype's code. Keys 1..NKEYS hold 64 value words, preloaded as {k, k + 1, k + 2, 0, ...};
   a request is {service time, send time, op (1 GET, 2 SET), key[0], key[1], key hash} and for
   a SET 64 value words. A GET is answered {service time, send time, the value}; a SET stores
   the value and is answered {service time, send time, 1}. It announces itself to the load
   generator (10.0.0.1) first, as the prototype's server does; service time 0 ends it. */
#include "lnic.h"

#define NKEYS 10000
#define VALUE_WORDS 64
#define HOST_HDR(context, len) ((0x0a000001ull << 32) | ((uint64_t)(context) << 16) | (len))

static uint64_t store[NKEYS + 1][VALUE_WORDS];

static void preload(void)
{
    for (uint64_t k = 1; k <= NKEYS; k++) {
        store[k][0] = k;
        store[k][1] = k + 1;
        store[k][2] = k + 2;
    }
}

/* One request, its header already read; 0 when it asked the server to stop. */
static int serve(uint64_t hdr)
{
    uint64_t service = lnic_read(), sent = lnic_read();
    uint64_t op = lnic_read(), key = lnic_read();
    lnic_read(); /* key[1] */
    lnic_read(); /* the key's hash: not recomputed, as the prototype's server does not */
    uint64_t *v = store[key <= NKEYS ? key : 0];
    int set = op == 2;
    for (int i = 0; set && i < VALUE_WORDS; i++)
        v[i] = lnic_read();
    lnic_write_r((hdr & ~0xffffull) | (set ? 24 : 16 + 8 * VALUE_WORDS));
    lnic_write_r(service);
    lnic_write_r(sent);
    if (set)
        lnic_write_r(1);
    for (int i = 0; !set && i < VALUE_WORDS; i++)
        lnic_write_r(v[i]);
    lnic_msg_done();
    return service != 0;
}

int main(void)
{
    preload();
    lnic_add_context(0, 0);
    lnic_write_r(HOST_HDR(0, 16));
    lnic_write_r(0);
    lnic_write_r(0);
    for (;;) {
        lnic_wait();
        if (!serve(lnic_read()))
            return 0;
    }
}
