// Negative test: never exits. Expected: the cycle limit, with where each core was.
int main(void) {
  for (;;) __asm__ volatile("");
}
