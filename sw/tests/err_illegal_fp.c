// Negative test: executes an F-extension instruction (fadd.s f0,f0,f0 = 0x00000053).
// Expected: the simulator stops with "illegal instruction 0x00000053", naming core and PC.
int main(void) {
  __asm__ volatile(".word 0x00000053");
  return 0;
}
