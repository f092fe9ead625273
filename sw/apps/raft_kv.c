/*
 * raft_kv.c - raft.c with the nanoPU prototype's 16-byte keys and 64-byte values
 * (l-nic/chipyard, software/raft/raft_server_riscv/main.cc: kAppKeySize 16, kAppValueSize
 * 64): every SET carries 8 more words, which the log, AppendEntries and the store carry
 * with its key and value (docs/apps/raft.md "Keys and values").
 */
#define RAFT_EXTRA 8
#include "raft.c"
