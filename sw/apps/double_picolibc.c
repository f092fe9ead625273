/*
 * double_picolibc.c - a picolibc program computing with doubles in hardware
 * (rv64imafdc/lp64d multilib): printf of doubles, libm (sqrt, exp, sin), a series
 * summed in a loop, and conversions.  Checked by crates/riscv/tests/programs.rs.
 */
#include <math.h>
#include <stdio.h>

static double leibniz_pi(int terms)
{
    double s = 0.0;
    for (int k = 0; k < terms; k++) {
        s += (k & 1 ? -4.0 : 4.0) / (2 * k + 1);
    }
    return s;
}

int main(void)
{
    volatile double two = 2.0;
    printf("sqrt(2) = %.15f\n", sqrt(two));
    printf("exp(1) = %.12f\n", exp(two / 2));
    printf("sin(pi/6) = %.12f\n", sin(3.14159265358979323846 / 6));
    printf("pi ~ %.10f\n", leibniz_pi(100000));
    printf("1/3 = %.17g\n", 1.0 / (two + 1));
    printf("(int)-2.75 = %d, (long)1e18 = %ld\n", (int)(-2.75 * two / 2), (long)(1e18 * two / 2));
    return 0;
}
