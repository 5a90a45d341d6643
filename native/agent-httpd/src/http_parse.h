/* http_parse: HTTP/1.x request and response head parsers, in the picohttpparser manner.
 *
 * Both take (buf, len), allocate nothing, and fill caller-owned views that point into buf.
 * Lines may end in CRLF or a bare LF. Leading empty lines before a request line are skipped.
 * Obsolete header line folding is rejected. */
#ifndef HTTP_PARSE_H
#define HTTP_PARSE_H

#include <stddef.h>

typedef struct http_header {
    const char *name;
    size_t name_len;
    const char *value; /* optional whitespace around the value is trimmed */
    size_t value_len;
} http_header_t;

/* Parse a request head. *num_headers holds the capacity of headers on entry and the count on
 * return. Returns the head's length in bytes (through the blank line) on success, -2 if buf
 * holds an incomplete but so-far valid head, -1 if it is invalid (including more headers
 * than the capacity). Views point into buf. */
int http_parse_request(const char *buf, size_t len, const char **method, size_t *method_len,
                       const char **path, size_t *path_len, int *minor_version,
                       http_header_t *headers, size_t *num_headers);

/* Parse a response head ("HTTP/1.x NNN [reason]"). Same return values and ownership as
 * http_parse_request; *status is 100..999. */
int http_parse_response(const char *buf, size_t len, int *minor_version, int *status,
                        const char **msg, size_t *msg_len, http_header_t *headers,
                        size_t *num_headers);

/* The first header named `name` (ASCII case-insensitive), or NULL. */
const http_header_t *http_header_find(const http_header_t *h, size_t n, const char *name);

/* 1 if s[0..n) equals the NUL-terminated lit ignoring ASCII case, else 0. */
int http_ieq(const char *s, size_t n, const char *lit);

#endif
