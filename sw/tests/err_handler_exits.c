// Negative test: a trap handler that exits. A load from 0x40000000 (outside memory) enters
// `exit_handler`, which exits with code 7, as a runtime's handler does when it gives up on a
// trap (the prototype's `lnic-sort.c` ends that way on 256 cores: experiments/
// nanosort-prototype). Expected: the run reports the exit code and the trap that entered
// the handler: "exited with code 7 from its trap handler, entered by load access fault at
// 0x40000000 (outside memory) at pc 0x..., instruction 0x...".
#include <stdint.h>
#include "nanopu.h"

// mtvec needs a 4-byte aligned base (privileged spec 3.1.7).
__attribute__((aligned(4), noreturn)) static void exit_handler(void) { nanopu_exit(7); }

int main(void) {
  __asm__ volatile("csrw mtvec, %0" : : "r"(&exit_handler));
  volatile uint64_t *p = (volatile uint64_t *)0x40000000ul;
  return (int)*p;
}
