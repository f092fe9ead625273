/*
 * hello_picolibc.c - a plain picolibc program (its own crt0, semihosting for
 * console and exit).  No nanoPU ABI symbol: x30/x31 stay ordinary registers
 * (docs/abi.md), showing unmodified RISC-V programs run on the simulator.
 */
#include <stdio.h>

int main(void)
{
    printf("hello from picolibc\n");
    return 0;
}
