/*
 * alltoall_unrolled.c - alltoall.c with a sender that writes one word per
 * instruction (see alltoall.c): the all-to-all with the cores keeping up with
 * their links, as a transport simulator's hosts do (docs/models/network.md).
 */
#define UNROLLED_SEND 1
#include "alltoall.c"
