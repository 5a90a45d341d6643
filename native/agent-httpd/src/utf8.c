/* utf8: small UTF-8 helpers. See utf8.h. */
#include "utf8.h"

size_t utf8_seq_len(const unsigned char *s, size_t n) {
    if (n == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;      /* no overlongs */
        else if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F; /* <= U+10FFFF */
    } else {
        return 0;
    }
    if (n < len) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}

size_t utf8_cut(const char *s, size_t n, size_t max) {
    if (max >= n) return n;
    size_t k = max;
    /* step back over continuation bytes to the lead byte of the sequence containing s[k] */
    size_t back = 0;
    while (k > 0 && back < 3 && ((unsigned char)s[k] & 0xC0) == 0x80) {
        k--;
        back++;
    }
    if (((unsigned char)s[k] & 0xC0) == 0x80) return max; /* not UTF-8 here: cut anywhere */
    return k;
}

size_t utf8_incomplete_tail(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t t = 1; t <= 3 && t <= n; t++) {
        unsigned c = u[n - t];
        if ((c & 0xC0) == 0x80) continue; /* continuation byte: keep looking for the lead */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (need <= t) return 0; /* complete (or ASCII) */
        /* check that what we have is a valid prefix */
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0xC2 || c > 0xF4) return 0;
        if (c == 0xE0) lo = 0xA0;
        else if (c == 0xED) hi = 0x9F;
        else if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F;
        if (t >= 2 && (u[n - t + 1] < lo || u[n - t + 1] > hi)) return 0;
        return t;
    }
    return 0;
}
