/* http_parse: HTTP/1.x head parsers. See http_parse.h. */
#include "http_parse.h"

#include <limits.h>
#include <string.h>

/* RFC 9110 tchar */
static int is_tchar(unsigned char c) {
    if (c >= '0' && c <= '9') return 1;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-value bytes: VCHAR, SP, HTAB, obs-text */
static int is_vchar_ws(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

typedef struct cur {
    const char *b;
    size_t len, pos;
} cur_t;

/* Consume a line ending (CRLF or LF). 0 ok, -2 incomplete, -1 invalid. */
static int eat_eol(cur_t *c) {
    if (c->pos >= c->len) return -2;
    if (c->b[c->pos] == '\n') {
        c->pos++;
        return 0;
    }
    if (c->b[c->pos] != '\r') return -1;
    if (c->pos + 1 >= c->len) return -2;
    if (c->b[c->pos + 1] != '\n') return -1;
    c->pos += 2;
    return 0;
}

static int parse_headers(cur_t *c, http_header_t *h, size_t *num) {
    size_t cap = *num, n = 0;
    for (;;) {
        if (c->pos >= c->len) return -2;
        char ch = c->b[c->pos];
        if (ch == '\r' || ch == '\n') {
            int r = eat_eol(c);
            if (r) return r;
            break;
        }
        if (n >= cap) return -1;
        size_t ns = c->pos;
        while (c->pos < c->len && is_tchar((unsigned char)c->b[c->pos])) c->pos++;
        if (c->pos >= c->len) return -2;
        if (c->pos == ns || c->b[c->pos] != ':') return -1; /* also rejects obs-fold */
        h[n].name = c->b + ns;
        h[n].name_len = c->pos - ns;
        c->pos++;
        while (c->pos < c->len && (c->b[c->pos] == ' ' || c->b[c->pos] == '\t')) c->pos++;
        size_t vs = c->pos;
        while (c->pos < c->len && is_vchar_ws((unsigned char)c->b[c->pos])) c->pos++;
        if (c->pos >= c->len) return -2;
        size_t ve = c->pos;
        while (ve > vs && (c->b[ve - 1] == ' ' || c->b[ve - 1] == '\t')) ve--;
        int r = eat_eol(c);
        if (r) return r;
        h[n].value = c->b + vs;
        h[n].value_len = ve - vs;
        n++;
    }
    *num = n;
    return 0;
}

/* "HTTP/1.x" */
static int parse_version(cur_t *c, int *minor) {
    static const char v[] = "HTTP/1.";
    for (size_t i = 0; i < 7; i++) {
        if (c->pos >= c->len) return -2;
        if (c->b[c->pos] != v[i]) return -1;
        c->pos++;
    }
    if (c->pos >= c->len) return -2;
    char d = c->b[c->pos];
    if (d < '0' || d > '9') return -1;
    *minor = d - '0';
    c->pos++;
    return 0;
}

int http_parse_request(const char *buf, size_t len, const char **method, size_t *method_len,
                       const char **path, size_t *path_len, int *minor_version,
                       http_header_t *headers, size_t *num_headers) {
    if (len > INT_MAX) len = INT_MAX;
    cur_t c = {buf, len, 0};
    int r;
    while (c.pos < c.len && (buf[c.pos] == '\r' || buf[c.pos] == '\n')) c.pos++;
    size_t ms = c.pos;
    while (c.pos < c.len && is_tchar((unsigned char)buf[c.pos])) c.pos++;
    if (c.pos >= c.len) return -2;
    if (c.pos == ms || buf[c.pos] != ' ') return -1;
    *method = buf + ms;
    *method_len = c.pos - ms;
    c.pos++;
    size_t ps = c.pos;
    while (c.pos < c.len && (unsigned char)buf[c.pos] > 0x20 && (unsigned char)buf[c.pos] < 0x7f)
        c.pos++;
    if (c.pos >= c.len) return -2;
    if (c.pos == ps || buf[c.pos] != ' ') return -1;
    *path = buf + ps;
    *path_len = c.pos - ps;
    c.pos++;
    if ((r = parse_version(&c, minor_version))) return r;
    if ((r = eat_eol(&c))) return r;
    if ((r = parse_headers(&c, headers, num_headers))) return r;
    return (int)c.pos;
}

int http_parse_response(const char *buf, size_t len, int *minor_version, int *status,
                        const char **msg, size_t *msg_len, http_header_t *headers,
                        size_t *num_headers) {
    if (len > INT_MAX) len = INT_MAX;
    cur_t c = {buf, len, 0};
    int r;
    if ((r = parse_version(&c, minor_version))) return r;
    if (c.pos >= c.len) return -2;
    if (buf[c.pos] != ' ') return -1;
    c.pos++;
    int st = 0;
    for (int i = 0; i < 3; i++) {
        if (c.pos >= c.len) return -2;
        char d = buf[c.pos++];
        if (d < '0' || d > '9') return -1;
        st = st * 10 + (d - '0');
    }
    if (st < 100) return -1;
    if (c.pos >= c.len) return -2;
    size_t rs = c.pos, re;
    if (buf[c.pos] == ' ') {
        rs = ++c.pos;
        while (c.pos < c.len && is_vchar_ws((unsigned char)buf[c.pos])) c.pos++;
        if (c.pos >= c.len) return -2;
    } else if (buf[c.pos] != '\r' && buf[c.pos] != '\n') {
        return -1;
    }
    re = c.pos;
    if ((r = eat_eol(&c))) return r;
    if ((r = parse_headers(&c, headers, num_headers))) return r;
    *status = st;
    *msg = buf + rs;
    *msg_len = re - rs;
    return (int)c.pos;
}

int http_ieq(const char *s, size_t n, const char *lit) {
    size_t m = strlen(lit);
    if (n != m) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)s[i], b = (unsigned char)lit[i];
        if (a >= 'A' && a <= 'Z') a |= 0x20;
        if (b >= 'A' && b <= 'Z') b |= 0x20;
        if (a != b) return 0;
    }
    return 1;
}

const http_header_t *http_header_find(const http_header_t *h, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (http_ieq(h[i].name, h[i].name_len, name)) return &h[i];
    return NULL;
}
