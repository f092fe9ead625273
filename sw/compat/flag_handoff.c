/* flag_handoff.c - two harts of one node hand flags to each other through shared memory,
   as the prototype's Rocket cores do through their coherent L1 D-caches and shared L2.
   1. HANDOFFS times, hart 0 spins until its mcycle reaches a start cycle (the first
      20,000, then later ones at varying phases), then stores that mcycle value to a flag;
      hart 1 spins on the flag and reads its own mcycle as soon as it sees it. The delay
      (seen - made) must never be negative (a store seen before it was made) and should be
      a few cycles.
   2. The two harts then hand a counter back and forth ROUNDS times (hart 0 writes odd
      values, hart 1 even ones); hart 0 times the round trips with mcycle.
   Hart 0 prints "made M seen S" (the first handoff), "delay min A max B" (seen - made, all
   of them), "after the store min E max L" (seen minus hart 0's mcycle read just after its store
   completed) and "rounds N cycles C", and exits 0 if no delay was negative. */
#include <stdint.h>
#include "lnic.h"

#define START 20000
#define HANDOFFS 32
#define ROUNDS 1000

/* Each on its own 64-byte line: what one hart writes moves alone between the caches. */
struct line {
    volatile uint64_t v;
} __attribute__((aligned(64)));

static struct line flag[HANDOFFS];
static struct line seen[HANDOFFS];
static uint64_t done[HANDOFFS]; /* hart 0's mcycle once its store completed */
static struct line ball;


static void print_u64(uint64_t v)
{
    char buf[24];
    int i = sizeof buf - 1;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    printstr(&buf[i]);
}

static void print_i64(int64_t v)
{
    if (v < 0) {
        printstr("-");
        v = -v;
    }
    print_u64((uint64_t)v);
}

/* Hart 1's side: wait for each flag, then return the ball every round. */
static void hart1(void)
{
    for (int r = 0; r < HANDOFFS; r++) {
        while (flag[r].v == 0) {
        }
        seen[r].v = mcycle();
    }
    for (uint64_t k = 0; k < ROUNDS; k++) {
        while (ball.v != 2 * k + 1) {
        }
        ball.v = 2 * k + 2;
    }
}

void thread_entry(uint64_t hartid, uint64_t ncores)
{
    (void)ncores;
    if (hartid == 1) {
        hart1();
    }
    while (hartid != 0) {
    }
}

/* Hand flag r over once hart 0's clock reaches `at`. */
static void hand_over(int r, uint64_t at)
{
    uint64_t now;
    while ((now = mcycle()) < at) {
    }
    flag[r].v = now;
    done[r] = mcycle();
}

int main(void)
{
    for (int r = 0; r < HANDOFFS; r++) {
        hand_over(r, START + 1000 * (uint64_t)r + 7 * (uint64_t)r);
    }
    uint64_t t0 = mcycle();
    for (uint64_t k = 0; k < ROUNDS; k++) {
        ball.v = 2 * k + 1;
        while (ball.v != 2 * k + 2) {
        }
    }
    uint64_t t1 = mcycle();
    int64_t lo = INT64_MAX, hi = INT64_MIN, early = INT64_MAX, late = INT64_MIN;
    for (int r = 0; r < HANDOFFS; r++) {
        int64_t d = (int64_t)(seen[r].v - flag[r].v);
        int64_t l = (int64_t)(seen[r].v - done[r]);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
        early = l < early ? l : early;
        late = l > late ? l : late;
    }
    printstr("made ");
    print_u64(flag[0].v);
    printstr(" seen ");
    print_u64(seen[0].v);
    printstr("\ndelay min ");
    print_i64(lo);
    printstr(" max ");
    print_i64(hi);
    printstr("\nafter the store min ");
    print_i64(early);
    printstr(" max ");
    print_i64(late);
    printstr("\nrounds ");
    print_u64(ROUNDS);
    printstr(" cycles ");
    print_u64(t1 - t0);
    printstr("\n");
    return lo >= 0 ? 0 : 1;
}
