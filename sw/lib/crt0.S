/*
 * crt0.S - start-up code of a nanoPU program (docs/abi.md).
 *
 * Reset state: a0 = hart id, a1 = boot info (0x1000), every hart starts here.
 * Each hart gets a 128 KiB stack+TLS region after _end (docs/platform.md section 2):
 *   region(h) = __stacks_start + h * 128 KiB;  tp = region(h) (TLS, RISC-V ELF
 *   psABI: tp points at the TLS block), sp = region(h+1) (stack grows down).
 * Every hart then calls main(argc, argv) with argc/argv from the boot info (0 and
 * NULL when the boot-info magic is absent, e.g. on QEMU's spike machine) and
 * exits through HTIF with main's return value.
 *
 * .bss is not cleared here: the ELF loader zero-fills p_memsz beyond p_filesz
 * (ELF gABI), and clearing it on one hart would race with the others.
 * mtvec is left alone (0: a trap ends the run with an error, docs/abi.md).
 * Built for a hard-float ABI (__riscv_flen), it turns the FPU on: mstatus.FS =
 * Initial (privileged spec "Extension Context Status"); FS is Off at reset and
 * every F/D instruction would trap.  Soft-float builds leave mstatus untouched.
 * x30/x31 are never touched: in a nanoPU program they are netRX/netTX.
 */
#define STACK_SHIFT 17                  /* 128 KiB */

/* One 8-byte marker: __nanopu_abi for nanoPU programs (x30/x31 are netRX/netTX), or
 * __nanopu_runtime for the IceNIC programs, which are plain RISC-V (sw/Makefile,
 * NANOPU_PLAIN_ABI); either says the program has our runtime (docs/abi.md). */
#ifdef NANOPU_PLAIN_ABI
#define RUNTIME_MARKER __nanopu_runtime
#else
#define RUNTIME_MARKER __nanopu_abi
#endif
    .section .rodata.nanopu_abi, "a"
    .globl RUNTIME_MARKER
    .type RUNTIME_MARKER, @object
    .balign 8
RUNTIME_MARKER:
    .dword 1
    .size RUNTIME_MARKER, 8

    .section .text.init, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    /* No linker relaxation here: gp is not set yet, and __stacks_start sits
     * past .bss where GNU ld's gp relaxation miscomputes its reach. */
    .option push
    .option norelax
    la      gp, __global_pointer$

    /* s0 = hart id, s1 = boot info pointer (kept across the TLS copy) */
    mv      s0, a0
    mv      s1, a1
#ifdef __riscv_flen
    li      t0, 1 << 13                 /* mstatus.FS = Initial */
    csrs    mstatus, t0
    csrwi   fcsr, 0
#endif

    /* tp = region(h), sp = region(h + 1) */
    la      t0, __stacks_start
    slli    t1, s0, STACK_SHIFT
    add     tp, t0, t1
    li      t2, 1 << STACK_SHIFT
    add     sp, tp, t2

    /* TLS: copy .tdata image, zero the rest (.tbss) of this hart's block */
    la      t0, __tdata_start
    la      t1, __tdata_end
    mv      t2, tp
1:  bgeu    t0, t1, 2f
    lb      t3, 0(t0)
    sb      t3, 0(t2)
    addi    t0, t0, 1
    addi    t2, t2, 1
    j       1b
2:  la      t1, __tls_end               /* end of the TLS image ... */
    la      t0, __tdata_start
    sub     t1, t1, t0                  /* ... minus its start = block size */
    add     t1, t1, tp
3:  bgeu    t2, t1, 4f
    sb      zero, 0(t2)
    addi    t2, t2, 1
    j       3b
4:
    /* argc/argv from boot info when the magic "NANOPUBI" is present */
    li      a0, 0
    li      a1, 0
    beqz    s1, 5f
    ld      t0, 0(s1)
    la      t1, __nanopu_boot_magic
    ld      t1, 0(t1)
    bne     t0, t1, 5f
    ld      a0, 48(s1)
    ld      a1, 56(s1)
5:  .option pop
    call    main
    call    nanopu_exit                 /* a0 = main's return value */
6:  j       6b
    .size _start, . - _start

    .section .rodata.nanopu_boot_magic, "a"
    .balign 8
__nanopu_boot_magic:
    .ascii  "NANOPUBI"
