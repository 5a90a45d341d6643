/* buf: a bounded, growable byte buffer.
 *
 * A buf_t owns its storage (free it with buf_free). It never grows past `max` bytes of content;
 * an append that would, or an allocation failure, sets the sticky `err` flag and leaves the
 * content unchanged, so a caller may issue many appends and check `err` once. The content is
 * always NUL-terminated (the NUL is not counted in len). */
#ifndef BUF_H
#define BUF_H

#include <stddef.h>

typedef struct buf {
    char *data;  /* NULL until the first append */
    size_t len;  /* bytes of content */
    size_t cap;  /* bytes of content the allocation can hold */
    size_t max;  /* hard cap on len */
    int err;     /* sticky: 1 once an append failed */
} buf_t;

/* Initialise an empty buffer that will hold at most `max` bytes. Allocates nothing. */
void buf_init(buf_t *b, size_t max);

/* Release the storage; the buffer is empty and usable again afterwards (same max). */
void buf_free(buf_t *b);

/* Empty the content and clear `err`; keeps the allocation. */
void buf_reset(buf_t *b);

/* Make room for `n` more bytes. Returns a pointer to the free space (data + len), valid until
 * the next call that may grow the buffer, or NULL (and sets err) past max or on OOM. */
char *buf_reserve(buf_t *b, size_t n);

/* Append bytes. Returns 0, or -1 (and sets err; content unchanged) past max or on OOM. */
int buf_append(buf_t *b, const void *p, size_t n);
int buf_puts(buf_t *b, const char *s);
int buf_putc(buf_t *b, char c);

/* Append printf-formatted text. Returns 0 or -1 like buf_append. */
int buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Drop the first n bytes (n > len drops everything). */
void buf_consume(buf_t *b, size_t n);

#endif
