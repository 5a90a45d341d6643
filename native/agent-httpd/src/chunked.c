/* chunked: incremental chunked transfer decoder. See chunked.h. */
#include "chunked.h"

#include <string.h>

enum { ST_SIZE, ST_DATA, ST_DATA_END, ST_TRAILER, ST_DONE };

void chunked_init(chunked_t *c) {
    c->state = ST_SIZE;
    c->remaining = 0;
    c->trailer_bytes = 0;
}

int chunked_done(const chunked_t *c) { return c->state == ST_DONE; }

int chunked_eof_ok(const chunked_t *c) { return c->state == ST_DONE || c->state == ST_TRAILER; }

static int hexval(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Length of the line at buf including its LF, -2 if no LF yet, -1 if longer than max. */
static long line_len(const char *buf, size_t len, size_t max) {
    size_t lim = len < max ? len : max;
    const char *nl = memchr(buf, '\n', lim);
    if (nl) return (long)(nl - buf) + 1;
    return len >= max ? -1 : -2;
}

/* Content length of a line (without CRLF / LF). A CR is allowed only right before the LF. */
static long line_body(const char *buf, long n) {
    long e = n - 1;
    if (e > 0 && buf[e - 1] == '\r') e--;
    if (memchr(buf, '\r', (size_t)e)) return -1;
    return e;
}

static long decode_size(chunked_t *c, const char *buf, size_t len) {
    long n = line_len(buf, len, CHUNKED_MAX_LINE);
    if (n < 0) return n;
    long e = line_body(buf, n);
    if (e < 0) return -1;
    long i = 0;
    uint64_t size = 0;
    int digits = 0, v;
    while (i < e && (v = hexval(buf[i])) >= 0) {
        if (++digits > 15) return -1; /* bounded: no overflow */
        size = size * 16 + (uint64_t)v;
        i++;
    }
    if (digits == 0) return -1;
    while (i < e && (buf[i] == ' ' || buf[i] == '\t')) i++;
    if (i < e) {
        if (buf[i] != ';') return -1;
        for (; i < e; i++) {
            unsigned char ch = (unsigned char)buf[i];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f) return -1;
        }
    }
    if (size == 0) {
        c->state = ST_TRAILER;
    } else {
        c->state = ST_DATA;
        c->remaining = size;
    }
    return n;
}

long chunked_decode(chunked_t *c, const char *buf, size_t len, const char **data,
                    size_t *data_len) {
    *data = buf;
    *data_len = 0;
    if (c->state == ST_DONE) return 0;
    if (len == 0) return -2;
    switch (c->state) {
    case ST_SIZE: return decode_size(c, buf, len);
    case ST_DATA: {
        size_t n = len;
        if ((uint64_t)n > c->remaining) n = (size_t)c->remaining;
        c->remaining -= n;
        if (c->remaining == 0) c->state = ST_DATA_END;
        *data_len = n;
        return (long)n;
    }
    case ST_DATA_END:
        if (buf[0] == '\n') {
            c->state = ST_SIZE;
            return 1;
        }
        if (buf[0] != '\r') return -1;
        if (len < 2) return -2;
        if (buf[1] != '\n') return -1;
        c->state = ST_SIZE;
        return 2;
    case ST_TRAILER: {
        if (c->trailer_bytes >= CHUNKED_MAX_TRAILERS) return -1;
        size_t room = CHUNKED_MAX_TRAILERS - c->trailer_bytes;
        long n = line_len(buf, len, room);
        if (n < 0) return n;
        long e = line_body(buf, n);
        if (e < 0) return -1;
        if (e == 0) {
            c->state = ST_DONE;
            return n;
        }
        for (long i = 0; i < e; i++) {
            unsigned char ch = (unsigned char)buf[i];
            if ((ch < 0x20 && ch != '\t') || ch == 0x7f) return -1;
        }
        c->trailer_bytes += (size_t)n;
        return n;
    }
    default: return -1;
    }
}
