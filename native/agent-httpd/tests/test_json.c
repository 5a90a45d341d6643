/* Unit tests for json.c: grammar, incomplete input at every split, limits, helpers, writer. */
#include "t.h"

#include "../src/json.h"

static long parse_g(const char *s, size_t n, json_tok_t *t, size_t nt) {
    guard_t g;
    char *p = guard_copy(&g, s, n);
    long r = json_parse(p, n, t, nt, JSON_MAX_DEPTH);
    guard_free(&g);
    return r;
}

static long parse_s(const char *s) {
    json_tok_t t[256];
    return parse_g(s, strlen(s), t, 256);
}

static void test_valid(void) {
    const char *ok[] = {"0", "-0", "1", "-12.5e+3", "1E-7", "0.25", "true", "false", "null",
                        "\"\"", "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\"",
                        "[]", "{}", " [ 1 , [ ] , { } ] ", "{\"a\":{\"b\":[true,false,null]}}",
                        "\"\xc3\xa9\xe2\x82\xac\"", "\t\r\n1\n", "[\"x\",-1,2.0e0]"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        long r = parse_s(ok[i]);
        if (r <= 0) fprintf(stderr, "expected valid: %s (%ld)\n", ok[i], r);
        CHECK(r > 0);
    }
}

static void test_invalid(void) {
    const char *bad[] = {"01", "1.", ".5", "+1", "-", "1e", "1e+", "tru", "nul", "fals",
                         "truex", "[1,]", "[,1]", "{,}", "{\"a\" 1}", "{\"a\":1,}", "{1:2}",
                         "'a'", "[1 2]", "{} x", "\"\\x\"", "\"\\u12g4\"", "\"a\x01\"",
                         "/* c */ 1", "NaN", "Infinity", "[1]]", "{\"a\":}", "\"\\\x00\"",
                         "-a", "1.e3", "]", "}", ":", ",", "[\"a\"\"b\"]", "\x80"};
    const size_t lens[] = {0};
    (void)lens;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        size_t n = strlen(bad[i]);
        if (i == 28) n = 4; /* "\"\\\x00\"" has an embedded NUL */
        json_tok_t t[64];
        long r = parse_g(bad[i], n, t, 64);
        if (r != JSON_INVALID && !(r == JSON_INCOMPLETE && (!strcmp(bad[i], "-") ||
                                                           !strcmp(bad[i], "1e") ||
                                                           !strcmp(bad[i], "1e+") ||
                                                           !strcmp(bad[i], "1.") ||
                                                           !strcmp(bad[i], "tru") ||
                                                           !strcmp(bad[i], "nul") ||
                                                           !strcmp(bad[i], "fals"))))
            fprintf(stderr, "expected invalid: %s (%ld)\n", bad[i], r);
        CHECK(r < 0);
    }
    CHECK(parse_s("1.") == JSON_INCOMPLETE);
    CHECK(parse_s("tru") == JSON_INCOMPLETE);
    CHECK(parse_s("") == JSON_INCOMPLETE);
    CHECK(parse_s("   ") == JSON_INCOMPLETE);
    CHECK(parse_s("truE") == JSON_INVALID);
    CHECK(parse_s("[1 2]") == JSON_INVALID);
    CHECK(parse_s("01") == JSON_INVALID);
}

static void test_every_split(void) {
    const char *doc = "{\"a\":[1,-2.5e3,{\"b\":null}],\"c\":\"x\\u00e9\xe2\x82\xacy\",\"d\":true}";
    size_t n = strlen(doc);
    int all = 1;
    for (size_t k = 0; k < n; k++) {
        json_tok_t t[64];
        long r = parse_g(doc, k, t, 64);
        if (r != JSON_INCOMPLETE) {
            fprintf(stderr, "prefix %zu gave %ld\n", k, r);
            all = 0;
        }
    }
    CHECK(all);
    json_tok_t t[64];
    CHECK(parse_g(doc, n, t, 64) == 12);
}

static void test_limits(void) {
    char deep[200];
    for (int d = 63; d <= 66; d++) {
        memset(deep, '[', (size_t)d);
        memset(deep + d, ']', (size_t)d);
        json_tok_t t[128];
        long r = parse_g(deep, (size_t)d * 2, t, 128);
        CHECK(d <= JSON_MAX_DEPTH ? r == d : r == JSON_NOMEM);
    }
    json_tok_t t[3];
    CHECK(parse_g("[1,2,3]", 7, t, 3) == JSON_NOMEM);
    CHECK(parse_g("[1,2,3]", 7, t, 3) == JSON_NOMEM);
    CHECK(parse_g("[1,2,3]", 7, NULL, 0) == 4);
    CHECK(json_parse("[[1]]", 5, NULL, 0, 1) == JSON_NOMEM);
    CHECK(json_parse("[1]", 3, NULL, 0, 1) == 2);
    json_tok_t *a = NULL;
    CHECK(json_parse_alloc("[1,2,3]", 7, 3, &a) == JSON_NOMEM && a == NULL);
    CHECK(json_parse_alloc("[1,2,3]", 7, 4, &a) == 4 && a != NULL);
    free(a);
}

static void test_helpers(void) {
    const char *doc = "{\"na\\u006de\":\"x\",\"arr\":[10,[1,2],{\"k\":\"v\"},-9223372036854775808],"
                      "\"s\":\"\\ud83d\\ude00|\\ud800|\\u0000|\\n\",\"big\":99999999999999999999,\"f\":1.5}";
    json_tok_t t[64];
    guard_t g;
    char *p = guard_copy(&g, doc, strlen(doc));
    long n = json_parse(p, strlen(doc), t, 64, JSON_MAX_DEPTH);
    CHECK(n > 0);
    long v = json_get(p, t, 0, "name");
    CHECK(v > 0 && json_str_eq(p, &t[v], "x"));
    long arr = json_get(p, t, 0, "arr");
    CHECK(arr > 0 && t[arr].type == JSON_ARRAY && t[arr].size == 4);
    long e2 = json_at(t, arr, 2);
    CHECK(e2 > 0 && t[e2].type == JSON_OBJECT);
    long kv = json_get(p, t, e2, "k");
    CHECK(kv > 0 && json_str_eq(p, &t[kv], "v"));
    long long iv = 0;
    CHECK(json_int(p, &t[json_at(t, arr, 0)], &iv) == 0 && iv == 10);
    CHECK(json_int(p, &t[json_at(t, arr, 3)], &iv) == 0 && iv == (-9223372036854775807LL - 1));
    CHECK(json_int(p, &t[json_get(p, t, 0, "big")], &iv) == -1);
    CHECK(json_int(p, &t[json_get(p, t, 0, "f")], &iv) == -1);
    CHECK(json_at(t, arr, 4) == -1);
    CHECK(json_get(p, t, 0, "missing") == -1);
    CHECK(json_get(p, t, arr, "x") == -1);
    long s = json_get(p, t, 0, "s");
    char out[64];
    long dl = json_str_decode(p, &t[s], out, sizeof out);
    const char want[] = "\xf0\x9f\x98\x80|\xef\xbf\xbd|\0|\n";
    CHECK(dl == (long)sizeof want - 1 && memcmp(out, want, sizeof want - 1) == 0);
    CHECK(json_str_decode(p, &t[s], out, 3) == -1);
    buf_t b;
    buf_init(&b, 100);
    CHECK(json_str_to_buf(p, &t[s], &b) == 0 && b.len == sizeof want - 1);
    buf_free(&b);
    guard_free(&g);
}

static void test_writer(void) {
    buf_t b;
    buf_init(&b, 1 << 20);
    const char in[] = "a\"b\\c\n\t\x01\x7f\xc3\xa9\xff\xe2\x82|\xf0\x9f\x98\x80";
    jw_str(&b, in, sizeof in - 1);
    const char want[] = "\"a\\\"b\\\\c\\n\\t\\u0001\x7f\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xf0\x9f\x98\x80\"";
    CHECK(!b.err && b.len == sizeof want - 1 && memcmp(b.data, want, b.len) == 0);
    CHECK(parse_g(b.data, b.len, (json_tok_t[4]){{0}}, 4) == 1);

    buf_reset(&b);
    const char *doc = " { \"a\" : [ 1 , \"x\\n\" , { } ] , \"b\" : null , \"c\":\"\xff\" } ";
    json_tok_t t[32];
    long n = parse_g(doc, strlen(doc), t, 32);
    CHECK(n > 0);
    jw_value(&b, doc, t, 0);
    CHECK(!b.err && strcmp(b.data, "{\"a\":[1,\"x\\n\",{}],\"b\":null,\"c\":\"\xef\xbf\xbd\"}") == 0);
    buf_free(&b);

    buf_init(&b, 8);
    jw_cstr(&b, "0123456789");
    CHECK(b.err == 1);
    buf_free(&b);
}

static void test_garbage(void) {
    unsigned seed = 12345;
    const char alphabet[] = "{}[],:\"\\ntrufalse0123456789.-+eE \t\r\n\x80\xc3\xa9";
    int ok = 1;
    for (int it = 0; it < 20000; it++) {
        char s[64];
        size_t n = (size_t)(seed % 48);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = (it & 1) ? (char)(seed >> 16) : alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        json_tok_t t[16];
        long r = parse_g(s, n, t, 16);
        if (r == 0 || r < -3) ok = 0;
        if (r > 0) {
            buf_t b;
            buf_init(&b, 4096);
            jw_value(&b, s, t, 0);
            json_tok_t t2[16];
            if (b.err || parse_g(b.data, b.len, t2, 16) != r) ok = 0;
            buf_free(&b);
        }
    }
    CHECK(ok);
}

int main(void) {
    test_valid();
    test_invalid();
    test_every_split();
    test_limits();
    test_helpers();
    test_writer();
    test_garbage();
    return t_finish("test_json");
}
