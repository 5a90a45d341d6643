/* http_client: minimal loopback HTTP/1.1 client. See http_client.h. */
#include "http_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_parse.h"
#include "io.h" /* MSG_NOSIGNAL where the platform lacks it */

#define HC_IN_MAX (256 * 1024)
#define HC_HEAD_MAX (64 * 1024)
#define HC_READ 16384

void hc_init(hc_t *c, int timeout_ms, int cancel_fd, int client_fd) {
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->timeout_ms = timeout_ms;
    c->cancel_fd = cancel_fd;
    c->client_fd = client_fd;
    buf_init(&c->in, HC_IN_MAX);
}

/* The pool of idle connections: a few fds, shared by the run threads. */
typedef struct pooled {
    int fd, port, v6;
    time_t since;
} pooled_t;

static pooled_t pool[HC_POOL_MAX];
static int pool_len;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static time_t now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

/* An idle connection to port that is still open and has nothing unread, else -1. */
static int pool_take(int port, int v6) {
    int fd = -1;
    time_t now = now_s();
    pthread_mutex_lock(&pool_lock);
    for (int i = pool_len; i-- > 0 && fd < 0;) {
        if (pool[i].port != port || pool[i].v6 != v6) continue;
        int cand = pool[i].fd;
        int fresh = now - pool[i].since < HC_POOL_IDLE_S;
        pool[i] = pool[--pool_len];
        struct pollfd p = {.fd = cand, .events = POLLIN};
        if (fresh && poll(&p, 1, 0) == 0) fd = cand; /* readable here: closed, or stray bytes */
        else close(cand);
    }
    pthread_mutex_unlock(&pool_lock);
    return fd;
}

static void pool_put(int fd, int port, int v6) {
    pthread_mutex_lock(&pool_lock);
    if (pool_len == HC_POOL_MAX) close(pool[0].fd), pool[0] = pool[--pool_len];
    pool[pool_len++] = (pooled_t){fd, port, v6, now_s()};
    pthread_mutex_unlock(&pool_lock);
}

/* Read the rest of the answer if it is already here (a stream's end after its [DONE]). */
static void finish_quietly(hc_t *c) {
    int timeout = c->timeout_ms, cancel = c->cancel_fd, client = c->client_fd;
    c->timeout_ms = 0; /* no waiting: what has not arrived yet closes the connection */
    c->cancel_fd = c->client_fd = -1;
    size_t seen = 0;
    for (int i = 0; i < 4 && !c->done && seen < HC_READ * 4; i++) {
        const char *d;
        size_t n;
        if (hc_read_body(c, &d, &n) != 1) break;
        seen += n;
    }
    c->timeout_ms = timeout, c->cancel_fd = cancel, c->client_fd = client;
}

void hc_close(hc_t *c) {
    if (c->fd >= 0 && c->keep && c->mode != HC_BODY_CLOSE) {
        if (!c->done) finish_quietly(c);
        if (c->done && c->in.len == c->hold) {
            pool_put(c->fd, c->pool_port, c->pool_v6);
            c->fd = -1;
        }
    }
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->keep = 0;
    buf_free(&c->in);
}

/* Wait for `events` on the socket while watching the cancel and client fds. */
static int hc_wait(hc_t *c, short events) {
    struct pollfd p[3];
    int n = 0, ic = -1, il = -1;
    p[n].fd = c->fd;
    p[n].events = events;
    n++;
    if (c->cancel_fd >= 0) {
        ic = n;
        p[n].fd = c->cancel_fd;
        p[n].events = POLLIN;
        n++;
    }
    if (c->client_fd >= 0) {
        il = n;
        p[n].fd = c->client_fd;
        p[n].events = POLLIN;
        n++;
    }
    for (;;) {
        for (int i = 0; i < n; i++) p[i].revents = 0;
        int r = poll(p, (nfds_t)n, c->timeout_ms);
        if (r < 0) {
            if (errno == EINTR) continue;
            snprintf(c->err, sizeof c->err, "poll: %s", strerror(errno));
            return HC_EIO;
        }
        if (r == 0) {
            snprintf(c->err, sizeof c->err, "no progress for %d s", c->timeout_ms / 1000);
            return HC_ETIMEOUT;
        }
        if (ic >= 0 && p[ic].revents) return HC_ECANCEL;
        if (il >= 0 && p[il].revents) {
            if (p[il].revents & (POLLHUP | POLLERR | POLLNVAL)) return HC_EGONE;
            char tmp[512]; /* the caller sent more than its request: discard, watch for EOF */
            ssize_t k = recv(c->client_fd, tmp, sizeof tmp, MSG_DONTWAIT);
            if (k == 0) return HC_EGONE;
            if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return HC_EGONE;
        }
        if (p[0].revents) return HC_OK;
    }
}

int hc_connect(hc_t *c, const url_t *u) {
    c->reused = 0;
    c->pool_port = u->port;
    c->pool_v6 = u->v6;
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    struct sockaddr *sa;
    socklen_t salen;
    if (u->v6) {
        memset(&a6, 0, sizeof a6);
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)u->port);
        a6.sin6_addr = in6addr_loopback;
        sa = (struct sockaddr *)&a6;
        salen = sizeof a6;
    } else {
        memset(&a4, 0, sizeof a4);
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)u->port);
        a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa = (struct sockaddr *)&a4;
        salen = sizeof a4;
    }
    c->fd = socket(sa->sa_family, SOCK_STREAM, 0);
    if (c->fd < 0) {
        snprintf(c->err, sizeof c->err, "socket: %s", strerror(errno));
        return HC_ECONNECT;
    }
    fcntl(c->fd, F_SETFD, FD_CLOEXEC);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    int one = 1; /* small request/response exchanges: no Nagle delay */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(c->fd, sa, salen) != 0) {
        if (errno != EINPROGRESS && errno != EINTR) {
            snprintf(c->err, sizeof c->err, "connect to %s: %s", u->host, strerror(errno));
            return HC_ECONNECT;
        }
        int w = hc_wait(c, POLLOUT);
        if (w != HC_OK) {
            if (w == HC_ETIMEOUT)
                snprintf(c->err, sizeof c->err, "connect to %s: timed out", u->host);
            return w;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) soerr = errno;
        if (soerr) {
            snprintf(c->err, sizeof c->err, "connect to %s: %s", u->host, strerror(soerr));
            return HC_ECONNECT;
        }
    }
    return HC_OK;
}

int hc_send(hc_t *c, const void *p, size_t n) {
    const char *s = p;
    while (n > 0) {
        ssize_t k = send(c->fd, s, n, MSG_NOSIGNAL);
        if (k > 0) {
            s += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int w = hc_wait(c, POLLOUT);
            if (w != HC_OK) return w;
            continue;
        }
        if (c->reused && k < 0 && (errno == EPIPE || errno == ECONNRESET)) return HC_ESTALE;
        snprintf(c->err, sizeof c->err, "send: %s", k < 0 ? strerror(errno) : "no progress");
        return HC_EIO;
    }
    return HC_OK;
}

/* Read more into c->in. Returns bytes read (> 0), 0 at EOF, or an hc_err. */
static int hc_fill(hc_t *c) {
    char *dst = buf_reserve(&c->in, HC_READ);
    if (!dst) {
        snprintf(c->err, sizeof c->err, "response framing too large");
        return HC_EPROTO;
    }
    for (;;) {
        ssize_t k = recv(c->fd, dst, HC_READ, 0);
        if (k > 0) {
            c->in.len += (size_t)k;
            c->in.data[c->in.len] = '\0';
            return (int)k;
        }
        if (k == 0) return 0;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = hc_wait(c, POLLIN);
            if (w != HC_OK) return w;
            continue;
        }
        if (c->reused && errno == ECONNRESET && c->status == 0 && c->in.len == 0) return HC_ESTALE;
        snprintf(c->err, sizeof c->err, "recv: %s", strerror(errno));
        return HC_EIO;
    }
}

static int parse_length(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (n == 0 || n > 18) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* 1 if the comma-separated list ends with the token "chunked". */
static int ends_chunked(const char *v, size_t n) {
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
    size_t s = n;
    while (s && v[s - 1] != ',' && v[s - 1] != ' ' && v[s - 1] != '\t') s--;
    return http_ieq(v + s, n - s, "chunked");
}

/* 1 if a Connection header's value names "close". */
static int has_close(const char *v, size_t n) {
    for (size_t i = 0; i + 5 <= n; i++)
        if (http_ieq(v + i, 5, "close")) return 1;
    return 0;
}

int hc_send_request(hc_t *c, const url_t *u, const hc_part_t *parts, size_t n, int fresh) {
    for (int attempt = 0;; attempt++) {
        int fd = fresh || attempt ? -1 : pool_take(u->port, u->v6);
        int r = HC_OK;
        if (fd >= 0) {
            c->fd = fd;
            c->reused = 1;
            c->pool_port = u->port;
            c->pool_v6 = u->v6;
        } else {
            r = hc_connect(c, u);
        }
        for (size_t i = 0; r == HC_OK && i < n; i++) r = hc_send(c, parts[i].p, parts[i].n);
        c->sent = r == HC_OK;
        if (r != HC_ESTALE) return r;
        hc_drop(c); /* the server closed it while it idled: the request never arrived */
    }
}

void hc_drop(hc_t *c) {
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    c->reused = 0;
    c->sent = 0;
    buf_reset(&c->in);
    c->hold = 0;
    c->status = 0;
}

int hc_request(hc_t *c, const url_t *u, const hc_part_t *parts, size_t n) {
    for (int fresh = 0;; fresh = 1) {
        int r = hc_send_request(c, u, parts, n, fresh);
        if (r == HC_OK) r = hc_read_head(c);
        if (r != HC_ESTALE) return r;
        hc_drop(c);
    }
}

int hc_read_head(hc_t *c) {
    for (;;) {
        http_header_t h[64];
        size_t nh = 64;
        int minor, status;
        const char *msg;
        size_t ml;
        int r = c->in.len ? http_parse_response(c->in.data, c->in.len, &minor, &status, &msg, &ml, h, &nh)
                          : -2;
        if (r == -1) {
            snprintf(c->err, sizeof c->err, "malformed HTTP response head");
            return HC_EPROTO;
        }
        if (r == -2) {
            if (c->in.len > HC_HEAD_MAX) {
                snprintf(c->err, sizeof c->err, "HTTP response head too large");
                return HC_EPROTO;
            }
            int k = hc_fill(c);
            if (k < 0) return k;
            if (k == 0 && c->reused && c->in.len == 0) return HC_ESTALE;
            if (k == 0) {
                snprintf(c->err, sizeof c->err, "connection closed before a complete response head");
                return HC_EPROTO;
            }
            continue;
        }
        if (status >= 100 && status < 200 && status != 101) {
            buf_consume(&c->in, (size_t)r);
            continue;
        }
        c->status = status;
        c->mode = HC_BODY_CLOSE;
        const http_header_t *conn = http_header_find(h, nh, "connection");
        c->keep = minor >= 1 && !(conn && has_close(conn->value, conn->value_len));
        const http_header_t *te = http_header_find(h, nh, "transfer-encoding");
        const http_header_t *cl = http_header_find(h, nh, "content-length");
        const http_header_t *ct = http_header_find(h, nh, "content-type");
        if (ct) {
            size_t n = ct->value_len < sizeof c->content_type - 1 ? ct->value_len : sizeof c->content_type - 1;
            memcpy(c->content_type, ct->value, n);
            c->content_type[n] = '\0';
        }
        if (te && ends_chunked(te->value, te->value_len)) {
            c->mode = HC_BODY_CHUNKED;
            chunked_init(&c->ch);
        } else if (cl) {
            if (parse_length(cl->value, cl->value_len, &c->remaining) != 0) {
                snprintf(c->err, sizeof c->err, "bad Content-Length in response");
                return HC_EPROTO;
            }
            c->mode = HC_BODY_LENGTH;
        }
        if (status == 204 || status == 304) {
            c->mode = HC_BODY_LENGTH;
            c->remaining = 0;
        }
        buf_consume(&c->in, (size_t)r);
        return HC_OK;
    }
}

int hc_read_body(hc_t *c, const char **data, size_t *len) {
    if (c->hold) {
        buf_consume(&c->in, c->hold);
        c->hold = 0;
    }
    for (;;) {
        if (c->mode == HC_BODY_CHUNKED && chunked_done(&c->ch)) c->done = 1;
        if (c->done) return 0;
        if (c->in.len) {
            if (c->mode == HC_BODY_LENGTH) {
                if (c->remaining == 0) {
                    c->done = 1;
                    return 0;
                }
                size_t n = c->in.len;
                if ((uint64_t)n > c->remaining) n = (size_t)c->remaining;
                c->remaining -= n;
                *data = c->in.data;
                *len = n;
                c->hold = n;
                return 1;
            }
            if (c->mode == HC_BODY_CLOSE) {
                *data = c->in.data;
                *len = c->in.len;
                c->hold = c->in.len;
                return 1;
            }
            const char *d;
            size_t dl;
            long r = chunked_decode(&c->ch, c->in.data, c->in.len, &d, &dl);
            if (r == -1) {
                snprintf(c->err, sizeof c->err, "malformed chunked transfer encoding");
                return HC_EPROTO;
            }
            if (r == 0) {
                c->done = 1;
                return 0;
            }
            if (r > 0) {
                if (dl) {
                    *data = d;
                    *len = dl;
                    c->hold = (size_t)r;
                    return 1;
                }
                buf_consume(&c->in, (size_t)r);
                continue;
            }
        } else if (c->mode == HC_BODY_LENGTH && c->remaining == 0) {
            c->done = 1;
            return 0;
        }
        int k = hc_fill(c);
        if (k < 0) return k;
        if (k == 0) { /* the peer closed: whatever came is the body */
            c->done = 1;
            return 0;
        }
    }
}

int hc_read_all(hc_t *c, buf_t *out) {
    for (;;) {
        const char *d;
        size_t n;
        int r = hc_read_body(c, &d, &n);
        if (r < 0) return r;
        if (r == 0) return HC_OK;
        if (buf_append(out, d, n) != 0) {
            size_t room = out->max - out->len;
            out->err = 0;
            buf_append(out, d, room < n ? room : n);
            return HC_ETOOBIG;
        }
    }
}
