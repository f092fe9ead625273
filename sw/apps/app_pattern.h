/*
 * app_pattern.h - the checked byte pattern of the workloads (docs/apps/tcp-workloads.md):
 * tcp_flows.c's streams and the key-value clients' values (kv_client.h), on every stack.
 * Standalone (no NIC, no TCP), so programs on any NIC can use it.
 */
#ifndef APP_PATTERN_H
#define APP_PATTERN_H

#include <stdint.h>

/* Byte i of the stream with seed `seed`: neighbouring segments differ, and streams of
 * different seeds are the same sequence shifted far apart, so a byte delivered twice, late,
 * or in another flow's stream is caught. */
static inline uint8_t tapp_pattern(uint32_t seed, uint64_t i)
{
    uint32_t x = ((uint32_t)i + seed * 0x01000193u) * 2654435761u;
    return (uint8_t)(x >> 24) ^ (uint8_t)(i >> 32);
}

#endif /* APP_PATTERN_H */
