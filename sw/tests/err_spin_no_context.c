// Negative test: spins in lnic_wait() without ever registering a context, so no message
// can arrive. Expected: the run ends as quiescent at once (the core is parked), not a
// simulator that re-dispatches the core at the same cycle forever (it did).
#include "nanopu.h"
int main(void)
{
    lnic_wait();
    return 0;
}
