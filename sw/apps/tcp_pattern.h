/*
 * tcp_pattern.h - the byte pattern of the TCP bulk tests (tcp_bulk.c, tcp_zbulk.c): byte i
 * of the stream from the listening end is tcp_pattern(0, i), from the connecting end
 * tcp_pattern(1, i); neighbouring segments differ, so a byte delivered out of order, twice
 * or not at all is seen. crates/harness/src/clients/tcp.rs computes the same.
 */
#ifndef TCP_PATTERN_H
#define TCP_PATTERN_H

#include <stdint.h>

static inline uint8_t tcp_pattern(uint32_t dir, uint64_t i)
{
    return (uint8_t)(((uint32_t)i * 2654435761u) >> 24) ^ (uint8_t)(i >> 32) ^ (uint8_t)(dir * 0x5a);
}

#endif /* TCP_PATTERN_H */
