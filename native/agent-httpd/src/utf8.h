/* utf8: small UTF-8 helpers shared by the JSON writer and the agent loop. Pure functions. */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* Length (1..4) of the well-formed UTF-8 sequence starting at s (n bytes available), or 0 if
 * the bytes there are not a complete well-formed sequence (overlong, surrogate, > U+10FFFF,
 * bad continuation, or truncated by n). */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* Largest k <= max (and <= n) such that s[0..k) does not end inside a multibyte sequence. */
size_t utf8_cut(const char *s, size_t n, size_t max);

/* Number of trailing bytes (0..3) of s[0..n) that form the valid beginning of a multibyte
 * sequence still missing its last bytes; such a tail should be held back until more arrives. */
size_t utf8_incomplete_tail(const char *s, size_t n);

#endif
