/* libFuzzer harness for json.c: parse, every prefix, helpers, writer round trip. */
#include "../src/json.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fuzz_copy(data, size);
    json_tok_t toks[256];
    long n = json_parse(s, size, toks, 256, JSON_MAX_DEPTH);
    long counted = json_parse(s, size, NULL, 0, JSON_MAX_DEPTH);
    FUZZ_ASSERT(n >= -3 && n != 0);
    if (n > 0) FUZZ_ASSERT(counted == n);
    if (counted > 256) FUZZ_ASSERT(n == JSON_NOMEM);

    /* every prefix of a complete container or string is incomplete */
    for (size_t k = 0; k < size; k += fuzz_stride(size)) {
        char *p = fuzz_copy(data, k);
        long r = json_parse(p, k, NULL, 0, JSON_MAX_DEPTH);
        if (n > 0 && (toks[0].type == JSON_OBJECT || toks[0].type == JSON_ARRAY || toks[0].type == JSON_STRING)) {
            /* a prefix may stop before the value begins or inside it, never complete it */
            size_t vstart = toks[0].type == JSON_STRING ? toks[0].start - 1 : toks[0].start;
            size_t vend = vstart + toks[0].len + (toks[0].type == JSON_STRING ? 2 : 0);
            if (k < vend) FUZZ_ASSERT(r == JSON_INCOMPLETE);
        }
        free(p);
    }

    if (n > 0) {
        for (long i = 0; i < n; i++) {
            FUZZ_ASSERT((size_t)toks[i].start + toks[i].len <= size);
            FUZZ_ASSERT(toks[i].end > (uint32_t)i && toks[i].end <= (uint32_t)n);
            if (toks[i].type == JSON_STRING) {
                char *out = malloc(toks[i].len + 1);
                long d = json_str_decode(s, &toks[i], out, toks[i].len);
                FUZZ_ASSERT(d >= 0 && (size_t)d <= toks[i].len);
                free(out);
            }
            if (toks[i].type == JSON_OBJECT) (void)json_get(s, toks, i, "content");
            if (toks[i].type == JSON_ARRAY) (void)json_at(toks, i, toks[i].size / 2);
            if (toks[i].type == JSON_NUMBER) {
                long long v;
                (void)json_int(s, &toks[i], &v);
            }
        }
        /* compact re-serialisation parses back to the same shape and is a fixed point */
        buf_t a, b;
        buf_init(&a, 1 << 20);
        buf_init(&b, 1 << 20);
        jw_value(&a, s, toks, 0);
        FUZZ_ASSERT(!a.err);
        json_tok_t t2[256];
        long n2 = json_parse(a.data, a.len, t2, 256, JSON_MAX_DEPTH);
        FUZZ_ASSERT(n2 == n);
        jw_value(&b, a.data, t2, 0);
        FUZZ_ASSERT(b.len == a.len && memcmp(a.data, b.data, a.len) == 0);
        buf_free(&a);
        buf_free(&b);
    }
    /* the string writer always produces one valid JSON string */
    buf_t w;
    buf_init(&w, 1 << 20);
    jw_str(&w, s, size);
    json_tok_t one[2];
    FUZZ_ASSERT(json_parse(w.data, w.len, one, 2, 1) == 1);
    buf_free(&w);
    free(s);
    return 0;
}
