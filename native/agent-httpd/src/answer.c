/* answer: the JSON answers of agent-httpd. See answer.h. */
#include "answer.h"

#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "buf.h"
#include "io.h"
#include "json.h"
#include "log.h"
#include "steer.h"

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
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Error";
    }
}

void answer_json(int fd, int st, const char *extra, const char *body, size_t blen) {
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
                     st, reason_phrase(st), blen, extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof head) return;
    /* one write: a non-blocking socket takes a small answer whole or not at all */
    char all[1024];
    if ((size_t)n + blen <= sizeof all) {
        memcpy(all, head, (size_t)n);
        memcpy(all + n, body, blen);
        io_write_all(fd, all, (size_t)n + blen);
    } else if (io_write_all(fd, head, (size_t)n) == 0) {
        io_write_all(fd, body, blen);
    }
}

void answer_error(int fd, int st, const char *code, const char *msg, const char *extra) {
    buf_t b;
    buf_init(&b, 4096);
    buf_puts(&b, "{\"error\":{\"code\":");
    jw_cstr(&b, code);
    buf_puts(&b, ",\"message\":");
    jw_cstr(&b, msg);
    buf_puts(&b, "}}");
    if (!b.err) answer_json(fd, st, extra, b.data, b.len);
    buf_free(&b);
}

void answer_health(int fd, long uptime_s, int active_runs) {
    char b[256];
    int n = snprintf(b, sizeof b, "{\"ok\":true,\"version\":\"%s\",\"uptime_s\":%ld,\"active_runs\":%d}",
                     AGENT_VERSION, uptime_s, active_runs);
    answer_json(fd, 200, NULL, b, (size_t)n);
}

void answer_cancel(int fd, runs_t *runs, const char *run_id) {
    if (runs_cancel(runs, run_id, strlen(run_id)) == 0) {
        answer_json(fd, 200, NULL, "{\"ok\":true}", 11);
        log_line("run=%.128s cancel requested", run_id);
    } else {
        answer_error(fd, 404, "no_such_run", "no active run with that id", NULL);
    }
}

/* The queued form of a parsed message: its frame's payload and its user turn. */
static run_msg_t *message_of(const char *body, const steer_msg_t *s) {
    run_msg_t *m = run_msg_new();
    if (!m) return NULL;
    buf_puts(&m->frame, "{\"id\":");
    jw_value(&m->frame, body, s->t, s->id);
    buf_puts(&m->frame, ",\"text\":");
    jw_value(&m->frame, body, s->t, s->text);
    buf_putc(&m->frame, '}');
    buf_puts(&m->user, "{\"role\":\"user\",\"content\":");
    jw_value(&m->user, body, s->t, s->text);
    buf_putc(&m->user, '}');
    if (m->frame.err || m->user.err) {
        run_msg_free(m);
        return NULL;
    }
    return m;
}

void answer_message(int fd, runs_t *runs, const char *run_id, const char *body, size_t len) {
    steer_msg_t s;
    const char *err = NULL;
    int pr = steer_parse(body ? body : "", len, &s, &err);
    if (pr != STEER_OK) {
        int st = pr == STEER_TOO_LARGE ? 413 : 400;
        answer_error(fd, st, st == 413 ? "message_too_large" : "bad_request", err, NULL);
        return;
    }
    run_msg_t *m = message_of(body, &s);
    if (!m) {
        answer_error(fd, 500, "internal", "could not queue the message", NULL);
        return;
    }
    int rc = runs_message(runs, run_id, strlen(run_id), m);
    if (rc == RUNS_OK) {
        answer_json(fd, 200, NULL, "{\"ok\":true}", 11);
        log_line("run=%.128s message queued", run_id);
        return;
    }
    run_msg_free(m);
    if (rc == RUNS_NONE) answer_error(fd, 404, "no_such_run", "no active run with that id", NULL);
    else if (rc == RUNS_CLOSED)
        answer_error(fd, 409, "run_ending", "the run starts no more rounds: it takes no messages", NULL);
    else answer_error(fd, 429, "too_many_messages", "the run already has 8 messages waiting", NULL);
}
