/*
 * nanopu.h - the nanoPU register API for bare-metal C programs.
 *
 * docs/platform.md section 2: x30 (t5) is netRX, every read pops the next 8-byte word of
 * the current context's oldest message; x31 (t6) is netTX, every write pushes one
 * word to the transmit queue.  Programs must be compiled with
 * -ffixed-x30 -ffixed-x31 so the compiler never touches these two registers.
 * Every access is an `asm volatile`, so the compiler never merges, drops or
 * reorders two netRX reads or two netTX writes.
 *
 * Names and semantics follow the nanoPU prototype's API (lnic_*).  Platform
 * helpers (nanopu_*) read the boot info described in docs/abi.md.
 */
#ifndef NANOPU_H
#define NANOPU_H

#include <stdint.h>
#include <stddef.h>

/* ---- CSR numbers (docs/platform.md section 2) ---------------------------------- */
#define LMSGSRDY        0x052 /* read: non-zero while the current context's RX queue holds a word */
#define LCURCONTEXT     0x053 /* current context id */
#define LNICCMD         0x054 /* nanokernel commands */
#define LCURPRIORITY    0x055 /* current priority, 0 is highest */
#define LNICUCMD        0x056 /* program commands */
#define LNICRDY         0x057 /* non-zero once the NIC is ready after reset */
#define LTARGETCONTEXT  0x058 /* context the scheduler wants running next */
#define LTARGETPRIORITY 0x059 /* its priority */
#define LMSGCYCLES      0x060 /* priority-0 processing bound, cycles */
#define LIDLECYCLES     0x061 /* idle timeout, cycles */

/* lniccmd bits */
#define LNICCMD_ADD_CONTEXT    (1u << 0)
#define LNICCMD_REMOVE_CONTEXT (1u << 1)
#define LNICCMD_START_TIMER    (1u << 2)
/* lnicucmd bits */
#define LNICUCMD_MSG_DONE (1u << 0)
#define LNICUCMD_IDLE     (1u << 1)

/* mip/mie bit of the NIC interrupt (docs/platform.md section 2: cause 16) */
#define NANOPU_NIC_IRQ     16
#define NANOPU_MIP_NIC     (1ul << NANOPU_NIC_IRQ)

/* Standard CSRs used by the helpers below. */
#define CSR_MHARTID       0xf14
#define CSR_MCYCLE        0xb00
#define CSR_MINSTRET      0xb02
#define CSR_MHPMCOUNTER3  0xb03 /* D-cache misses on the prototype (docs/platform.md section 2) */

/* ---- CSR access -------------------------------------------------------- */
#define NANOPU_STR_(x) #x
#define NANOPU_STR(x) NANOPU_STR_(x)

/* csr must be a compile-time constant (a number or a CSR name). */
#define csr_read(csr) ({ uint64_t _v; \
    __asm__ volatile("csrr %0, " NANOPU_STR(csr) : "=r"(_v) :: "memory"); _v; })
#define csr_write(csr, val) \
    __asm__ volatile("csrw " NANOPU_STR(csr) ", %0" :: "rK"((uint64_t)(val)) : "memory")
#define csr_set(csr, val) \
    __asm__ volatile("csrs " NANOPU_STR(csr) ", %0" :: "rK"((uint64_t)(val)) : "memory")
#define csr_clear(csr, val) \
    __asm__ volatile("csrc " NANOPU_STR(csr) ", %0" :: "rK"((uint64_t)(val)) : "memory")
#define csr_swap(csr, val) ({ uint64_t _v; \
    __asm__ volatile("csrrw %0, " NANOPU_STR(csr) ", %1" : "=r"(_v) : "rK"((uint64_t)(val)) : "memory"); _v; })

/* ---- Application header (docs/platform.md section 2) ---------------------------
 * bits 63..32 IPv4 address, 31..16 context id, 15..0 payload length in bytes.
 * On receive the fields name the sender, on send the destination. */
#define LNIC_IP_MASK       0xffffffff00000000ull
#define LNIC_CONTEXT_MASK  0x00000000ffff0000ull
#define LNIC_LEN_MASK      0x000000000000ffffull
#define LNIC_IP_SHIFT      32
#define LNIC_CONTEXT_SHIFT 16
#define LNIC_WORD_BYTES    8

static inline uint64_t lnic_hdr(uint32_t ip, uint16_t context, uint16_t len)
{
    return ((uint64_t)ip << LNIC_IP_SHIFT) |
           ((uint64_t)context << LNIC_CONTEXT_SHIFT) | len;
}
static inline uint32_t lnic_hdr_ip(uint64_t hdr) { return (uint32_t)(hdr >> LNIC_IP_SHIFT); }
static inline uint16_t lnic_hdr_context(uint64_t hdr) { return (uint16_t)(hdr >> LNIC_CONTEXT_SHIFT); }
static inline uint16_t lnic_hdr_len(uint64_t hdr) { return (uint16_t)(hdr & LNIC_LEN_MASK); }
/* Number of 8-byte words the payload occupies on netRX/netTX. */
static inline uint32_t lnic_hdr_words(uint64_t hdr)
{
    return (lnic_hdr_len(hdr) + LNIC_WORD_BYTES - 1) / LNIC_WORD_BYTES;
}
/* Build an IPv4 address in host order: NANOPU_IP(10,0,0,2). */
#define NANOPU_IP(a, b, c, d) \
    (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))
/* The test host listens at 10.0.0.1; nodes are 10.0.0.(2+n) (docs/platform.md section 2). */
#define NANOPU_HOST_IP NANOPU_IP(10, 0, 0, 1)

/* ---- Context management (nanokernel side) ----------------------------- */

/* Register context `context_id` with `priority` on this core: write lcurcontext
 * and lcurpriority, then lniccmd bit0.  It becomes the current context. */
static inline void lnic_add_context(uint64_t context_id, uint64_t priority)
{
    csr_write(LCURCONTEXT, context_id);
    csr_write(LCURPRIORITY, priority);
    csr_write(LNICCMD, LNICCMD_ADD_CONTEXT);
}
/* Remove the current context (lniccmd bit1). */
static inline void lnic_remove_context(void) { csr_write(LNICCMD, LNICCMD_REMOVE_CONTEXT); }
/* (Re)start the message timer (lniccmd bit2). */
static inline void lnic_start_timer(void) { csr_write(LNICCMD, LNICCMD_START_TIMER); }

/* ---- Receive ------------------------------------------------------------ */

/* Non-zero while the current context's local RX queue holds a word (lmsgsrdy). */
static inline uint64_t lnic_ready(void) { return csr_read(LMSGSRDY); }
/* Spin until a word is available on netRX. */
static inline void lnic_wait(void) { while (lnic_ready() == 0) { } }
/* Pop one word from netRX. */
static inline uint64_t lnic_read(void)
{
    uint64_t v;
    __asm__ volatile("mv %0, t5" : "=r"(v));
    return v;
}

/* ---- Transmit ----------------------------------------------------------- */

/* Push the value of a register to netTX. */
static inline void lnic_write_r(uint64_t x) { __asm__ volatile("mv t6, %0" :: "r"(x)); }
/* Push a 12-bit signed immediate to netTX (li t6, imm; larger values need lnic_write_r). */
#define lnic_write_i(imm) __asm__ volatile("li t6, %0" :: "i"(imm))
/* Load a u64 lvalue from memory straight into netTX (ld t6, mem). */
#define lnic_write_m(mem) __asm__ volatile("ld t6, %0" :: "m"(mem))
/* Forward one word: pop netRX, push netTX (mv t6, t5). */
static inline void lnic_copy(void) { __asm__ volatile("mv t6, t5"); }
/* Pop netRX, add a 12-bit immediate, push netTX (addi t6, t5, imm). */
#define lnic_add_int_i(imm) __asm__ volatile("addi t6, t5, %0" :: "i"(imm))

/* Compare the next netRX word (popped, read semantics) with `reg` using the
 * branch mnemonic `cond` ("beq", "bne", "blt", "bge", "bltu", "bgeu") and jump
 * to C label `label` if taken: e.g. lnic_branch("bne", expected, mismatch). */
#define lnic_branch(cond, reg, label) \
    __asm__ goto(cond " t5, %0, %l[" #label "]" :: "r"((uint64_t)(reg)) :: label)

/* ---- Program commands (lnicucmd) ---------------------------------------- */

/* The current message has been consumed (lnicucmd bit0): JBSQ may deliver the next. */
static inline void lnic_msg_done(void) { csr_write(LNICUCMD, LNICUCMD_MSG_DONE); }
/* The current context has nothing to do (lnicucmd bit1). */
static inline void lnic_idle(void) { csr_write(LNICUCMD, LNICUCMD_IDLE); }

/* ---- Platform (docs/abi.md) --------------------------------------------- */

#define NANOPU_BOOT_INFO      0x1000ul
#define NANOPU_BOOT_MAGIC     0x494255504f4e414eull /* "NANOPUBI" little-endian */
#define NANOPU_STACK_BYTES    (128ul * 1024)        /* per-hart stack + TLS */
#define NANOPU_DRAM_BASE      0x80000000ul
#define NANOPU_DRAM_DEFAULT   (256ul << 20)

/* Boot info words (docs/abi.md "Boot info") */
enum nanopu_boot_word {
    NANOPU_BI_MAGIC, NANOPU_BI_VERSION, NANOPU_BI_NCORES, NANOPU_BI_NODE,
    NANOPU_BI_MAC, NANOPU_BI_IP, NANOPU_BI_ARGC, NANOPU_BI_ARGV,
    NANOPU_BI_DRAM_BASE, NANOPU_BI_DRAM_SIZE, NANOPU_BI_SCHED_TIMER, NANOPU_BI_RTC_CYCLES
};

static inline const volatile uint64_t *nanopu_boot_info(void)
{
    return (const volatile uint64_t *)NANOPU_BOOT_INFO;
}
/* True when a loader wrote boot info (false e.g. on QEMU's spike machine). */
static inline int nanopu_has_boot_info(void)
{
    return nanopu_boot_info()[NANOPU_BI_MAGIC] == NANOPU_BOOT_MAGIC;
}
static inline uint64_t nanopu_boot_word(enum nanopu_boot_word w, uint64_t fallback)
{
    return nanopu_has_boot_info() ? nanopu_boot_info()[w] : fallback;
}
static inline uint64_t nanopu_core_id(void) { return csr_read(CSR_MHARTID); }
static inline uint64_t nanopu_num_cores(void) { return nanopu_boot_word(NANOPU_BI_NCORES, 1); }
static inline uint64_t nanopu_node_index(void) { return nanopu_boot_word(NANOPU_BI_NODE, 0); }
/* Default when absent: 10.0.0.2, node 0's address. */
static inline uint32_t nanopu_node_ip(void)
{
    return (uint32_t)nanopu_boot_word(NANOPU_BI_IP, NANOPU_IP(10, 0, 0, 2));
}
static inline uint64_t nanopu_node_mac(void) { return nanopu_boot_word(NANOPU_BI_MAC, 0); }
/* Period of the timer-driven scheduler baseline in cycles; 0 (the default) selects the
 * NIC-driven thread scheduler.  Set by the simulator's nic.sched_timer_cycles. */
static inline uint64_t nanopu_sched_timer_cycles(void)
{
    return nanopu_boot_word(NANOPU_BI_VERSION, 1) >= 2 ? nanopu_boot_word(NANOPU_BI_SCHED_TIMER, 0) : 0;
}

/* Core cycles per tick of the CLINT's mtime (the real-time clock: 1 MHz on the prototype,
 * 3200 cycles at 3.2 GHz; docs/abi.md).  1 without boot info (mtime counts cycles). */
static inline uint64_t nanopu_rtc_cycles(void)
{
    uint64_t c = nanopu_boot_word(NANOPU_BI_VERSION, 1) >= 2 ? nanopu_boot_word(NANOPU_BI_RTC_CYCLES, 1) : 1;
    return c ? c : 1;
}

static inline uint64_t read_mcycle(void) { return csr_read(CSR_MCYCLE); }
static inline uint64_t read_minstret(void) { return csr_read(CSR_MINSTRET); }
static inline uint64_t read_dcache_misses(void) { return csr_read(CSR_MHPMCOUNTER3); }

/* Send a one-word boot message to the test host (10.0.0.1, context 0); the
 * payload is this core's id.  Tells the host the core is up and serving. */
static inline void lnic_boot_msg(void)
{
    lnic_write_r(lnic_hdr(NANOPU_HOST_IP, 0, LNIC_WORD_BYTES));
    lnic_write_r(nanopu_core_id());
}

/* Register context 0 at priority 0 (first announcing the core with a boot
 * message when built with -DBOOT_MSG) and serve forever: wait for a message,
 * then let serve() consume it. The server loop of every microbenchmark app;
 * at -O2 the call through `serve` is inlined. */
static inline void __attribute__((noreturn)) lnic_serve_forever(void (*serve)(void))
{
    lnic_add_context(0, 0);
#ifdef BOOT_MSG
    lnic_boot_msg();
#endif
    for (;;) {
        lnic_wait();
        serve();
    }
}

/* ---- Multicast and cluster helpers ------------------------------------------ */

/* A multicast message's header carries IP 224.0.0.0, the destination context and
 * the payload length; it is followed by ONE group word (not counted in the
 * length): bits 63..32 the first node, bits 31..0 the number of nodes of a
 * contiguous node range. The network delivers the message once to every node of
 * the range except the sender (docs/models/network.md). */
#define NANOPU_MULTICAST_IP NANOPU_IP(224, 0, 0, 0)

static inline void lnic_write_multicast_hdr(uint32_t first, uint32_t count, uint16_t context, uint16_t len)
{
    lnic_write_r(lnic_hdr(NANOPU_MULTICAST_IP, context, len));
    lnic_write_r(((uint64_t)first << 32) | count);
}

/* Node index of a node's IPv4 address (10.0.0.(2+n), docs/platform.md section 2). */
static inline uint32_t nanopu_node_of_ip(uint32_t ip) { return ip - NANOPU_IP(10, 0, 0, 2); }
static inline uint32_t nanopu_ip_of_node(uint64_t node) { return NANOPU_IP(10, 0, 0, 2) + (uint32_t)node; }

/* User argument i (0 = argv[3], the first after program, MAC and IP) as a decimal
 * number, or `fallback` if absent or not a number. */
static inline uint64_t nanopu_arg_u64(int argc, char **argv, int i, uint64_t fallback)
{
    if (argc <= 3 + i || argv[3 + i][0] < '0' || argv[3 + i][0] > '9')
        return fallback;
    uint64_t v = 0;
    for (const char *p = argv[3 + i]; *p >= '0' && *p <= '9'; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    return v;
}

/* ---- Trap entry ------------------------------------------------------------ */

/*
 * NANOPU_TRAP_ENTRY(name, cfunc): an assembly trap entry `name` that saves the
 * caller-saved registers, calls `void cfunc(void)` and returns with mret.
 * GCC's interrupt("machine") attribute is NOT used: it saves and restores t5
 * and t6 even under -ffixed-x30/-x31, and in a nanoPU program those accesses
 * would pop netRX and push netTX (docs/platform.md section 2); an IceNIC node's core
 * refuses them (docs/models/icenic.md).  x30/x31 are never touched.
 */
#define NANOPU_TRAP_ENTRY(name, cfunc) \
    __asm__(".section .text\n.balign 4\n.globl " #name "\n" #name ":\n" \
            " addi sp, sp, -128\n" \
            " sd ra, 0(sp)\n sd t0, 8(sp)\n sd t1, 16(sp)\n sd t2, 24(sp)\n" \
            " sd t3, 32(sp)\n sd t4, 40(sp)\n sd a0, 48(sp)\n sd a1, 56(sp)\n" \
            " sd a2, 64(sp)\n sd a3, 72(sp)\n sd a4, 80(sp)\n sd a5, 88(sp)\n" \
            " sd a6, 96(sp)\n sd a7, 104(sp)\n" \
            " call " #cfunc "\n" \
            " ld ra, 0(sp)\n ld t0, 8(sp)\n ld t1, 16(sp)\n ld t2, 24(sp)\n" \
            " ld t3, 32(sp)\n ld t4, 40(sp)\n ld a0, 48(sp)\n ld a1, 56(sp)\n" \
            " ld a2, 64(sp)\n ld a3, 72(sp)\n ld a4, 80(sp)\n ld a5, 88(sp)\n" \
            " ld a6, 96(sp)\n ld a7, 104(sp)\n" \
            " addi sp, sp, 128\n mret\n")

/* ---- Runtime library (sw/lib) -------------------------------------------- */
void nanopu_exit(int code) __attribute__((noreturn));
int putchar(int c);
int puts(const char *s);
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *nanopu_malloc(size_t bytes);
uintptr_t nanopu_heap_start(void);

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);

#endif /* NANOPU_H */
