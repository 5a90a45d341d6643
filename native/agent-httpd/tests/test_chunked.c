/* Unit tests for chunked.c: every split, byte-at-a-time, extensions, trailers, bad framing. */
#include "t.h"

#include "../src/chunked.h"

/* Feed input as pieces cut at the given offsets, the way a socket reader would: keep what was
 * not consumed and append the next piece. Returns 1 done, 0 ran out of input, -1 invalid.
 * Decoded data goes to out (cap 4096). Every decode call sees a guarded copy. */
static int feed(const char *in, size_t n, const size_t *cuts, size_t ncuts, char *out,
                size_t *outlen, chunked_t *c) {
    char pend[8192];
    size_t plen = 0, pos = 0;
    *outlen = 0;
    chunked_init(c);
    for (size_t piece = 0; piece <= ncuts; piece++) {
        size_t end = piece < ncuts ? cuts[piece] : n;
        memcpy(pend + plen, in + pos, end - pos);
        plen += end - pos;
        pos = end;
        for (;;) {
            guard_t g;
            char *p = guard_copy(&g, pend, plen);
            const char *d;
            size_t dl;
            long r = chunked_decode(c, p, plen, &d, &dl);
            if (r > 0) {
                if (!(d >= p && d + dl <= p + plen && (size_t)r <= plen)) CHECK(0);
                memcpy(out + *outlen, d, dl);
                *outlen += dl;
                memmove(pend, pend + r, plen - (size_t)r);
                plen -= (size_t)r;
            }
            guard_free(&g);
            if (r == 0) return 1;
            if (r == -1) return -1;
            if (r == -2) break;
        }
    }
    return 0;
}

static void check_all_splits(const char *in, const char *want, int want_done) {
    size_t n = strlen(in);
    char out[4096];
    size_t ol;
    chunked_t c;
    int ok = 1;
    for (size_t k = 0; k <= n; k++) {
        size_t cut = k;
        int r = feed(in, n, &cut, 1, out, &ol, &c);
        if (r != want_done || ol != strlen(want) || memcmp(out, want, ol) != 0) {
            fprintf(stderr, "split %zu of %s: r=%d out=%.*s\n", k, in, r, (int)ol, out);
            ok = 0;
        }
    }
    size_t cuts[512];
    for (size_t k = 0; k < n && k < 512; k++) cuts[k] = k;
    int r = feed(in, n, cuts, n < 512 ? n : 512, out, &ol, &c);
    if (r != want_done || ol != strlen(want) || memcmp(out, want, ol) != 0) ok = 0;
    CHECK(ok);
}

static void test_good(void) {
    check_all_splits("5\r\nhello\r\n6;ext=1;q=\"a b\"\r\n world\r\n0\r\n\r\n", "hello world", 1);
    check_all_splits("5\nhello\n6\n world\n0\n\n", "hello world", 1);
    check_all_splits("A\r\n0123456789\r\n0\r\nX-Trailer: yes\r\nY: z\r\n\r\n", "0123456789", 1);
    check_all_splits("a \t;x\r\n0123456789\r\n0\r\n\r\n", "0123456789", 1);
    check_all_splits("0\r\n\r\n", "", 1);
    check_all_splits("00000003\r\n\xe2\x82\xac\r\n0\r\n\r\n", "\xe2\x82\xac", 1);
    /* missing final CRLF: not done, but EOF there is acceptable */
    char out[64];
    size_t ol;
    chunked_t c;
    CHECK(feed("3\r\nabc\r\n0\r\n", 11, NULL, 0, out, &ol, &c) == 0);
    CHECK(ol == 3 && chunked_eof_ok(&c) && !chunked_done(&c));
    CHECK(feed("3\r\nab", 6, NULL, 0, out, &ol, &c) == 0);
    CHECK(!chunked_eof_ok(&c));
    /* after done, nothing more is consumed */
    const char *d;
    size_t dl;
    CHECK(feed("0\r\n\r\n", 5, NULL, 0, out, &ol, &c) == 1 && chunked_done(&c));
    CHECK(chunked_decode(&c, "garbage", 7, &d, &dl) == 0);
}

static void test_bad(void) {
    const char *bad[] = {"g\r\n", "\r\n", ";x\r\n", "1000000000000000\r\n", "5\r\nhelloX",
                         "5\rx\n", "5 x\r\n", "5\r\nhello\r\n0\r\nBad\x01Trailer\r\n\r\n",
                         "-5\r\n", "5;\x01\r\n", "5\r\nhello\rX"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char out[64];
        size_t ol;
        chunked_t c;
        int r = feed(bad[i], strlen(bad[i]), NULL, 0, out, &ol, &c);
        if (r != -1) fprintf(stderr, "bad chunked %zu gave %d\n", i, r);
        CHECK(r == -1);
    }
    /* a size line longer than the limit is rejected, not buffered forever */
    char *big = malloc(CHUNKED_MAX_LINE + 10);
    memset(big, ' ', CHUNKED_MAX_LINE + 10);
    big[0] = '5';
    big[1] = ';';
    chunked_t c;
    chunked_init(&c);
    const char *d;
    size_t dl;
    CHECK(chunked_decode(&c, big, CHUNKED_MAX_LINE - 1, &d, &dl) == -2);
    CHECK(chunked_decode(&c, big, CHUNKED_MAX_LINE + 10, &d, &dl) == -1);
    /* trailers beyond the limit */
    chunked_init(&c);
    CHECK(chunked_decode(&c, "0\r\n", 3, &d, &dl) == 3);
    memset(big, 'a', CHUNKED_MAX_LINE);
    big[0] = 'X';
    big[1] = ':';
    big[100] = '\n';
    int rejected = 0;
    for (int i = 0; i < 1000 && !rejected; i++) {
        long r = chunked_decode(&c, big, 101, &d, &dl);
        if (r == -1) rejected = 1;
        else CHECK(r == 101);
    }
    CHECK(rejected);
    free(big);
}

static void test_garbage(void) {
    unsigned seed = 7;
    const char alpha[] = "0123456789abcdefABX;= \r\n\t";
    int ok = 1;
    for (int it = 0; it < 20000; it++) {
        char s[64], out[8192];
        size_t n = (seed >> 8) % 64, ol;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = (it & 1) ? (char)(seed >> 16) : alpha[(seed >> 16) % (sizeof alpha - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        size_t cut = n ? (seed >> 4) % n : 0;
        chunked_t c;
        int r = feed(s, n, &cut, 1, out, &ol, &c);
        if (r < -1 || r > 1 || ol > n) ok = 0;
    }
    CHECK(ok);
}

int main(void) {
    test_good();
    test_bad();
    test_garbage();
    return t_finish("test_chunked");
}
