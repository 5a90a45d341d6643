/* conn: one routed request on its own thread. See conn.h. */
#include "conn.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "answer.h"
#include "chunked.h"
#include "io.h"

#define IO_TIMEOUT_MS 30000
#define LINGER_MS 2000
#define LINGER_MAX (64u << 20)

/* Wait until fd is readable; 0 ok, -1 timeout/stop/error. */
static int wait_readable(const conn_shared_t *sh, int fd, int timeout_ms) {
    struct pollfd p[2] = {{fd, POLLIN, 0}, {sh->stop_fd, POLLIN, 0}};
    for (;;) {
        int r = poll(p, 2, timeout_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0 || p[1].revents) return -1;
        return 0;
    }
}

/* Read more bytes into b. Returns > 0 bytes, 0 at EOF, -1 on timeout/error/stop. */
static long read_more(const conn_shared_t *sh, int fd, buf_t *b, size_t want) {
    char *dst = buf_reserve(b, want);
    if (!dst) return -1;
    if (wait_readable(sh, fd, IO_TIMEOUT_MS) != 0) return -1;
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
static void linger_close(const conn_shared_t *sh, int fd) {
    shutdown(fd, SHUT_WR);
    char tmp[4096];
    size_t total = 0;
    long long t0 = io_now_ms();
    for (;;) {
        long long ms = io_now_ms() - t0;
        if (ms >= LINGER_MS || total > LINGER_MAX) break;
        if (wait_readable(sh, fd, (int)(LINGER_MS - ms)) != 0) break;
        ssize_t k = recv(fd, tmp, sizeof tmp, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        total += (size_t)k;
    }
}

/* Read a body framed by Content-Length or chunked coding into body. Returns 0, or an HTTP
 * status for the error answer (413, 400), or -1 when the connection failed. */
static int read_body(const conn_shared_t *sh, int fd, const route_t *rt, buf_t *in, buf_t *body) {
    if (!rt->chunked) {
        uint64_t clen = rt->content_length;
        if (clen > ROUTE_BODY_MAX) return 413;
        while (in->len < clen)
            if (read_more(sh, fd, in, 65536) <= 0) return -1;
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
        if (read_more(sh, fd, in, 65536) <= 0) return -1;
    }
}

/* POST /chat with its body: register the run and stream it. Returns 1 when the run was
 * streamed (no linger), 0 after an error answer. */
static int chat(conn_job_t *job, buf_t *body) {
    const conn_shared_t *sh = job->sh;
    chat_req_t req;
    char err[256];
    int streamed = 0;
    if (chat_req_parse(body->data ? body->data : "", body->len, &req, err, sizeof err) != 0) {
        answer_error(job->fd, 400, "bad_request", err, NULL);
        chat_req_free(&req);
        return 0;
    }
    run_t *run;
    int ar = runs_add(sh->runs, req.run_id, strlen(req.run_id), &run);
    if (ar == RUNS_EXISTS) {
        answer_error(job->fd, 409, "run_exists", "a run with this run_id is already active", NULL);
    } else if (ar == RUNS_FULL) {
        answer_error(job->fd, 503, "too_many_runs", "too many active runs", NULL);
    } else if (ar != RUNS_OK) {
        answer_error(job->fd, 500, "internal", "could not register the run", NULL);
    } else {
        buf_free(&job->in);
        req.body_buf = body; /* freed once the conversation is set up */
        agent_run(sh->cfg, &req, run, job->fd);
        runs_remove(sh->runs, run);
        streamed = 1;
    }
    chat_req_free(&req);
    return streamed;
}

void conn_serve(conn_job_t *job) {
    const conn_shared_t *sh = job->sh;
    const route_t *rt = &job->route;
    int fd = job->fd;
    buf_t body;
    buf_init(&body, ROUTE_BODY_MAX);
    job->in.max = ROUTE_HEAD_MAX + ROUTE_BODY_MAX + 128 * 1024;
    int lingering = 1;
    if (rt->expect_continue) io_write_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
    int br = route_has_body(rt) ? read_body(sh, fd, rt, &job->in, &body) : 0;
    if (br == 413) {
        answer_error(fd, 413, "body_too_large", "the request body exceeds 8 MiB", NULL);
    } else if (br == 400) {
        answer_error(fd, 400, "bad_request", "malformed chunked body", NULL);
    } else if (br != 0) {
        lingering = 0;
    } else if (rt->kind == ROUTE_HEALTH) {
        answer_health(fd, (long)((io_now_ms() - sh->start_ms) / 1000), runs_count(sh->runs));
    } else if (rt->kind == ROUTE_CANCEL) {
        answer_cancel(fd, sh->runs, rt->run_id);
    } else if (rt->kind == ROUTE_MESSAGE) {
        answer_message(fd, sh->runs, rt->run_id, body.data, body.len);
    } else if (chat(job, &body)) {
        lingering = 0;
    }
    buf_free(&job->in);
    buf_free(&body);
    if (lingering) linger_close(sh, fd);
}
