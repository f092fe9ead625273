/*
 * printf.c - a small printf over putchar.
 *
 * Supported: %d %i %u %x %X %o %c %s %p %%, length modifiers l, ll, z,
 * flags '0' and '-', a field width (number or *).  No floating point.
 */
#include <stdarg.h>
#include <stdint.h>
#include "nanopu.h"

struct spec {
    int width;
    int zero;
    int left;
    int longs;   /* number of 'l' (or 1 for 'z') */
};

static int emit_padded(const char *s, int len, const struct spec *sp, int neg)
{
    int pad = sp->width - len - neg;
    int n = 0;
    if (neg && sp->zero) {
        putchar('-');
        n++;
    }
    for (; !sp->left && pad > 0; pad--, n++) {
        putchar(sp->zero ? '0' : ' ');
    }
    if (neg && !sp->zero) {
        putchar('-');
        n++;
    }
    for (int i = 0; i < len; i++, n++) {
        putchar(s[i]);
    }
    for (; sp->left && pad > 0; pad--, n++) {
        putchar(' ');
    }
    return n;
}

static int emit_number(uint64_t v, unsigned base, int upper, int neg, const struct spec *sp)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char buf[24];
    int i = sizeof(buf);
    do {
        buf[--i] = digits[v % base];
        v /= base;
    } while (v != 0);
    return emit_padded(buf + i, (int)sizeof(buf) - i, sp, neg);
}

static uint64_t take_unsigned(va_list *ap, int longs)
{
    return longs ? va_arg(*ap, unsigned long) : va_arg(*ap, unsigned int);
}

static int64_t take_signed(va_list *ap, int longs)
{
    return longs ? va_arg(*ap, long) : va_arg(*ap, int);
}

static const char *parse_spec(const char *f, struct spec *sp, va_list *ap)
{
    sp->width = sp->zero = sp->left = sp->longs = 0;
    for (;; f++) {
        if (*f == '0') {
            sp->zero = 1;
        } else if (*f == '-') {
            sp->left = 1;
        } else {
            break;
        }
    }
    if (*f == '*') {
        sp->width = va_arg(*ap, int);
        f++;
    }
    for (; *f >= '0' && *f <= '9'; f++) {
        sp->width = sp->width * 10 + (*f - '0');
    }
    for (; *f == 'l' || *f == 'z'; f++) {
        sp->longs++;
    }
    if (sp->left) {
        sp->zero = 0;
    }
    return f;
}

static int emit_conversion(char c, struct spec *sp, va_list *ap)
{
    switch (c) {
    case 'd':
    case 'i': {
        int64_t v = take_signed(ap, sp->longs);
        uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
        return emit_number(mag, 10, 0, v < 0, sp);
    }
    case 'u':
        return emit_number(take_unsigned(ap, sp->longs), 10, 0, 0, sp);
    case 'x':
    case 'X':
        return emit_number(take_unsigned(ap, sp->longs), 16, c == 'X', 0, sp);
    case 'o':
        return emit_number(take_unsigned(ap, sp->longs), 8, 0, 0, sp);
    case 'p':
        putchar('0');
        putchar('x');
        return 2 + emit_number((uintptr_t)va_arg(*ap, void *), 16, 0, 0, sp);
    case 'c': {
        char ch = (char)va_arg(*ap, int);
        return emit_padded(&ch, 1, sp, 0);
    }
    case 's': {
        const char *s = va_arg(*ap, const char *);
        s = s ? s : "(null)";
        return emit_padded(s, (int)strlen(s), sp, 0);
    }
    case '%':
        putchar('%');
        return 1;
    default: /* unknown conversion: print it verbatim */
        putchar('%');
        putchar(c);
        return 2;
    }
}

int vprintf(const char *fmt, va_list ap)
{
    int n = 0;
    va_list args;
    va_copy(args, ap);
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            putchar(*f);
            n++;
            continue;
        }
        struct spec sp;
        f = parse_spec(f + 1, &sp, &args);
        if (*f == '\0') {
            break;
        }
        n += emit_conversion(*f, &sp, &args);
    }
    va_end(args);
    return n;
}

int printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}
