/*
 * ice_loopback_bswap.c - ice_loopback.c built to swap header bytes with the IceNIC cores'
 * byte-swap instructions (sw/include/icenic.h, ICENIC_BSWAP_INSN; docs/models/icenic.md
 * "Frames"). Runs on IceNIC nodes only: elsewhere the instruction is illegal.
 */
#define ICENIC_BSWAP_INSN
#include "ice_loopback.c"
