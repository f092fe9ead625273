/*
 * rdma_wire.h - what the servers of the one-sided RDMA-like operations (rdma_ops.h) and
 * their client on another node (rdma_client.c) share of the wire format: the region's size,
 * the op codes and the reply statuses (docs/apps/rdma.md "Wire format").
 */
#ifndef RDMA_WIRE_H
#define RDMA_WIRE_H

#define REGION_BYTES (4ul << 20)
#define REGION_WORDS (REGION_BYTES / 8)
#define MAX_WORDS    64                 /* one 512-byte transfer at most */

enum { OP_READ = 1, OP_WRITE = 2, OP_CAS = 3, OP_FAA = 4, OP_IREAD = 5 };
enum { ST_OK = 0, ST_BAD = 3 };

#endif
