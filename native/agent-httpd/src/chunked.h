/* chunked: an incremental decoder for HTTP/1.1 chunked transfer coding.
 *
 * The decoder keeps only a small state; data is returned as views into the caller's buffer,
 * so nothing is copied or allocated. Chunk extensions (";name=value") and trailers are
 * accepted and ignored; line endings may be CRLF or LF; a size line is at most
 * CHUNKED_MAX_LINE bytes and trailers at most CHUNKED_MAX_TRAILERS bytes in total. */
#ifndef CHUNKED_H
#define CHUNKED_H

#include <stddef.h>
#include <stdint.h>

#define CHUNKED_MAX_LINE 4096
#define CHUNKED_MAX_TRAILERS 16384

typedef struct chunked {
    int state;
    uint64_t remaining; /* data bytes left in the current chunk */
    size_t trailer_bytes;
} chunked_t;

void chunked_init(chunked_t *c);

/* Decode from buf[0..len). Returns the number of bytes consumed (> 0) and points *data (length
 * *data_len) at the chunk data found in them (a view into buf, possibly empty when only framing was
 * consumed); 0 once the body is complete (then nothing is consumed); -2 if more input is needed
 * before anything can be consumed (the caller keeps the unconsumed bytes and appends more);
 * -1 if the input is not valid chunked coding. */
long chunked_decode(chunked_t *c, const char *buf, size_t len, const char **data,
                    size_t *data_len);

/* 1 once the terminating zero-size chunk and trailers have been consumed. */
int chunked_done(const chunked_t *c);

/* 1 if the peer closing the connection now still leaves a complete body: the body is done,
 * or the zero-size chunk was seen and only the trailers/final line ending are missing (a
 * common server shortcut). */
int chunked_eof_ok(const chunked_t *c);

#endif
