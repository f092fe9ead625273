// Negative test: sets lcurcontext (CSR 0x053) to 70000, beyond the 16-bit context id.
// Expected: the simulator stops with "context id 70000 is out of range".
int main(void) {
  unsigned long id = 70000;
  __asm__ volatile("csrw 0x053, %0" ::"r"(id));
  return 0;
}
