// Negative test: mtvec points outside memory (0x40000000), then an ecall traps. The
// handler's entry cannot be fetched, so every trap faults again at mtvec (privileged spec
// 3.1.7 mtvec, 3.3.1 trap entry). Expected: the simulator stops with a trap loop that names
// the first trap, "environment call (ecall) from M-mode at pc 0x..., instruction
// 0x00000073; then the trap handler (mtvec 0x40000000) trapped at its entry repeatedly:
// instruction access fault at 0x40000000 (outside memory) (trap loop)".
int main(void) {
  __asm__ volatile("csrw mtvec, %0\n ecall" : : "r"(0x40000000ul));
  return 0;
}
