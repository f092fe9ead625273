/* recurse.c - a function that calls itself without end: its stack grows down from hart 0's
   stack through the program's data and text until the core executes what it stored
   there, as the prototype's start-up does when GCC turns syscalls.c's byte-loop memset
   into a call to memset (docs/compat.md). nanopu names the stack overflow, the stack's
   range and the call that recurses. */
#include <stdint.h>

/* Never reached: keeps the compiler from proving the recursion endless. */
volatile uint64_t depth_limit = UINT64_MAX;
volatile uint64_t depth;

__attribute__((noinline)) uint64_t descend(uint64_t n)
{
    volatile uint64_t frame[2] = {n, n + 1};
    depth = n;
    if (n == depth_limit) {
        return 0;
    }
    return descend(n + 1) + frame[1];
}

int main(void)
{
    return (int)descend(0);
}
