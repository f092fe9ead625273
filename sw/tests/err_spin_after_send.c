// Negative test: sends a message (to the test host, or to IP 0 with argument "0") and then
// spins in lnic_wait() with no context registered. Expected: the message reaches the host
// and the run ends as quiescent; before, simulated time stood still after the send.
#include "nanopu.h"
int main(int argc, char **argv)
{
    uint32_t ip = (argc > 3 && argv[3][0] == '0') ? 0 : NANOPU_HOST_IP;
    lnic_write_r(lnic_hdr(ip, 0, 64));
    for (int i = 1; i <= 8; i++)
        lnic_write_r(i);
    lnic_wait();
    for (int i = 0; i < 9; i++)
        (void)lnic_read();
    return 0;
}
