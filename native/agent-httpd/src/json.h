/* json: a non-allocating JSON reader (tokens over a caller-given arena) and a small writer.
 *
 * Reader. json_parse() checks that buf[0..len) is exactly one JSON value (RFC 8259 grammar;
 * string bytes >= 0x80 are accepted as-is and sanitised by the writer) and fills a caller-owned
 * array of tokens in document order. An object token is followed by its members as
 * (string key, value subtree) pairs; an array token by its element subtrees. Tokens hold offsets
 * into buf, so buf must outlive them. Nesting is bounded by max_depth.
 *
 * Writer. jw_* append JSON text to a buf_t (bounded; errors are sticky in the buf). Strings
 * are escaped and any invalid UTF-8 becomes U+FFFD, so the output is always valid UTF-8 JSON
 * containing no raw control characters (safe for one SSE `data:` line).
 */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum json_type { JSON_NULL = 1, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

typedef struct json_tok {
    uint32_t start; /* offset of the value; for strings, of the first byte after the quote */
    uint32_t len;   /* bytes; for strings the raw (still escaped) content without quotes */
    uint32_t end;   /* index of the first token after this value's subtree */
    uint32_t size;  /* arrays: elements; objects: members; else 0 */
    uint8_t type;   /* enum json_type */
} json_tok_t;

#define JSON_INVALID (-1)
#define JSON_INCOMPLETE (-2)
#define JSON_NOMEM (-3) /* more than ntoks tokens, or nested deeper than max_depth */
#define JSON_MAX_DEPTH 64

/* Parse buf[0..len) as one JSON value (leading/trailing whitespace allowed).
 * Returns the number of tokens (>= 1); JSON_INCOMPLETE if the input ends inside the value;
 * JSON_INVALID on a syntax error or trailing garbage; JSON_NOMEM if the value needs more than
 * ntoks tokens or is nested deeper than max_depth (<= JSON_MAX_DEPTH). With toks == NULL it only
 * validates and counts (ntoks is then ignored). Allocates nothing. */
long json_parse(const char *buf, size_t len, json_tok_t *toks, size_t ntoks, int max_depth);

/* Convenience: count, malloc exactly, parse. On success returns the token count and sets *out
 * (caller frees); otherwise returns the json_parse error and *out is NULL. Refuses
 * (JSON_NOMEM) values needing more than max_toks tokens. */
long json_parse_alloc(const char *buf, size_t len, size_t max_toks, json_tok_t **out);

/* Index of the value of member `key` in the object at t[obj], or -1 (also if t[obj] is not an
 * object). Keys are compared after unescaping. */
long json_get(const char *buf, const json_tok_t *t, long obj, const char *key);

/* Index of element i of the array at t[arr], or -1. O(i). */
long json_at(const json_tok_t *t, long arr, uint32_t i);

/* 1 if the string token t equals the NUL-terminated s after unescaping, else 0. */
int json_str_eq(const char *buf, const json_tok_t *t, const char *s);

/* Unescape the string token t into out (capacity cap). Returns the decoded length, or -1 if
 * cap is too small (t->len bytes always suffice). Lone surrogates decode to U+FFFD; \u0000
 * decodes to a NUL byte (lengths are explicit). */
long json_str_decode(const char *buf, const json_tok_t *t, char *out, size_t cap);

/* Decode the string token into a fresh buf_t appended content (bounded by b->max).
 * Returns 0 or -1 (b->err set). */
int json_str_to_buf(const char *buf, const json_tok_t *t, buf_t *b);

/* If t is an integral number token fitting in long long, store it and return 0; else -1. */
int json_int(const char *buf, const json_tok_t *t, long long *out);

/* Writer: append s[0..n) as a quoted JSON string. */
void jw_str(buf_t *b, const char *s, size_t n);
/* Writer: append a NUL-terminated string as a quoted JSON string. */
void jw_cstr(buf_t *b, const char *s);
/* Writer: append the value subtree t[i] of buf, compactly re-serialised (no whitespace). */
void jw_value(buf_t *b, const char *buf, const json_tok_t *t, long i);

#endif
