/* testlib.c - CHECK bookkeeping (see testlib.h). */
#include "testlib.h"

static unsigned failures;
static unsigned cases;

void check_eq(const char *name, uint64_t got, uint64_t want)
{
    cases++;
    if (got != want) {
        failures++;
        printf("FAIL #%u %s: got 0x%lx want 0x%lx\n", cases, name,
               (unsigned long)got, (unsigned long)want);
    }
}

int test_finish(const char *suite)
{
    if (failures == 0) {
        printf("PASS %s: %u cases\n", suite, cases);
        return 0;
    }
    printf("FAIL %s: %u of %u cases failed\n", suite, failures, cases);
    return failures > 255 ? 255 : (int)failures;
}
