/* Unit tests for http_parse.c: request and response heads, every split, invalid heads. */
#include "t.h"

#include "../src/http_parse.h"

typedef struct req {
    const char *m, *p;
    size_t ml, pl, nh;
    int minor;
    http_header_t h[16];
} req_t;

static int preq(const char *s, size_t n, req_t *r) {
    guard_t g;
    char *p = guard_copy(&g, s, n);
    r->nh = 16;
    int rc = http_parse_request(p, n, &r->m, &r->ml, &r->p, &r->pl, &r->minor, r->h, &r->nh);
    guard_free(&g); /* views are not used after this (only lengths) */
    return rc;
}

static void test_request_ok(void) {
    const char *s = "POST /chat?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization:  Bearer abc  \r\n"
                    "Content-Length: 5\r\nX-Empty:\r\n\r\nhello";
    size_t n = strlen(s);
    char *copy = malloc(n);
    memcpy(copy, s, n);
    req_t r;
    r.nh = 16;
    int rc = http_parse_request(copy, n, &r.m, &r.ml, &r.p, &r.pl, &r.minor, r.h, &r.nh);
    CHECK(rc == (int)(n - 5));
    CHECK(r.ml == 4 && memcmp(r.m, "POST", 4) == 0);
    CHECK(r.pl == 9 && memcmp(r.p, "/chat?x=1", 9) == 0);
    CHECK(r.minor == 1 && r.nh == 4);
    const http_header_t *a = http_header_find(r.h, r.nh, "authorization");
    CHECK(a && a->value_len == 10 && memcmp(a->value, "Bearer abc", 10) == 0);
    const http_header_t *e = http_header_find(r.h, r.nh, "X-EMPTY");
    CHECK(e && e->value_len == 0);
    CHECK(http_header_find(r.h, r.nh, "missing") == NULL);
    int all = 1;
    for (size_t k = 0; k < n - 5; k++)
        if (preq(s, k, &r) != -2) {
            fprintf(stderr, "request prefix %zu not incomplete\n", k);
            all = 0;
        }
    CHECK(all);
    free(copy);

    const char *lf = "\r\n\nGET /healthz HTTP/1.0\nA: b\n\n";
    CHECK(preq(lf, strlen(lf), &r) == (int)strlen(lf));
    CHECK(r.minor == 0 && r.nh == 1);
    const char *nohdr = "GET / HTTP/1.1\r\n\r\n";
    CHECK(preq(nohdr, strlen(nohdr), &r) == (int)strlen(nohdr) && r.nh == 0);
    const char *obs = "GET / HTTP/1.1\r\nA: caf\xc3\xa9\r\n\r\n";
    CHECK(preq(obs, strlen(obs), &r) == (int)strlen(obs));
}

static void test_request_bad(void) {
    const char *bad[] = {
        "GE(T / HTTP/1.1\r\n\r\n", " / HTTP/1.1\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n", "GET / HTTP/1.x\r\n\r\n", "GET /\x01 HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\rX\r\n\r\n", "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\n: x\r\n\r\n", "GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n",
        "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", "GET / HTTP/1.1 \r\n\r\n", "GET /\xc3\xa9 HTTP/1.1\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        req_t r;
        int rc = preq(bad[i], strlen(bad[i]), &r);
        if (rc != -1) fprintf(stderr, "bad request %zu gave %d\n", i, rc);
        CHECK(rc == -1);
    }
    const char nul[] = "GET / HTTP/1.1\r\nA: b\0c\r\n\r\n";
    req_t r;
    CHECK(preq(nul, sizeof nul - 1, &r) == -1);
    /* too many headers */
    char many[2048] = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 17; i++) strcat(many, "A: b\r\n");
    strcat(many, "\r\n");
    CHECK(preq(many, strlen(many), &r) == -1);
}

static int presp(const char *s, size_t n, int *status, size_t *nh, size_t *msglen) {
    guard_t g;
    char *p = guard_copy(&g, s, n);
    http_header_t h[8];
    int minor;
    const char *msg;
    *nh = 8;
    int rc = http_parse_response(p, n, &minor, status, &msg, msglen, h, nh);
    guard_free(&g);
    return rc;
}

static void test_response(void) {
    int st;
    size_t nh, ml;
    const char *s = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
    size_t n = strlen(s);
    CHECK(presp(s, n, &st, &nh, &ml) == (int)n && st == 200 && nh == 2 && ml == 2);
    int all = 1;
    for (size_t k = 0; k < n; k++)
        if (presp(s, k, &st, &nh, &ml) != -2) all = 0;
    CHECK(all);
    const char *noreason = "HTTP/1.1 503\r\n\r\n";
    CHECK(presp(noreason, strlen(noreason), &st, &nh, &ml) == (int)strlen(noreason) && st == 503 && ml == 0);
    const char *lf = "HTTP/1.0 404 Not Found\nA: b\n\nbody";
    CHECK(presp(lf, strlen(lf), &st, &nh, &ml) == (int)strlen(lf) - 4 && st == 404 && ml == 9);
    const char *bad[] = {"HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 abc\r\n\r\n", "HTTP/1.1 099 x\r\n\r\n",
                         "HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1 2000\r\n\r\n", "ICY 200 OK\r\n\r\n",
                         "HTTP/1.1 200 O\x01K\r\n\r\n", "HTTP/1.1 200 OK\r\nA b\r\n\r\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = presp(bad[i], strlen(bad[i]), &st, &nh, &ml);
        if (rc != -1) fprintf(stderr, "bad response %zu gave %d\n", i, rc);
        CHECK(rc == -1);
    }
}

static void test_garbage(void) {
    unsigned seed = 99;
    const char alpha[] = "GET /HTP1.0\r\n: ab\x80\t";
    int ok = 1;
    for (int it = 0; it < 20000; it++) {
        char s[96];
        size_t n = (seed >> 8) % 96;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = (it & 1) ? (char)(seed >> 16) : alpha[(seed >> 16) % (sizeof alpha - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        req_t r;
        int a = preq(s, n, &r);
        int st;
        size_t nh, ml;
        int b = presp(s, n, &st, &nh, &ml);
        if (a < -2 || a > (int)n || b < -2 || b > (int)n || a == 0 || b == 0) ok = 0;
    }
    CHECK(ok);
}

int main(void) {
    test_request_ok();
    test_request_bad();
    test_response();
    test_garbage();
    return t_finish("test_http_parse");
}
