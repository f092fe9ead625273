// Negative test: an instruction from a standard extension nanopu does not model, sh1add
// (Zba, the "B" extension chapter of the unprivileged spec), emitted as .word because the
// toolchain's -march has no Zba. Expected: the simulator stops with "illegal instruction
// 0x20b52533 (from the Zba (bit manipulation: address generation) extension, which nanopu
// does not model)", naming core and PC.
int main(void) {
  __asm__ volatile(".word 0x20b52533"); // sh1add a0, a0, a1
  return 0;
}
