/* url: loopback-only URL parser. See url.h. */
#include "url.h"

#include <stdio.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *msg) {
    if (errlen) snprintf(err, errlen, "%s", msg);
    return -1;
}

static int prefix_ci(const char *s, size_t len, const char *lit) {
    size_t n = strlen(lit);
    if (len < n) return 0;
    for (size_t i = 0; i < n; i++) {
        char a = s[i];
        if (a >= 'A' && a <= 'Z') a = (char)(a | 0x20);
        if (a != lit[i]) return 0;
    }
    return 1;
}

int url_parse(const char *s, size_t len, url_t *u, char *err, size_t errlen) {
    memset(u, 0, sizeof *u);
    if (!prefix_ci(s, len, "http://"))
        return fail(err, errlen, "only http:// URLs are supported (reaches only loopback)");
    size_t i = 7;
    const char *hostname;
    if (prefix_ci(s + i, len - i, "127.0.0.1")) {
        i += 9;
        hostname = "127.0.0.1";
    } else if (prefix_ci(s + i, len - i, "localhost")) {
        i += 9;
        hostname = "127.0.0.1";
    } else if (prefix_ci(s + i, len - i, "[::1]")) {
        i += 5;
        hostname = "[::1]";
        u->v6 = 1;
    } else {
        return fail(err, errlen,
                    "host must be 127.0.0.1, localhost or [::1] (reaches only loopback)");
    }
    int port = 80;
    if (i < len && s[i] == ':') {
        i++;
        size_t ds = i;
        port = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && i - ds < 6) port = port * 10 + (s[i++] - '0');
        if (i == ds || port < 1 || port > 65535)
            return fail(err, errlen, "bad port (reaches only loopback)");
    }
    if (i < len && s[i] != '/')
        return fail(err, errlen, "host must be 127.0.0.1, localhost or [::1] (reaches only loopback)");
    size_t plen = len - i;
    if (plen >= URL_MAX_PATH) return fail(err, errlen, "URL path too long");
    for (size_t k = i; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        if (c <= 0x20 || c >= 0x7f || c == '#') return fail(err, errlen, "bad character in URL path");
    }
    if (plen == 0) {
        strcpy(u->path, "/");
    } else {
        memcpy(u->path, s + i, plen);
        u->path[plen] = '\0';
    }
    u->port = port;
    snprintf(u->host, sizeof u->host, "%s:%d", hostname, port);
    return 0;
}
