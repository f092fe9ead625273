// Negative test: writes a netTX header announcing 4000 payload bytes, beyond the default
// maximum of 2048 (nic.max_msg_bytes). Expected: the simulator stops naming the length.
int main(void) {
  unsigned long hdr = (0x0a000002ul << 32) | (0ul << 16) | 4000ul;
  __asm__ volatile("mv t6, %0" ::"r"(hdr));
  return 0;
}
