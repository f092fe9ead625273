/*
 * echo_once.c - core 0 answers exactly one message on context 0 (echoes it to its
 * sender) and exits; the other cores exit at once. The reply is still on its way to the
 * test host when the last core exits, so a run that ended at the last exit would lose it
 * (the reliability tests use it; docs/reliability.md).
 */
#include "nanopu.h"

int main(void)
{
    if (nanopu_core_id() != 0)
        return 0;
    lnic_add_context(0, 0);
    uint64_t hdr = lnic_read();
    lnic_write_r(hdr);
    for (uint32_t i = 0; i < lnic_hdr_words(hdr); i++)
        lnic_copy();
    lnic_msg_done();
    return 0;
}
