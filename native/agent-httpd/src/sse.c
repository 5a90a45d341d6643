/* sse: incremental Server-Sent Events line reader. See sse.h. */
#include "sse.h"

#include <string.h>

static int field_is(const char *f, size_t n, const char *lit) {
    return strlen(lit) == n && memcmp(f, lit, n) == 0;
}

long sse_parse_line(const char *buf, size_t len, size_t max_line, int eof, sse_line_t *out) {
    if (len == 0) return -2;
    size_t lim = max_line < len ? max_line + 1 : len;
    size_t i = 0;
    while (i < lim && buf[i] != '\n' && buf[i] != '\r') i++;
    size_t content = i, consumed;
    if (i > max_line) return -1;
    if (i == len) {
        if (!eof) return -2;
        consumed = len; /* final line without terminator */
    } else if (i == lim) {
        return -1; /* cannot happen: lim <= max_line + 1 handled above */
    } else if (buf[i] == '\n') {
        consumed = i + 1;
    } else if (i + 1 < len) { /* CR */
        consumed = buf[i + 1] == '\n' ? i + 2 : i + 1;
    } else {
        if (!eof) return -2;
        consumed = i + 1;
    }
    memset(out, 0, sizeof *out);
    out->field = buf;
    out->value = buf + content;
    if (content == 0) {
        out->kind = SSE_BLANK;
        return (long)consumed;
    }
    if (buf[0] == ':') {
        out->kind = SSE_COMMENT;
        out->value = buf + 1;
        out->value_len = content - 1;
        return (long)consumed;
    }
    const char *colon = memchr(buf, ':', content);
    size_t fl = colon ? (size_t)(colon - buf) : content;
    out->field_len = fl;
    if (colon) {
        size_t v = fl + 1;
        if (v < content && buf[v] == ' ') v++;
        out->value = buf + v;
        out->value_len = content - v;
    }
    if (field_is(buf, fl, "data")) out->kind = SSE_DATA;
    else if (field_is(buf, fl, "event")) out->kind = SSE_EVENT;
    else if (field_is(buf, fl, "id")) out->kind = SSE_ID;
    else if (field_is(buf, fl, "retry")) out->kind = SSE_RETRY;
    else out->kind = SSE_OTHER;
    return (long)consumed;
}
