/*
 * erpc_server_nodedup.c - erpc_server.c with the server's duplicate detection removed
 * (a resent request runs its handler again). A mutant for the tests only
 * (crates/harness/tests/erpc.rs): they must see it execute a request twice.
 */
#define ERPC_MUTANT_NO_DEDUP
#include "erpc_server.c"
