// Negative test: a trap handler that itself traps. A load from 0x40000000 (outside memory)
// enters `bad_handler`, whose second instruction is andn (Zbb, "B" extension chapter of the
// unprivileged spec), which nanopu does not model: it traps back into the handler, again
// and again. Expected: the simulator stops with a trap loop naming the first trap ("load
// access fault at 0x40000000 (outside memory) at pc 0x..., instruction 0x...") and then the
// handler's trap "at pc 0x... repeatedly: illegal instruction 0x40b57533 (from the Zbb (bit
// manipulation: basic) extension, which nanopu does not model) (trap loop)".
#include <stdint.h>

void bad_handler(void);
// mtvec needs a 4-byte aligned base (privileged spec 3.1.7); .word keeps the toolchain's
// -march (no Zbb) out of the way: 0x40b57533 is andn a0, a0, a1.
__asm__(".text\n.balign 4\nbad_handler:\n csrr a0, mcause\n .word 0x40b57533\n mret\n");

int main(void) {
  __asm__ volatile("csrw mtvec, %0" : : "r"(&bad_handler));
  volatile uint64_t *p = (volatile uint64_t *)0x40000000ul;
  return (int)*p;
}
