/* libFuzzer harness for http_parse_request: whole input and every split. */
#include "../src/http_parse.h"
#include "fuzz_common.h"

static int parse(const uint8_t *data, size_t n) {
    char *s = fuzz_copy(data, n);
    const char *m = NULL, *p = NULL;
    size_t ml = 0, pl = 0, nh = 32;
    int minor = -1;
    http_header_t h[32];
    int r = http_parse_request(s, n, &m, &ml, &p, &pl, &minor, h, &nh);
    FUZZ_ASSERT(r >= -2 && r != 0 && (r < 0 || (size_t)r <= n));
    if (r > 0) {
        FUZZ_ASSERT(m >= s && m + ml <= s + r && p >= s && p + pl <= s + r && nh <= 32);
        FUZZ_ASSERT(minor >= 0 && minor <= 9);
        for (size_t i = 0; i < nh; i++)
            FUZZ_ASSERT(h[i].name >= s && h[i].value + h[i].value_len <= s + r);
        (void)http_header_find(h, nh, "content-length");
    }
    free(s);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int full = parse(data, size);
    for (size_t k = 0; k < size; k += fuzz_stride(size)) {
        int r = parse(data, k);
        if (full > 0) FUZZ_ASSERT((size_t)full > k ? r == -2 : r == full);
        if (r > 0) FUZZ_ASSERT(r == full);
    }
    return 0;
}
