/* Unit tests for sse.c: line kinds, CRLF/LF/CR endings, every split, EOF, huge lines. */
#include "t.h"

#include "../src/sse.h"

/* Render the lines of a stream fed in two pieces (cut at k) as "K:value|" items. */
static int render(const char *in, size_t n, size_t k, size_t max_line, char *out, size_t cap) {
    char pend[4096];
    size_t plen = 0, o = 0;
    out[0] = 0;
    for (int piece = 0; piece < 2; piece++) {
        size_t from = piece ? k : 0, to = piece ? n : k;
        memcpy(pend + plen, in + from, to - from);
        plen += to - from;
        int eof = piece == 1;
        for (;;) {
            guard_t g;
            char *p = guard_copy(&g, pend, plen);
            sse_line_t l;
            long r = sse_parse_line(p, plen, max_line, eof, &l);
            if (r > 0) {
                static const char kinds[] = "?BDEIRCO";
                int w = snprintf(out + o, cap - o, "%c:%.*s|", kinds[l.kind], (int)l.value_len, l.value);
                o += (size_t)w;
                memmove(pend, pend + r, plen - (size_t)r);
                plen -= (size_t)r;
            }
            guard_free(&g);
            if (r == -1) return -1;
            if (r <= 0) break;
        }
    }
    return 0;
}

static void check_stream(const char *in, const char *want) {
    size_t n = strlen(in);
    char out[4096];
    int ok = 1;
    for (size_t k = 0; k <= n; k++) {
        if (render(in, n, k, 1024, out, sizeof out) != 0 || strcmp(out, want) != 0) {
            fprintf(stderr, "split %zu: got %s want %s\n", k, out, want);
            ok = 0;
            break;
        }
    }
    CHECK(ok);
}

static void test_streams(void) {
    check_stream("data: {\"a\":1}\n\ndata: [DONE]\n\n", "D:{\"a\":1}|B:|D:[DONE]|B:|");
    check_stream("data:{\"a\":1}\r\n\r\ndata:[DONE]", "D:{\"a\":1}|B:|D:[DONE]|");
    check_stream("data: x\r\rdata: y\r", "D:x|B:|D:y|");
    check_stream(": keep-alive\nevent: message\nid: 7\nretry: 100\ndata\nfoo: bar\n\n",
                 "C: keep-alive|E:message|I:7|R:100|D:|O:bar|B:|");
    check_stream("data:  two\n", "D: two|");
    check_stream("data: caf\xc3\xa9\n\n", "D:caf\xc3\xa9|B:|");
    check_stream("\n\n\n", "B:|B:|B:|");
    check_stream("data: a:b:c\n", "D:a:b:c|");
}

static void test_edges(void) {
    sse_line_t l;
    CHECK(sse_parse_line("data: x\r", 8, 100, 0, &l) == -2);
    CHECK(sse_parse_line("data: x\r", 8, 100, 1, &l) == 8 && l.kind == SSE_DATA && l.value_len == 1);
    CHECK(sse_parse_line("data: x", 7, 100, 0, &l) == -2);
    CHECK(sse_parse_line("data: x", 7, 100, 1, &l) == 7 && l.value_len == 1);
    CHECK(sse_parse_line("", 0, 100, 1, &l) == -2);
    CHECK(sse_parse_line("data: 0123456789\n", 17, 16, 0, &l) == 17);
    CHECK(sse_parse_line("data: 01234567890\n", 18, 16, 0, &l) == -1);
    CHECK(sse_parse_line("data: 0123456789", 16, 16, 0, &l) == -2);
    CHECK(sse_parse_line("data: 01234567890", 17, 16, 0, &l) == -1);
    CHECK(sse_parse_line("x\n", 2, (size_t)-1, 0, &l) == 2 && l.kind == SSE_OTHER);
    CHECK(sse_parse_line("Data: x\n", 8, 100, 0, &l) == 8 && l.kind == SSE_OTHER);
    /* a huge line is rejected at every split once it passes the limit */
    char big[3000];
    memset(big, 'a', sizeof big);
    memcpy(big, "data: ", 6);
    char out[4096];
    CHECK(render(big, sizeof big, 1500, 2048, out, sizeof out) == -1);
}

static void test_garbage(void) {
    unsigned seed = 3;
    int ok = 1;
    for (int it = 0; it < 20000; it++) {
        char s[64];
        size_t n = (seed >> 8) % 64;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = (it & 1) ? (char)(seed >> 16) : "data:\r\n :x"[(seed >> 16) % 10];
        }
        seed = seed * 1103515245u + 12345u;
        sse_line_t l;
        guard_t g;
        char *p = guard_copy(&g, s, n);
        long r = sse_parse_line(p, n, 32, (int)(it & 2), &l);
        if (r == 0 || r < -2 || r > (long)n) ok = 0;
        if (r > 0 && (l.value < p || l.value + l.value_len > p + n)) ok = 0;
        guard_free(&g);
    }
    CHECK(ok);
}

int main(void) {
    test_streams();
    test_edges();
    test_garbage();
    return t_finish("test_sse");
}
