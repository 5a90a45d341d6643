/* libFuzzer harness for sse.c: the lines read from two pieces at every split must equal the
 * lines read from the whole input. */
#include "../src/sse.h"
#include "fuzz_common.h"

/* Render lines as kind + value, separated by NUL bytes. Returns -1 on an over-long line. */
static int run(const uint8_t *data, size_t size, size_t cut, char *out, size_t cap, size_t *ol) {
    char *pend = malloc(size + 1);
    size_t plen = 0;
    *ol = 0;
    int res = 0;
    for (int piece = 0; piece < 2 && res == 0; piece++) {
        size_t from = piece ? cut : 0, to = piece ? size : cut;
        memcpy(pend + plen, data + from, to - from);
        plen += to - from;
        for (;;) {
            char *p = fuzz_copy((const uint8_t *)pend, plen);
            sse_line_t l;
            long r = sse_parse_line(p, plen, 256, piece == 1, &l);
            FUZZ_ASSERT(r >= -2 && r != 0 && (r < 0 || (size_t)r <= plen));
            if (r > 0) {
                FUZZ_ASSERT(l.kind >= SSE_BLANK && l.kind <= SSE_OTHER);
                FUZZ_ASSERT(l.value >= p && l.value + l.value_len <= p + r);
                FUZZ_ASSERT(*ol + l.value_len + 2 <= cap);
                out[(*ol)++] = (char)('0' + l.kind);
                memcpy(out + *ol, l.value, l.value_len);
                *ol += l.value_len;
                out[(*ol)++] = '\0';
                memmove(pend, pend + r, plen - (size_t)r);
                plen -= (size_t)r;
            }
            free(p);
            if (r == -1) res = -1;
            if (r < 0) break;
        }
    }
    free(pend);
    return res;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t cap = 3 * size + 16;
    char *want = malloc(cap), *got = malloc(cap);
    size_t wl, gl;
    int full = run(data, size, size, want, cap, &wl);
    for (size_t k = 0; k < size; k += fuzz_stride(size)) {
        int r = run(data, size, k, got, cap, &gl);
        if (full == 0 && r == 0) FUZZ_ASSERT(gl == wl && memcmp(got, want, wl) == 0);
        if (full == 0) FUZZ_ASSERT(r == 0);
    }
    free(want);
    free(got);
    return 0;
}
