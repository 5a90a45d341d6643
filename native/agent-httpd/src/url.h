/* url: parse the loopback-only URLs agent-httpd may reach. */
#ifndef URL_H
#define URL_H

#include <stddef.h>

#define URL_MAX_PATH 2048

typedef struct url {
    int v6;                    /* 1: connect to ::1, 0: to 127.0.0.1 */
    int port;                  /* 1..65535 */
    char host[32];             /* Host header value, e.g. "127.0.0.1:8000" or "[::1]:80" */
    char path[URL_MAX_PATH];   /* origin-form target, starts with '/', query kept */
} url_t;

/* Parse s[0..len) as http://127.0.0.1[:PORT][/path], http://localhost[:PORT][/path] or
 * http://[::1][:PORT][/path] (port defaults to 80). Returns 0 and fills *u, or -1 with a
 * human-readable reason in err (NUL-terminated, truncated to errlen). Allocates nothing. */
int url_parse(const char *s, size_t len, url_t *u, char *err, size_t errlen);

#endif
