/*
 * ice_stream.c - stream on an IceNIC node (`--nic icenic`, docs/models/icenic.md): every
 * 8-byte word of a frame's UDP payload comes back incremented by one, as stream.c does on
 * the nanoPU (there with `addi t6, t5, 1` from netRX to netTX; here the core loads each
 * word the NIC wrote into memory, adds one and stores it back before the frame is sent
 * from the same buffer).  Words are in the cores' (little-endian) byte order, as nanoPU
 * message words are.  A payload that is not a whole number of words stops the program
 * with exit code 2.  The serving loop and the arguments are ice_echo.h's.
 */
#include "ice_echo.h"

static const char *increment(uint8_t *f, uint32_t len)
{
    uint32_t bytes = len - ICE_FRAME_PAYLOAD;
    if (bytes % 8 != 0)
        return "payload is not a whole number of 8-byte words";
    uint64_t *w = (uint64_t *)(f + ICE_FRAME_PAYLOAD);
    for (uint32_t i = 0; i < bytes / 8; i++)
        w[i] += 1;
    return 0;
}

int main(int argc, char **argv)
{
    return ice_serve(argc, argv, "ice_stream", increment);
}
