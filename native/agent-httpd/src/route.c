/* route: what to do with a request head. See route.h. */
#include "route.h"

#include <stdio.h>
#include <string.h>

#include "http_parse.h"

#define MAX_HEADERS 64

static int fail(route_t *r, int status, const char *code, const char *message) {
    r->kind = ROUTE_ERROR;
    r->status = status;
    r->code = code;
    r->message = message;
    return 0;
}

static int ct_eq(const char *a, size_t an, const char *b, size_t bn) {
    /* constant time in the length of b (the secret) */
    unsigned char diff = (unsigned char)(an != bn);
    for (size_t i = 0; i < bn; i++) diff |= (unsigned char)((i < an ? a[i] : 0) ^ b[i]);
    return diff == 0;
}

static int authorized(const http_header_t *h, size_t nh, const char *token, size_t token_len) {
    const http_header_t *a = http_header_find(h, nh, "authorization");
    if (!a || a->value_len < 7 || !http_ieq(a->value, 7, "bearer ")) return 0;
    const char *v = a->value + 7;
    size_t n = a->value_len - 7;
    while (n && *v == ' ') v++, n--;
    return ct_eq(v, n, token, token_len);
}

static int hexv(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
}

/* Percent-decode a path segment into out (cap bytes + NUL). Returns the length, or -1 if it
 * is malformed, too long, or decodes to a NUL byte. */
static long pct_decode(const char *s, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n || hexv(s[i + 1]) < 0 || hexv(s[i + 2]) < 0) return -1;
            c = (char)(hexv(s[i + 1]) * 16 + hexv(s[i + 2]));
            if (c == '\0') return -1;
            i += 2;
        }
        if (o >= cap) return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return (long)o;
}

/* The endpoint of path (query dropped); ROUTE_ERROR when there is none. */
static enum route_kind endpoint(const char *path, size_t pl, route_t *r) {
    const char *q = memchr(path, '?', pl);
    size_t plen = q ? (size_t)(q - path) : pl;
    if (plen == 8 && memcmp(path, "/healthz", 8) == 0) return ROUTE_HEALTH;
    if (plen == 5 && memcmp(path, "/chat", 5) == 0) return ROUTE_CHAT;
    if (plen < 7 || plen >= 1024 || memcmp(path, "/runs/", 6) != 0) return ROUTE_ERROR;
    /* /runs/{id}/cancel or /runs/{id}/messages */
    static const struct { const char *tail; size_t n; enum route_kind kind; } runs[] = {
        {"/cancel", 7, ROUTE_CANCEL}, {"/messages", 9, ROUTE_MESSAGE}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        size_t n = runs[i].n;
        if (plen <= 6 + n || memcmp(path + plen - n, runs[i].tail, n) != 0) continue;
        size_t idn = plen - 6 - n;
        if (!memchr(path + 6, '/', idn) && pct_decode(path + 6, idn, r->run_id, RUN_ID_MAX) > 0)
            return runs[i].kind;
    }
    return ROUTE_ERROR;
}

static int bad_framing(route_t *r, int status, const char *code, const char *message) {
    fail(r, status, code, message);
    return -1;
}

/* Content-Length / Transfer-Encoding into r. Returns 0, or -1 with r an error answer. */
static int framing(const http_header_t *h, size_t nh, route_t *r) {
    int have_cl = 0;
    for (size_t i = 0; i < nh; i++) {
        if (!http_ieq(h[i].name, h[i].name_len, "content-length")) continue;
        const char *v = h[i].value;
        size_t n = h[i].value_len, digits = 0;
        while (digits < n && v[digits] >= '0' && v[digits] <= '9') digits++;
        if (n == 0 || digits != n) return bad_framing(r, 400, "bad_request", "bad Content-Length");
        if (n > 15) {
            if (n < 40) return bad_framing(r, 413, "body_too_large", "the request body exceeds 8 MiB");
            return bad_framing(r, 400, "bad_request", "bad Content-Length");
        }
        uint64_t x = 0;
        for (size_t k = 0; k < n; k++) x = x * 10 + (uint64_t)(v[k] - '0');
        if (have_cl && x != r->content_length)
            return bad_framing(r, 400, "bad_request", "conflicting Content-Length headers");
        r->content_length = x;
        have_cl = 1;
    }
    const http_header_t *te = http_header_find(h, nh, "transfer-encoding");
    if (te) {
        if (!http_ieq(te->value, te->value_len, "chunked") || have_cl)
            return bad_framing(r, 400, "bad_request", "unsupported Transfer-Encoding");
        r->chunked = 1;
    }
    if (!r->chunked && r->content_length > ROUTE_BODY_MAX)
        return bad_framing(r, 413, "body_too_large", "the request body exceeds 8 MiB");
    r->expect_continue = http_header_find(h, nh, "expect") != NULL && route_has_body(r);
    return 0;
}

int route_head(const char *data, size_t len, const char *token, size_t token_len, route_t *r) {
    memset(r, 0, sizeof *r);
    http_header_t h[MAX_HEADERS];
    size_t nh = MAX_HEADERS;
    const char *method, *path;
    size_t ml, pl;
    int minor;
    int hl = http_parse_request(data, len, &method, &ml, &path, &pl, &minor, h, &nh);
    if (hl > ROUTE_HEAD_MAX || (hl == -2 && len >= ROUTE_HEAD_MAX))
        return fail(r, 431, "head_too_large", "the request head exceeds 16 KiB");
    if (hl == -2) return -2;
    if (hl < 0) return fail(r, 400, "bad_request", "malformed HTTP request");
    if (!authorized(h, nh, token, token_len)) {
        snprintf(r->extra, sizeof r->extra, "WWW-Authenticate: Bearer\r\n");
        return fail(r, 401, "unauthorized", "missing or wrong bearer token");
    }
    enum route_kind kind = endpoint(path, pl, r);
    if (kind == ROUTE_ERROR) return fail(r, 404, "not_found", "no such endpoint");
    const char *want = kind == ROUTE_HEALTH ? "GET" : "POST";
    if (!http_ieq(method, ml, want)) {
        snprintf(r->extra, sizeof r->extra, "Allow: %s\r\n", want);
        return fail(r, 405, "method_not_allowed",
                    kind == ROUTE_HEALTH ? "use GET for this endpoint" : "use POST for this endpoint");
    }
    if (framing(h, nh, r) != 0) return 0;
    r->kind = kind;
    r->head_len = (size_t)hl;
    return 0;
}

int route_has_body(const route_t *r) { return r->chunked || r->content_length > 0; }
