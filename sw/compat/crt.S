/* crt.S - start code of the prototype-style runtime: every hart gets a 128 KiB stack
   above _end (rounded up to 64 bytes), as the prototype's programs (docs/platform.md
   section 2), and calls _init(hartid); no trap handler (mtvec stays 0). */
  .section .text.init, "ax"
  .globl _start
_start:
  .option push
  .option norelax
  la gp, __global_pointer$
  .option pop
  csrr a0, mhartid
  la t0, _end
  addi t0, t0, 63
  andi t0, t0, -64
  addi t1, a0, 1
  slli t1, t1, 17
  add sp, t0, t1
  li a1, 0
  j _init
