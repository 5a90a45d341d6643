/* json: non-allocating JSON reader and a small escaping writer. See json.h. */
#include "json.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

typedef struct jp {
    const char *b;
    size_t len, pos;
    json_tok_t *t; /* NULL: count only */
    size_t nt, n;
    int maxd;
} jp_t;

static long jp_tok(jp_t *p, int type, size_t start) {
    if (p->t) {
        if (p->n >= p->nt) return -1;
        json_tok_t *k = &p->t[p->n];
        k->type = (uint8_t)type;
        k->start = (uint32_t)start;
        k->len = 0;
        k->size = 0;
        k->end = (uint32_t)(p->n + 1);
    } else if (p->n >= UINT32_MAX - 1) {
        return -1;
    }
    return (long)p->n++;
}

static void jp_finish(jp_t *p, long idx, size_t len) {
    if (p->t) {
        p->t[idx].len = (uint32_t)len;
        p->t[idx].end = (uint32_t)p->n;
    }
}

static void jp_ws(jp_t *p) {
    while (p->pos < p->len) {
        char c = p->b[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int jp_string(jp_t *p) {
    size_t i = p->pos + 1, start = i;
    for (;;) {
        if (i >= p->len) return JSON_INCOMPLETE;
        unsigned char c = (unsigned char)p->b[i];
        if (c == '"') break;
        if (c < 0x20) return JSON_INVALID;
        if (c == '\\') {
            if (++i >= p->len) return JSON_INCOMPLETE;
            char e = p->b[i];
            if (e == 'u') {
                for (int k = 1; k <= 4; k++) {
                    if (i + k >= p->len) return JSON_INCOMPLETE;
                    if (!is_hex(p->b[i + k])) return JSON_INVALID;
                }
                i += 4;
            } else if (!strchr("\"\\/bfnrt", e) || e == '\0') {
                return JSON_INVALID;
            }
        }
        i++;
    }
    long idx = jp_tok(p, JSON_STRING, start);
    if (idx < 0) return JSON_NOMEM;
    jp_finish(p, idx, i - start);
    p->pos = i + 1;
    return 0;
}

static int jp_number(jp_t *p) {
    size_t s = p->pos, i = s;
    const char *b = p->b;
    if (b[i] == '-') i++;
    if (i >= p->len) return JSON_INCOMPLETE;
    if (b[i] == '0') {
        i++;
    } else if (b[i] >= '1' && b[i] <= '9') {
        while (i < p->len && is_digit(b[i])) i++;
    } else {
        return JSON_INVALID;
    }
    if (i < p->len && b[i] == '.') {
        if (++i >= p->len) return JSON_INCOMPLETE;
        if (!is_digit(b[i])) return JSON_INVALID;
        while (i < p->len && is_digit(b[i])) i++;
    }
    if (i < p->len && (b[i] == 'e' || b[i] == 'E')) {
        if (++i >= p->len) return JSON_INCOMPLETE;
        if (b[i] == '+' || b[i] == '-') {
            if (++i >= p->len) return JSON_INCOMPLETE;
        }
        if (!is_digit(b[i])) return JSON_INVALID;
        while (i < p->len && is_digit(b[i])) i++;
    }
    long idx = jp_tok(p, JSON_NUMBER, s);
    if (idx < 0) return JSON_NOMEM;
    jp_finish(p, idx, i - s);
    p->pos = i;
    return 0;
}

static int jp_literal(jp_t *p, const char *word, int type) {
    size_t n = strlen(word);
    for (size_t k = 0; k < n; k++) {
        if (p->pos + k >= p->len) return JSON_INCOMPLETE;
        if (p->b[p->pos + k] != word[k]) return JSON_INVALID;
    }
    long idx = jp_tok(p, type, p->pos);
    if (idx < 0) return JSON_NOMEM;
    jp_finish(p, idx, n);
    p->pos += n;
    return 0;
}

static int jp_value(jp_t *p, int depth);

static int jp_container(jp_t *p, int depth, int is_obj) {
    if (depth >= p->maxd) return JSON_NOMEM;
    size_t start = p->pos;
    long idx = jp_tok(p, is_obj ? JSON_OBJECT : JSON_ARRAY, start);
    if (idx < 0) return JSON_NOMEM;
    char close = is_obj ? '}' : ']';
    uint32_t size = 0;
    p->pos++;
    jp_ws(p);
    if (p->pos >= p->len) return JSON_INCOMPLETE;
    if (p->b[p->pos] == close) {
        p->pos++;
        jp_finish(p, idx, p->pos - start);
        return 0;
    }
    for (;;) {
        int r;
        jp_ws(p);
        if (p->pos >= p->len) return JSON_INCOMPLETE;
        if (is_obj) {
            if (p->b[p->pos] != '"') return JSON_INVALID;
            if ((r = jp_string(p)) != 0) return r;
            jp_ws(p);
            if (p->pos >= p->len) return JSON_INCOMPLETE;
            if (p->b[p->pos] != ':') return JSON_INVALID;
            p->pos++;
        }
        if ((r = jp_value(p, depth + 1)) != 0) return r;
        size++;
        jp_ws(p);
        if (p->pos >= p->len) return JSON_INCOMPLETE;
        char c = p->b[p->pos++];
        if (c == close) break;
        if (c != ',') return JSON_INVALID;
    }
    if (p->t) p->t[idx].size = size;
    jp_finish(p, idx, p->pos - start);
    return 0;
}

static int jp_value(jp_t *p, int depth) {
    jp_ws(p);
    if (p->pos >= p->len) return JSON_INCOMPLETE;
    switch (p->b[p->pos]) {
    case '{': return jp_container(p, depth, 1);
    case '[': return jp_container(p, depth, 0);
    case '"': return jp_string(p);
    case 't': return jp_literal(p, "true", JSON_TRUE);
    case 'f': return jp_literal(p, "false", JSON_FALSE);
    case 'n': return jp_literal(p, "null", JSON_NULL);
    default:
        if (p->b[p->pos] == '-' || is_digit(p->b[p->pos])) return jp_number(p);
        return JSON_INVALID;
    }
}

long json_parse(const char *buf, size_t len, json_tok_t *toks, size_t ntoks, int max_depth) {
    if (len >= UINT32_MAX) return JSON_NOMEM;
    jp_t p = {buf, len, 0, toks, ntoks, 0, max_depth};
    if (p.maxd > JSON_MAX_DEPTH || p.maxd <= 0) p.maxd = JSON_MAX_DEPTH;
    int r = jp_value(&p, 0);
    if (r != 0) return r;
    jp_ws(&p);
    if (p.pos != len) return JSON_INVALID;
    return (long)p.n;
}

long json_parse_alloc(const char *buf, size_t len, size_t max_toks, json_tok_t **out) {
    *out = NULL;
    long n = json_parse(buf, len, NULL, 0, JSON_MAX_DEPTH);
    if (n < 0) return n;
    if ((size_t)n > max_toks) return JSON_NOMEM;
    json_tok_t *t = malloc((size_t)n * sizeof *t);
    if (!t) return JSON_NOMEM;
    long m = json_parse(buf, len, t, (size_t)n, JSON_MAX_DEPTH);
    if (m != n) { /* cannot happen: same input, same grammar */
        free(t);
        return JSON_INVALID;
    }
    *out = t;
    return n;
}

long json_get(const char *buf, const json_tok_t *t, long obj, const char *key) {
    if (obj < 0 || t[obj].type != JSON_OBJECT) return -1;
    long i = obj + 1;
    for (uint32_t k = 0; k < t[obj].size; k++) {
        long v = i + 1;
        if (json_str_eq(buf, &t[i], key)) return v;
        i = t[v].end;
    }
    return -1;
}

long json_at(const json_tok_t *t, long arr, uint32_t i) {
    if (arr < 0 || t[arr].type != JSON_ARRAY || i >= t[arr].size) return -1;
    long j = arr + 1;
    while (i--) j = t[j].end;
    return j;
}

int json_str_eq(const char *buf, const json_tok_t *t, const char *s) {
    if (t->type != JSON_STRING) return 0;
    size_t n = strlen(s);
    const char *raw = buf + t->start;
    if (!memchr(raw, '\\', t->len)) return t->len == n && memcmp(raw, s, n) == 0;
    char tmp[512];
    if (t->len > sizeof tmp) return 0; /* keys we look up are short */
    long d = json_str_decode(buf, t, tmp, sizeof tmp);
    return d >= 0 && (size_t)d == n && memcmp(tmp, s, n) == 0;
}

static unsigned hex4(const char *s) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v = (v << 4) | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return v;
}

static size_t put_cp(char *o, unsigned cp) {
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

long json_str_decode(const char *buf, const json_tok_t *t, char *out, size_t cap) {
    const char *s = buf + t->start;
    size_t i = 0, n = t->len, o = 0;
    while (i < n) {
        char c = s[i];
        if (c != '\\') {
            if (o >= cap) return -1;
            out[o++] = c;
            i++;
            continue;
        }
        char e = s[i + 1];
        i += 2;
        char ch;
        switch (e) {
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            unsigned cp = hex4(s + i);
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
                unsigned lo = hex4(s + i + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
            char tmp[4];
            size_t k = put_cp(tmp, cp);
            if (k > cap - o || o > cap) return -1;
            memcpy(out + o, tmp, k);
            o += k;
            continue;
        }
        default: ch = e; break; /* " \ / */
        }
        if (o >= cap) return -1;
        out[o++] = ch;
    }
    return (long)o;
}

int json_str_to_buf(const char *buf, const json_tok_t *t, buf_t *b) {
    char *dst = buf_reserve(b, t->len);
    if (!dst) return -1;
    long n = json_str_decode(buf, t, dst, t->len);
    if (n < 0) { /* cannot happen: decoded length <= raw length */
        b->err = 1;
        return -1;
    }
    b->len += (size_t)n;
    b->data[b->len] = '\0';
    return 0;
}

int json_int(const char *buf, const json_tok_t *t, long long *out) {
    if (t->type != JSON_NUMBER) return -1;
    const char *s = buf + t->start;
    size_t i = 0, n = t->len;
    int neg = 0;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n) return -1;
    unsigned long long v = 0;
    for (; i < n; i++) {
        if (!is_digit(s[i])) return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (ULLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (!neg && v > (unsigned long long)LLONG_MAX) return -1;
    if (neg && v > (unsigned long long)LLONG_MAX + 1ULL) return -1;
    *out = neg ? (long long)(0ULL - v) : (long long)v;
    return 0;
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

void jw_str(buf_t *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    buf_putc(b, '"');
    size_t i = 0, run = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        buf_append(b, s + run, i - run);
        if (c < 0x80) {
            char esc[6] = {'\\', 0, 0, 0, 0, 0};
            size_t k = 2;
            switch (c) {
            case '"': esc[1] = '"'; break;
            case '\\': esc[1] = '\\'; break;
            case '\n': esc[1] = 'n'; break;
            case '\r': esc[1] = 'r'; break;
            case '\t': esc[1] = 't'; break;
            case '\b': esc[1] = 'b'; break;
            case '\f': esc[1] = 'f'; break;
            default:
                esc[1] = 'u';
                esc[2] = '0';
                esc[3] = '0';
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                k = 6;
            }
            buf_append(b, esc, k);
            i++;
        } else {
            size_t L = utf8_seq_len((const unsigned char *)s + i, n - i);
            if (L == 0) {
                buf_append(b, REPLACEMENT, 3);
                i++;
            } else {
                buf_append(b, s + i, L);
                i += L;
            }
        }
        run = i;
    }
    buf_append(b, s + run, i - run);
    buf_putc(b, '"');
}

void jw_cstr(buf_t *b, const char *s) { jw_str(b, s, strlen(s)); }

/* Copy a string token's raw escaped content, replacing invalid UTF-8 with U+FFFD. */
static void jw_raw_string(buf_t *b, const char *s, size_t n) {
    buf_putc(b, '"');
    size_t i = 0, run = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\') {
            i += 2; /* escape syntax was validated by the parser */
            continue;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t L = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (L) {
            i += L;
            continue;
        }
        buf_append(b, s + run, i - run);
        buf_append(b, REPLACEMENT, 3);
        run = ++i;
    }
    buf_append(b, s + run, n - run);
    buf_putc(b, '"');
}

void jw_value(buf_t *b, const char *buf, const json_tok_t *t, long i) {
    const json_tok_t *k = &t[i];
    switch (k->type) {
    case JSON_STRING: jw_raw_string(b, buf + k->start, k->len); return;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        int obj = k->type == JSON_OBJECT;
        buf_putc(b, obj ? '{' : '[');
        long j = i + 1;
        for (uint32_t m = 0; m < k->size && !b->err; m++) {
            if (m) buf_putc(b, ',');
            if (obj) {
                jw_raw_string(b, buf + t[j].start, t[j].len);
                buf_putc(b, ':');
                j++;
            }
            jw_value(b, buf, t, j);
            j = t[j].end;
        }
        buf_putc(b, obj ? '}' : ']');
        return;
    }
    default: buf_append(b, buf + k->start, k->len); return;
    }
}
