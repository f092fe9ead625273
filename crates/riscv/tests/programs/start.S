/* Minimal start-up for the ISS tests: sp, gp, call main(hart, bootinfo), exit via HTIF. */
    .section .text.init, "ax", @progbits
    .globl _start
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, _stack_top
    call    main
    /* exit(a0): tohost = (code << 1) | 1 */
    slli    a0, a0, 1
    ori     a0, a0, 1
    la      t0, tohost
    sd      a0, 0(t0)
1:  j       1b

    .section .htif, "aw", @progbits
    .balign 8
    .globl tohost, fromhost
tohost:   .dword 0
fromhost: .dword 0
