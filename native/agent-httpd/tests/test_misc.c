/* Unit tests for buf.c, utf8.c and url.c. */
#include "t.h"

#include "../src/buf.h"
#include "../src/url.h"
#include "../src/utf8.h"

static void test_buf(void) {
    buf_t b;
    buf_init(&b, 10);
    CHECK(buf_puts(&b, "hello") == 0 && b.len == 5 && strcmp(b.data, "hello") == 0);
    CHECK(buf_printf(&b, "%d", 12345) == 0 && b.len == 10 && strcmp(b.data, "hello12345") == 0);
    CHECK(buf_putc(&b, 'x') == -1 && b.err && b.len == 10);
    CHECK(buf_puts(&b, "") == -1); /* sticky */
    buf_consume(&b, 5);
    CHECK(strcmp(b.data, "12345") == 0);
    buf_reset(&b);
    CHECK(b.len == 0 && !b.err);
    CHECK(buf_printf(&b, "%s", "0123456789") == 0 && b.len == 10);
    buf_reset(&b);
    CHECK(buf_printf(&b, "%s", "0123456789a") == -1);
    buf_consume(&b, 100);
    buf_free(&b);
    buf_init(&b, 1 << 20);
    char big[1000];
    memset(big, 'z', sizeof big);
    for (int i = 0; i < 1000; i++) buf_append(&b, big, sizeof big);
    CHECK(!b.err && b.len == 1000000 && b.data[b.len] == 0);
    CHECK(buf_printf(&b, "%0300d", 1) == 0 && b.len == 1000300);
    buf_free(&b);
}

static void test_utf8(void) {
    const char *e = "a\xe2\x82\xac"; /* a€ */
    CHECK(utf8_cut(e, 4, 1) == 1);
    CHECK(utf8_cut(e, 4, 2) == 1);
    CHECK(utf8_cut(e, 4, 3) == 1);
    CHECK(utf8_cut(e, 4, 4) == 4);
    CHECK(utf8_cut(e, 4, 9) == 4);
    CHECK(utf8_cut("\xf0\x9f\x98\x80z", 5, 3) == 0);
    CHECK(utf8_incomplete_tail(e, 4) == 0);
    CHECK(utf8_incomplete_tail(e, 3) == 2);
    CHECK(utf8_incomplete_tail(e, 2) == 1);
    CHECK(utf8_incomplete_tail("\xf0\x9f\x98", 3) == 3);
    CHECK(utf8_incomplete_tail("\xff", 1) == 0);
    CHECK(utf8_incomplete_tail("\xe0\x80", 2) == 0); /* overlong prefix is not held back */
    CHECK(utf8_incomplete_tail("abc", 3) == 0);
    CHECK(utf8_incomplete_tail("", 0) == 0);
    CHECK(utf8_seq_len((const unsigned char *)"\xed\xa0\x80", 3) == 0); /* surrogate */
    CHECK(utf8_seq_len((const unsigned char *)"\xc0\xaf", 2) == 0);     /* overlong */
    CHECK(utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4) == 0);
    CHECK(utf8_seq_len((const unsigned char *)"\xf4\x8f\xbf\xbf", 4) == 4);
    CHECK(utf8_seq_len((const unsigned char *)"\xc3\xa9", 1) == 0);
}

static int up(const char *s, url_t *u) {
    char err[128];
    guard_t g;
    char *p = guard_copy(&g, s, strlen(s));
    int r = url_parse(p, strlen(s), u, err, sizeof err);
    guard_free(&g);
    return r;
}

static void test_url(void) {
    url_t u;
    CHECK(up("http://127.0.0.1:8888/resolve/internal/v1/chat/completions", &u) == 0 && u.port == 8888 &&
          !u.v6 && strcmp(u.path, "/resolve/internal/v1/chat/completions") == 0 &&
          strcmp(u.host, "127.0.0.1:8888") == 0);
    CHECK(up("http://localhost:1/x?y=1", &u) == 0 && u.port == 1 && strcmp(u.path, "/x?y=1") == 0);
    CHECK(up("HTTP://LOCALHOST:65535", &u) == 0 && u.port == 65535 && strcmp(u.path, "/") == 0);
    CHECK(up("http://[::1]:9/t", &u) == 0 && u.v6 && strcmp(u.host, "[::1]:9") == 0);
    CHECK(up("http://127.0.0.1/", &u) == 0 && u.port == 80);
    const char *bad[] = {"https://127.0.0.1:1/", "http://10.0.0.1:80/", "http://127.0.0.10/",
                         "http://localhost.evil.com/", "http://127.0.0.1@evil.com/", "ftp://localhost/",
                         "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:/",
                         "http://127.0.0.1:80x/", "http://127.0.0.1:80/a b", "http://127.0.0.1:80/#f",
                         "http://[::2]:80/", "http://example.com/", "", "http://", "localhost:80",
                         "http://127.0.0.1:0000080/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int r = up(bad[i], &u);
        if (r != -1) fprintf(stderr, "url accepted: %s\n", bad[i]);
        CHECK(r == -1);
    }
}

int main(void) {
    test_buf();
    test_utf8();
    test_url();
    return t_finish("test_misc");
}
