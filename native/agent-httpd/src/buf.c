/* buf: a bounded, growable byte buffer. See buf.h. */
#include "buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(buf_t *b, size_t max) {
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
    b->err = 0;
}

void buf_free(buf_t *b) {
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->err = 0;
}

void buf_reset(buf_t *b) {
    b->len = 0;
    b->err = 0;
    if (b->data) b->data[0] = '\0';
}

char *buf_reserve(buf_t *b, size_t n) {
    if (b->err) return NULL;
    if (n > b->max - b->len) {
        b->err = 1;
        return NULL;
    }
    size_t need = b->len + n;
    if (need > b->cap || !b->data) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need) cap = cap > (b->max / 2) ? b->max : cap * 2;
        if (cap > b->max) cap = b->max;
        if (cap < need) cap = need;
        char *p = realloc(b->data, cap + 1);
        if (!p) {
            b->err = 1;
            return NULL;
        }
        b->data = p;
        b->cap = cap;
        b->data[b->len] = '\0';
    }
    return b->data + b->len;
}

int buf_append(buf_t *b, const void *p, size_t n) {
    char *dst = buf_reserve(b, n);
    if (!dst) return -1;
    if (n) memcpy(dst, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_puts(buf_t *b, const char *s) { return buf_append(b, s, strlen(s)); }

int buf_putc(buf_t *b, char c) { return buf_append(b, &c, 1); }

int buf_printf(buf_t *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->err = 1;
        return -1;
    }
    if ((size_t)n < sizeof small) return buf_append(b, small, (size_t)n);
    char *dst = buf_reserve(b, (size_t)n); /* the allocation keeps one spare byte for the NUL */
    if (!dst) return -1;
    va_start(ap, fmt);
    vsnprintf(dst, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void buf_consume(buf_t *b, size_t n) {
    if (n >= b->len) {
        b->len = 0;
    } else if (n) {
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
    }
    if (b->data) b->data[b->len] = '\0';
}
