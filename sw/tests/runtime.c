/*
 * runtime.c - the nanoPU C runtime itself (sw/lib): crt0's per-hart stack and
 * TLS (docs/abi.md: 128 KiB per hart after _end, tp = TLS block), argc/argv,
 * boot-info helpers, the bump allocator, the string functions and printf.
 */
#include "testlib.h"

static __thread uint64_t tls_init = 0x1234567890abcdef;
static __thread uint64_t tls_zero;
extern char _end[];

static void test_stack_and_tls(void)
{
    uint64_t sp, tp;
    __asm__ volatile("mv %0, sp\n mv %1, tp" : "=r"(sp), "=r"(tp));
    uint64_t region = tp;
    CHECK_TRUE("tp after _end", region >= (uint64_t)_end);
    CHECK("tp 128 KiB aligned per hart", (region - ((uint64_t)_end + 4095) / 4096 * 4096)
          % NANOPU_STACK_BYTES, 0);
    CHECK_TRUE("sp inside this hart's region", sp > region && sp < region + NANOPU_STACK_BYTES);
    CHECK("tls .tdata copied", tls_init, 0x1234567890abcdef);
    CHECK("tls .tbss zeroed", tls_zero, 0);
    CHECK("tls address", (uint64_t)&tls_init, region);
    tls_zero = 5;
    CHECK("tls write", tls_zero, 5);
}

static void test_boot_info(int argc, char **argv)
{
    if (!nanopu_has_boot_info()) {
        CHECK("argc without boot info", argc, 0);
        CHECK("argv without boot info", (uint64_t)argv, 0);
        CHECK("1 core without boot info", nanopu_num_cores(), 1);
        return;
    }
    CHECK_TRUE("argc >= 3 (program MAC IP)", argc >= 3);
    CHECK("argc from boot info", argc, nanopu_boot_info()[NANOPU_BI_ARGC]);
    CHECK_TRUE("core id < cores", nanopu_core_id() < nanopu_num_cores());
    CHECK("node ip 10.0.0.(2+node)", nanopu_node_ip(), NANOPU_IP(10, 0, 0, 2 + nanopu_node_index()));
    for (int i = 0; i < argc; i++) {
        printf("argv[%d] = %s\n", i, argv[i]);
    }
}

static void test_malloc(void)
{
    uint8_t *a = nanopu_malloc(10), *b = nanopu_malloc(100);
    CHECK("malloc aligned", (uint64_t)a % 16, 0);
    CHECK_TRUE("malloc after stacks", (uint64_t)a >= nanopu_heap_start());
    CHECK_TRUE("malloc no overlap", b >= a + 10);
    memset(b, 0x5a, 100);
    CHECK("malloc usable", b[99], 0x5a);
    CHECK("malloc too big", (uint64_t)nanopu_malloc(1ull << 40), 0);
}

static void test_strings(void)
{
    char buf[32];
    memset(buf, 'x', sizeof(buf));
    memcpy(buf, "hello, world", 13);
    CHECK("strlen", strlen(buf), 12);
    CHECK("strcmp eq", strcmp(buf, "hello, world"), 0);
    CHECK_TRUE("strcmp lt", strcmp("abc", "abd") < 0);
    CHECK_TRUE("memcmp gt", memcmp("b", "a", 1) > 0);
    memmove(buf + 2, buf, 12);              /* overlapping, forward */
    CHECK("memmove fwd", memcmp(buf, "hehello, world", 14), 0);
    memmove(buf, buf + 2, 12);              /* overlapping, backward */
    CHECK("memmove back", memcmp(buf, "hello, world", 12), 0);
    CHECK("memset tail", buf[31], 'x');
}

static void test_printf(void)
{
    int n = printf("printf: [%d] [%i] [%u] [%x] [%lx] [%ld] [%lu] [%llu] [%lld] [%s] [%c] [%%]\n",
                   -42, 7, 3000000000u, 0xbeef, 0x123456789abcdefUL, -9000000000L,
                   18000000000000000000UL, 18446744073709551615ULL, -9223372036854775807LL - 1,
                   "str", 'c');
    CHECK("printf count", n, 153);
    n = printf("widths: [%5d] [%-5d] [%05d] [%08lx] [%3s] [%p]\n", 42, 42, -42, 0xabcUL, "x",
               (void *)0x1000);
    CHECK("printf widths count", n, 58);
}

int main(int argc, char **argv)
{
    test_stack_and_tls();
    test_boot_info(argc, argv);
    test_malloc();
    test_strings();
    test_printf();
    return test_finish("runtime");
}
