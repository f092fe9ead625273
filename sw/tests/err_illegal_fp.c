// Negative test: executes an F-extension instruction (fadd.s f0,f0,f0 = 0x00000053) in a
// soft-float (rv64imac/lp64) program, whose crt0 leaves mstatus.FS Off (its reset value):
// with the FPU off every F/D instruction is illegal (privileged spec "Extension Context
// Status"). Expected: the simulator stops with "illegal instruction 0x00000053", naming
// core and PC. (rv64f/rv64d show the same instruction running once FS is on.)
int main(void) {
  __asm__ volatile(".word 0x00000053");
  return 0;
}
