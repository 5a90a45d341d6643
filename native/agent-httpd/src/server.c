/* server: loopback HTTP listener, thread per connection. See server.h and native/README.md. */
#include "server.h"

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
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "chunked.h"
#include "http_parse.h"
#include "runs.h"

#define HEAD_MAX (16 * 1024)
#define BODY_MAX (8u << 20)
#define IO_TIMEOUT_MS 30000
#define STACK_SIZE (256 * 1024)
#define MAX_HEADERS 64

typedef struct srv {
    const server_opts_t *o;
    runs_t runs;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int conns;
    int max_conns;
    struct timespec start;
} srv_t;

typedef struct conn {
    srv_t *s;
    int fd;
} conn_t;

/* Hundreds of chats can start at once; the kernel caps this at net.core.somaxconn. */
#define LISTEN_BACKLOG 1024

int server_listen(int port, int *bound_port, char *err, size_t errlen) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "bind 127.0.0.1:%d: %s", port, strerror(errno));
        close(fd);
        return -1;
    }
    socklen_t al = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &al);
    *bound_port = ntohs(a.sin_port);
    return fd;
}

/* ---- responses ----------------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        } else if (k < 0 && errno == EINTR) {
            continue;
        } else {
            return -1;
        }
    }
    return 0;
}

static const char *reason_phrase(int st) {
    switch (st) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

static void respond(int fd, int st, const char *extra, const char *body, size_t blen) {
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
                     st, reason_phrase(st), blen, extra ? extra : "");
    if (write_all(fd, head, (size_t)n) == 0) write_all(fd, body, blen);
}

static void respond_error(int fd, int st, const char *code, const char *msg, const char *extra) {
    buf_t b;
    buf_init(&b, 4096);
    buf_puts(&b, "{\"error\":{\"code\":");
    jw_cstr(&b, code);
    buf_puts(&b, ",\"message\":");
    jw_cstr(&b, msg);
    buf_puts(&b, "}}");
    if (!b.err) respond(fd, st, extra, b.data, b.len);
    buf_free(&b);
}

/* ---- request reading ----------------------------------------------------------------- */

/* Wait until fd is readable; 0 ok, -1 timeout/stop/error. */
static int wait_readable(srv_t *s, int fd, int timeout_ms) {
    struct pollfd p[2] = {{fd, POLLIN, 0}, {s->o->stop_fd, POLLIN, 0}};
    for (;;) {
        int r = poll(p, 2, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 || p[1].revents) return -1;
        return 0;
    }
}

/* Read more bytes into b. Returns > 0 bytes, 0 at EOF, -1 on timeout/error/stop. */
static long read_more(srv_t *s, int fd, buf_t *b, size_t want) {
    char *dst = buf_reserve(b, want);
    if (!dst) return -1;
    if (wait_readable(s, fd, IO_TIMEOUT_MS) != 0) return -1;
    for (;;) {
        ssize_t k = recv(fd, dst, want, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        b->len += (size_t)k;
        b->data[b->len] = '\0';
        return (long)k;
    }
}

/* After an early answer, let the peer finish sending (briefly) so it reads our response
 * instead of a connection reset. */
static void linger_close(srv_t *s, int fd) {
    shutdown(fd, SHUT_WR);
    char tmp[4096];
    size_t total = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms >= 2000 || total > (64u << 20)) break;
        if (wait_readable(s, fd, (int)(2000 - ms)) != 0) break;
        ssize_t k = recv(fd, tmp, sizeof tmp, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        total += (size_t)k;
    }
}

static int ct_eq(const char *a, size_t an, const char *b, size_t bn) {
    /* constant time in the length of b (the secret) */
    unsigned char diff = (unsigned char)(an != bn);
    for (size_t i = 0; i < bn; i++) diff |= (unsigned char)((i < an ? a[i] : 0) ^ b[i]);
    return diff == 0;
}

static int authorized(srv_t *s, const http_header_t *h, size_t nh) {
    const http_header_t *a = http_header_find(h, nh, "authorization");
    if (!a || a->value_len < 7 || !http_ieq(a->value, 7, "bearer ")) return 0;
    const char *v = a->value + 7;
    size_t n = a->value_len - 7;
    while (n && *v == ' ') v++, n--;
    const agent_cfg_t *cfg = s->o->cfg;
    return ct_eq(v, n, cfg->token, cfg->token_len);
}

static long uptime_s(srv_t *s) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - s->start.tv_sec);
}

enum route { R_NONE, R_HEALTH, R_CHAT, R_CANCEL };

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

/* Read a body framed by Content-Length or chunked coding into body. Returns 0, or an HTTP
 * status for the error answer (413, 400), or -1 when the connection failed. */
static int read_body(srv_t *s, int fd, buf_t *in, int chunked, uint64_t clen, buf_t *body) {
    if (!chunked) {
        if (clen > BODY_MAX) return 413;
        while (in->len < clen) {
            long k = read_more(s, fd, in, 65536);
            if (k <= 0) return -1;
        }
        buf_append(body, in->data, (size_t)clen);
        return body->err ? 413 : 0;
    }
    chunked_t ch;
    chunked_init(&ch);
    for (;;) {
        const char *d;
        size_t dl;
        if (chunked_done(&ch)) return 0;
        long r = in->len ? chunked_decode(&ch, in->data, in->len, &d, &dl) : -2;
        if (r == 0) return 0;
        if (r == -1) return 400;
        if (r > 0) {
            if (buf_append(body, d, dl) != 0) return 413;
            buf_consume(in, (size_t)r);
            continue;
        }
        long k = read_more(s, fd, in, 65536);
        if (k <= 0) return -1;
    }
}

static void handle(srv_t *s, int fd) {
    buf_t in, body;
    buf_init(&in, HEAD_MAX + BODY_MAX + 128 * 1024);
    buf_init(&body, BODY_MAX);
    http_header_t h[MAX_HEADERS];
    size_t nh = 0;
    const char *method = NULL, *path = NULL;
    size_t ml = 0, pl = 0;
    int minor = 1, hl = -2;
    char target[1024];
    int lingering = 1;

    size_t scanned = 0; /* parse again only once a new line has arrived */
    while (hl == -2) {
        nh = MAX_HEADERS;
        if (in.len && (memchr(in.data + scanned, '\n', in.len - scanned) || in.len >= HEAD_MAX))
            hl = http_parse_request(in.data, in.len, &method, &ml, &path, &pl, &minor, h, &nh);
        scanned = in.len;
        if (hl > HEAD_MAX || (hl == -2 && in.len >= HEAD_MAX)) {
            respond_error(fd, 431, "head_too_large", "the request head exceeds 16 KiB", NULL);
            goto out;
        }
        if (hl == -1) {
            respond_error(fd, 400, "bad_request", "malformed HTTP request", NULL);
            goto out;
        }
        if (hl == -2) {
            long k = read_more(s, fd, &in, 4096);
            if (k <= 0) {
                lingering = 0;
                goto out;
            }
        }
    }
    if (!authorized(s, h, nh)) {
        respond_error(fd, 401, "unauthorized", "missing or wrong bearer token",
                      "WWW-Authenticate: Bearer\r\n");
        goto out;
    }
    /* route on the path without its query */
    size_t plen = pl;
    const char *q = memchr(path, '?', pl);
    if (q) plen = (size_t)(q - path);
    if (plen >= sizeof target) {
        respond_error(fd, 404, "not_found", "no such endpoint", NULL);
        goto out;
    }
    memcpy(target, path, plen);
    target[plen] = '\0';
    enum route rt = R_NONE;
    const char *want = "POST";
    char run_id[RUN_ID_MAX + 1] = "";
    if (strcmp(target, "/healthz") == 0) {
        rt = R_HEALTH;
        want = "GET";
    } else if (strcmp(target, "/chat") == 0) {
        rt = R_CHAT;
    } else if (strncmp(target, "/runs/", 6) == 0 && plen > 13 && strcmp(target + plen - 7, "/cancel") == 0) {
        size_t idn = plen - 13;
        if (!memchr(target + 6, '/', idn) && pct_decode(target + 6, idn, run_id, RUN_ID_MAX) > 0)
            rt = R_CANCEL;
    }
    if (rt == R_NONE) {
        respond_error(fd, 404, "not_found", "no such endpoint", NULL);
        goto out;
    }
    if (!http_ieq(method, ml, want)) {
        char allow[64];
        snprintf(allow, sizeof allow, "Allow: %s\r\n", want);
        respond_error(fd, 405, "method_not_allowed",
                      rt == R_HEALTH ? "use GET for this endpoint" : "use POST for this endpoint", allow);
        goto out;
    }
    /* body framing */
    const http_header_t *te = http_header_find(h, nh, "transfer-encoding");
    uint64_t clen = 0;
    int have_cl = 0, chunked = 0;
    for (size_t i = 0; i < nh; i++) {
        if (!http_ieq(h[i].name, h[i].name_len, "content-length")) continue;
        uint64_t v = 0;
        if (h[i].value_len == 0 || h[i].value_len > 15) {
            if (h[i].value_len > 15 && h[i].value_len < 40) {
                int digits = 1;
                for (size_t k = 0; k < h[i].value_len; k++)
                    if (h[i].value[k] < '0' || h[i].value[k] > '9') digits = 0;
                if (digits) {
                    respond_error(fd, 413, "body_too_large", "the request body exceeds 8 MiB", NULL);
                    goto out;
                }
            }
            respond_error(fd, 400, "bad_request", "bad Content-Length", NULL);
            goto out;
        }
        for (size_t k = 0; k < h[i].value_len; k++) {
            char c = h[i].value[k];
            if (c < '0' || c > '9') {
                respond_error(fd, 400, "bad_request", "bad Content-Length", NULL);
                goto out;
            }
            v = v * 10 + (uint64_t)(c - '0');
        }
        if (have_cl && v != clen) {
            respond_error(fd, 400, "bad_request", "conflicting Content-Length headers", NULL);
            goto out;
        }
        clen = v;
        have_cl = 1;
    }
    if (te) {
        if (!http_ieq(te->value, te->value_len, "chunked") || have_cl) {
            respond_error(fd, 400, "bad_request", "unsupported Transfer-Encoding", NULL);
            goto out;
        }
        chunked = 1;
    }
    if (!chunked && clen > BODY_MAX) {
        respond_error(fd, 413, "body_too_large", "the request body exceeds 8 MiB", NULL);
        goto out;
    }
    const http_header_t *ex = http_header_find(h, nh, "expect");
    buf_consume(&in, (size_t)hl); /* header views are dead from here on */
    if (ex && (chunked || clen > 0)) write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    int br = read_body(s, fd, &in, chunked, clen, &body);
    if (br == 413) {
        respond_error(fd, 413, "body_too_large", "the request body exceeds 8 MiB", NULL);
        goto out;
    }
    if (br == 400) {
        respond_error(fd, 400, "bad_request", "malformed chunked body", NULL);
        goto out;
    }
    if (br != 0) {
        lingering = 0;
        goto out;
    }

    if (rt == R_HEALTH) {
        char b[256];
        int n = snprintf(b, sizeof b, "{\"ok\":true,\"version\":\"%s\",\"uptime_s\":%ld,\"active_runs\":%d}",
                         AGENT_VERSION, uptime_s(s), runs_count(&s->runs));
        respond(fd, 200, NULL, b, (size_t)n);
    } else if (rt == R_CANCEL) {
        if (runs_cancel(&s->runs, run_id, strlen(run_id)) == 0) {
            respond(fd, 200, NULL, "{\"ok\":true}", 11);
            agent_log("run=%.128s cancel requested", run_id);
        } else {
            respond_error(fd, 404, "no_such_run", "no active run with that id", NULL);
        }
    } else {
        agent_req_t req;
        char err[256];
        if (agent_parse_chat(body.data ? body.data : "", body.len, &req, err, sizeof err) != 0) {
            respond_error(fd, 400, "bad_request", err, NULL);
            agent_req_free(&req);
            goto out;
        }
        run_t *run;
        int ar = runs_add(&s->runs, req.run_id, strlen(req.run_id), &run);
        if (ar == RUNS_EXISTS) {
            respond_error(fd, 409, "run_exists", "a run with this run_id is already active", NULL);
        } else if (ar == RUNS_FULL) {
            respond_error(fd, 503, "too_many_runs", "too many active runs", NULL);
        } else if (ar != RUNS_OK) {
            respond_error(fd, 500, "internal", "could not register the run", NULL);
        } else {
            buf_free(&in);
            req.body_buf = &body; /* freed by agent_run once the conversation is set up */
            agent_run(s->o->cfg, &req, run, fd);
            runs_remove(&s->runs, run);
            lingering = 0;
        }
        agent_req_free(&req);
    }
out:
    buf_free(&in);
    buf_free(&body);
    if (lingering) linger_close(s, fd);
}

static void *conn_main(void *arg) {
    conn_t *c = arg;
    srv_t *s = c->s;
    struct timeval tv = {60, 0}; /* a stalled reader cannot pin a thread forever */
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1; /* frames are small and latency matters: no Nagle delay */
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    handle(s, c->fd);
    close(c->fd);
    free(c);
    pthread_mutex_lock(&s->mu);
    s->conns--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int server_run(const server_opts_t *o, int listen_fd) {
    srv_t s;
    memset(&s, 0, sizeof s);
    s.o = o;
    s.max_conns = o->max_runs + 64;
    runs_init(&s.runs, o->max_runs);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    clock_gettime(CLOCK_MONOTONIC, &s.start);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_SIZE);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);

    struct pollfd p[2] = {{listen_fd, POLLIN, 0}, {o->stop_fd, POLLIN, 0}};
    for (;;) {
        p[0].revents = p[1].revents = 0;
        int r = poll(p, 2, -1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || p[1].revents) break;
        if (!p[0].revents) continue;
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                struct timespec ts = {0, 50 * 1000000};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        pthread_mutex_lock(&s.mu);
        int full = s.conns >= s.max_conns;
        if (!full) s.conns++;
        pthread_mutex_unlock(&s.mu);
        if (full) {
            static const char body[] = "{\"error\":{\"code\":\"busy\",\"message\":\"too many connections\"}}";
            char busy[256];
            int n = snprintf(busy, sizeof busy,
                             "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                             sizeof body - 1, body);
            ssize_t w = send(fd, busy, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
            (void)w;
            close(fd);
            continue;
        }
        conn_t *c = malloc(sizeof *c);
        pthread_t th;
        if (c) {
            c->s = &s;
            c->fd = fd;
        }
        if (!c || pthread_create(&th, &attr, conn_main, c) != 0) {
            free(c);
            close(fd);
            pthread_mutex_lock(&s.mu);
            s.conns--;
            pthread_mutex_unlock(&s.mu);
        }
    }
    close(listen_fd);
    runs_cancel_all(&s.runs);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 3;
    pthread_mutex_lock(&s.mu);
    while (s.conns > 0)
        if (pthread_cond_timedwait(&s.cv, &s.mu, &deadline) != 0) break;
    int left = s.conns;
    pthread_mutex_unlock(&s.mu);
    pthread_attr_destroy(&attr);
    if (left) {
        agent_log("stopping with %d connection(s) still open", left);
        return 0; /* threads still use s: do not destroy it; the process exits next */
    }
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    runs_destroy(&s.runs);
    return 0;
}
