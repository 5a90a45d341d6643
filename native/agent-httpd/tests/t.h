/* t.h: a tiny test harness for the native unit tests.
 *
 * CHECK(cond) counts a pass or prints the failing line and counts a failure. guard_copy() puts
 * input right before a PROT_NONE page so any read past the end faults under test.
 * t_finish() prints "<name>: N passed, M failed" and returns the exit status. */
#ifndef T_H
#define T_H

/* MAP_ANONYMOUS; include t.h first in every test */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int t_pass, t_fail;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            t_pass++;                                                                 \
        } else {                                                                      \
            t_fail++;                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                             \
    } while (0)

/* A guarded copy: returned pointer p has len readable bytes, and p[len] is unmapped. */
typedef struct guard {
    char *map;
    size_t maplen;
    char *p;
} guard_t;

static inline char *guard_copy(guard_t *g, const void *src, size_t len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t data_pages = (len + page - 1) / page;
    if (data_pages == 0) data_pages = 1;
    g->maplen = (data_pages + 1) * page;
    g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    if (mprotect(g->map + data_pages * page, page, PROT_NONE) != 0) {
        perror("mprotect");
        exit(2);
    }
    g->p = g->map + data_pages * page - len;
    if (len) memcpy(g->p, src, len);
    return g->p;
}

static inline void guard_free(guard_t *g) { munmap(g->map, g->maplen); }

static inline int t_finish(const char *name) {
    printf("%s: %d passed, %d failed\n", name, t_pass, t_fail);
    return t_fail ? 1 : 0;
}

#endif
