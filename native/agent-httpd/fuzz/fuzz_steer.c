/* libFuzzer harness for steer_parse (a steering message's body): whole input and every split. */
#include "../src/steer.h"
#include "fuzz_common.h"

static int parse(const uint8_t *data, size_t n) {
    char *s = fuzz_copy(data, n);
    steer_msg_t m;
    const char *err = NULL;
    int rc = steer_parse(s, n, &m, &err);
    FUZZ_ASSERT(rc == STEER_OK || rc == STEER_BAD || rc == STEER_TOO_LARGE);
    if (rc == STEER_OK) {
        const json_tok_t *id = &m.t[m.id], *text = &m.t[m.text];
        FUZZ_ASSERT(id->type == JSON_STRING && id->len >= 1 && id->len <= STEER_ID_MAX);
        FUZZ_ASSERT(id->start + id->len <= n && text->start + text->len <= n);
        FUZZ_ASSERT(text->type == JSON_STRING && text->len >= 1 && text->len <= STEER_TEXT_MAX);
    } else {
        FUZZ_ASSERT(err != NULL);
    }
    free(s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    parse(data, size);
    for (size_t k = 0; k < size; k += fuzz_stride(size)) parse(data, k);
    return 0;
}
