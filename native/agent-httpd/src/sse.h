/* sse: an incremental Server-Sent Events line reader.
 *
 * sse_parse_line() reads one line from (buf, len) and classifies it; it allocates nothing and
 * returns views into buf. Lines end in LF, CRLF or a lone CR. Assembling `data:` lines into
 * events (and deciding what an event means) is the caller's job. */
#ifndef SSE_H
#define SSE_H

#include <stddef.h>

enum sse_kind {
    SSE_BLANK = 1, /* empty line: dispatch the pending event */
    SSE_DATA,      /* data: value */
    SSE_EVENT,     /* event: value */
    SSE_ID,        /* id: value */
    SSE_RETRY,     /* retry: value */
    SSE_COMMENT,   /* ": anything" */
    SSE_OTHER      /* any other field name */
};

typedef struct sse_line {
    int kind;          /* enum sse_kind */
    const char *field; /* field name (empty for BLANK and COMMENT) */
    size_t field_len;
    const char *value; /* after the colon, one leading space removed; comment text for COMMENT */
    size_t value_len;
} sse_line_t;

/* Read one line from buf[0..len). Returns the bytes consumed including the line ending (> 0);
 * -2 if no complete line is there yet (a CR at the very end counts as incomplete, since an LF
 * may follow) unless eof is set, in which case the remaining bytes form the last line; -1 if
 * the line is longer than max_line bytes. Returns -2 for len == 0. */
long sse_parse_line(const char *buf, size_t len, size_t max_line, int eof, sse_line_t *out);

#endif
