/* fuzz_common.h: helpers shared by the libFuzzer harnesses. Inputs are copied into exact-size
 * heap blocks so ASan flags any read past the end. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(c)                                                          \
    do {                                                                        \
        if (!(c)) {                                                             \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #c); \
            abort();                                                            \
        }                                                                       \
    } while (0)

static inline char *fuzz_copy(const uint8_t *d, size_t n) {
    char *p = malloc(n ? n : 1);
    if (n) memcpy(p, d, n);
    return p;
}

/* Split points to try: all of them for small inputs, a spread for large ones. */
static inline size_t fuzz_stride(size_t n) { return n <= 512 ? 1 : n / 256; }

#endif
