/*
 * ice_loopback.c - echo server on an IceNIC node (`--nic icenic`, docs/models/icenic.md):
 * every frame goes back to its sender as it came, its addresses and ports swapped.  The
 * serving loop, the frame check and the arguments (frames to serve, wait mode) are
 * ice_echo.h's.
 */
#include "ice_echo.h"

static const char *echo(uint8_t *f, uint32_t len)
{
    (void)f;
    (void)len;
    return 0;
}

int main(int argc, char **argv)
{
    return ice_serve(argc, argv, "ice_loopback", echo);
}
