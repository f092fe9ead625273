/*
 * tcp_kv.h - the text protocol of the key-value workload (tcp_kv.c, tcp_kv_client.c, and
 * rdma_kv.c, rdma_kv_client.c on the RDMA NIC;
 * docs/apps/tcp-workloads.md): a subset of RESP, Redis's serialization protocol
 * (redis.io/docs/latest/develop/reference/protocol-spec/, RESP2): a request is an array of
 * bulk strings, `*N\r\n` then N times `$LEN\r\nBYTES\r\n`; GET key answers a bulk string
 * (`$LEN\r\nVALUE\r\n`) or the null bulk string `$-1\r\n`, SET key value answers the simple
 * string `+OK\r\n`, anything else an error `-ERR ...\r\n`.
 */
#ifndef TCP_KV_H
#define TCP_KV_H

#include <stdint.h>

#define KV_KEY_MAX 32   /* bytes of a key */
#define KV_VAL_MAX 1024 /* bytes of a value */
/* Room a request may need: the largest key and value and the framing. */
#define KV_REQ_MAX (KV_KEY_MAX + KV_VAL_MAX + 64)
/* Room a reply may need: the largest value, its length line and the framing. */
#define KV_REPLY_MAX (KV_VAL_MAX + 32)
/* The deepest pipeline a client keeps: requests outstanding. */
#define KV_MAX_DEPTH 256
/* QUIT, Redis's command to end a connection (answered +OK): how a client over a transport
 * without connections (rdma_kv_client.c) says it is done. */
#define KV_QUIT "*1\r\n$4\r\nQUIT\r\n"
#define KV_QUIT_LEN 14

/* Write `v` in decimal at `p`; the digits written. */
static inline uint32_t kv_put_dec(uint8_t *p, uint64_t v)
{
    uint8_t t[20];
    uint32_t n = 0, i = 0;
    do
        t[n++] = (uint8_t)('0' + v % 10);
    while (v /= 10);
    for (; i < n; i++)
        p[i] = t[n - 1 - i];
    return n;
}

/* Parse a decimal line ending in \r\n at p[0..len): its value, and in *used the bytes up to
 * and including the \r\n; 0 with *used 0 if the line is not all there yet, -2 if malformed.
 * A leading '-' gives a negative value (the null bulk string's length, -1). */
static inline int64_t kv_get_dec(const uint8_t *p, uint32_t len, uint32_t *used)
{
    uint32_t i = p[0] == '-';
    int64_t v = 0;
    *used = 0;
    for (; i < len && p[i] >= '0' && p[i] <= '9' && i < 12; i++)
        v = v * 10 + (p[i] - '0');
    if (i + 1 >= len)
        return i >= 12 ? -2 : 0;
    if (p[i] != '\r' || p[i + 1] != '\n' || i == (uint32_t)(p[0] == '-'))
        return -2;
    *used = i + 2;
    return p[0] == '-' ? -v : v;
}

#endif /* TCP_KV_H */
