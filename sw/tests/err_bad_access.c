// Negative test: loads from 0x40000000, outside every memory region of the node.
// Expected: the simulator stops with a load access fault naming the address, core and PC.
#include <stdint.h>
int main(void) {
  volatile uint64_t *p = (volatile uint64_t *)0x40000000ul;
  return (int)*p;
}
