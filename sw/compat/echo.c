/* echo.c - answers one message with every word plus one (prototype style: no
   __nanopu_abi symbol; x30/x31 are recognised from the LNIC CSR accesses). */
#include "lnic.h"

int main(int argc, char **argv)
{
    printstr("compat echo on ");
    printstr(argc > 2 ? argv[2] : "?");
    printstr("\n");
    lnic_add_context(0, 0);
    lnic_wait();
    uint64_t hdr = lnic_read();
    uint64_t words = ((hdr & 0xffff) + 7) / 8;
    lnic_write_r(hdr);
    for (uint64_t i = 0; i < words; i++) {
        lnic_write_r(lnic_read() + 1);
    }
    lnic_msg_done();
    return argc == 3 ? 0 : 10 + argc;
}
