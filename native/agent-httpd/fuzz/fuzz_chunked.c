/* libFuzzer harness for chunked.c: decoding in two pieces at every split must give the same
 * data and outcome as decoding the whole input. */
#include "../src/chunked.h"
#include "fuzz_common.h"

/* Decode like a socket reader; returns 1 done, 0 needs more, -1 invalid. */
static int run(const uint8_t *data, size_t size, size_t cut, char *out, size_t *ol) {
    char *pend = malloc(size + 1);
    size_t plen = 0;
    chunked_t c;
    chunked_init(&c);
    *ol = 0;
    int res = 0;
    for (int piece = 0; piece < 2 && res == 0; piece++) {
        size_t from = piece ? cut : 0, to = piece ? size : cut;
        memcpy(pend + plen, data + from, to - from);
        plen += to - from;
        for (;;) {
            char *p = fuzz_copy((const uint8_t *)pend, plen);
            const char *d;
            size_t dl;
            long r = chunked_decode(&c, p, plen, &d, &dl);
            FUZZ_ASSERT(r >= -2 && (r < 0 || (size_t)r <= plen));
            if (r > 0) {
                FUZZ_ASSERT(d >= p && d + dl <= p + r);
                memcpy(out + *ol, d, dl);
                *ol += dl;
                memmove(pend, pend + r, plen - (size_t)r);
                plen -= (size_t)r;
            }
            free(p);
            if (r == 0) res = 1;
            if (r == -1) res = -1;
            if (r <= 0) break;
        }
    }
    if (res == 1) FUZZ_ASSERT(chunked_done(&c) && chunked_eof_ok(&c));
    free(pend);
    return res;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *want = malloc(size + 1), *got = malloc(size + 1);
    size_t wl, gl;
    int full = run(data, size, size, want, &wl);
    for (size_t k = 0; k < size; k += fuzz_stride(size)) {
        int r = run(data, size, k, got, &gl);
        FUZZ_ASSERT(r == full);
        if (r != -1) FUZZ_ASSERT(gl == wl && memcmp(got, want, wl) == 0);
    }
    free(want);
    free(got);
    return 0;
}
