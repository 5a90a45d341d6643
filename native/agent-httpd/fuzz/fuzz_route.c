/* libFuzzer harness for route_head (what a request head means): whole input and every split. */
#include "../src/route.h"
#include "fuzz_common.h"

static const char token[] = "fuzz-token";

static int route(const uint8_t *data, size_t n, route_t *r) {
    char *s = fuzz_copy(data, n);
    int rc = route_head(s, n, token, sizeof token - 1, r);
    FUZZ_ASSERT(rc == 0 || rc == -2);
    if (rc == 0 && r->kind == ROUTE_ERROR) {
        FUZZ_ASSERT(r->status >= 400 && r->status <= 431 && r->code && r->message);
        FUZZ_ASSERT(memchr(r->extra, '\0', sizeof r->extra) != NULL);
    }
    if (rc == 0 && r->kind != ROUTE_ERROR) {
        FUZZ_ASSERT(r->head_len > 0 && r->head_len <= n && r->head_len <= ROUTE_HEAD_MAX);
        FUZZ_ASSERT(r->chunked || r->content_length <= ROUTE_BODY_MAX);
        FUZZ_ASSERT(memchr(r->run_id, '\0', sizeof r->run_id) != NULL);
        FUZZ_ASSERT((r->kind != ROUTE_CANCEL && r->kind != ROUTE_MESSAGE) || r->run_id[0] != '\0');
    }
    free(s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    route_t full, part;
    int rc = route(data, size, &full);
    for (size_t k = 0; k < size; k += fuzz_stride(size)) {
        int r = route(data, k, &part);
        /* once the head is whole, what follows it changes nothing */
        if (rc == 0 && full.kind != ROUTE_ERROR && k >= full.head_len)
            FUZZ_ASSERT(r == 0 && part.kind == full.kind && part.head_len == full.head_len);
    }
    return 0;
}
