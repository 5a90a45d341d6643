/* agent: /chat validation and the agent loop. See agent.h and native/README.md. */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "buf.h"
#include "http_client.h"
#include "sse.h"
#include "utf8.h"

#define CONV_MAX (16u << 20)        /* the whole conversation sent to inference */
#define FRAME_MAX (CONV_MAX + 4096) /* one SSE frame */
#define SSE_LINE_MAX (4u << 20)     /* one line / one event of the inference stream */
#define STREAM_TOKS_MAX (1u << 20)  /* JSON tokens in one stream event */
#define BODY_TOKS_MAX (1u << 20)    /* JSON tokens in a /chat body or a tools answer */
#define ERR_BODY_MAX (64 * 1024)    /* non-200 bodies we read for their message */
#define TOOL_ANSWER_MAX (16u << 20) /* a tools answer */
#define OUTPUT_MAX 20000            /* tool output bytes passed to the model */
#define MAX_CALLS 128               /* tool calls per round */
#define ID_MAX 512                  /* tool call id / name */

enum { A_OK = 0, A_ERROR = 1, A_CANCEL = 2 };

void agent_log(const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "agent-httpd: %s\n", line);
}

/* ---- /chat validation ---------------------------------------------------------------- */

static int bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Optional field: -1 if absent or null; -2 if present with the wrong type. */
static long opt_field(const char *b, const json_tok_t *t, const char *name, int type) {
    long v = json_get(b, t, 0, name);
    if (v < 0 || t[v].type == JSON_NULL) return -1;
    return t[v].type == type ? v : -2;
}

static int run_id_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == ':' || c == '~';
}

int agent_parse_chat(const char *body, size_t len, agent_req_t *req, char *err, size_t errlen) {
    memset(req, 0, sizeof *req);
    req->body = body;
    req->message = req->history = req->system = req->tools = req->model = -1;
    req->rounds = AGENT_ROUNDS_DEFAULT;
    long n = json_parse_alloc(body, len, BODY_TOKS_MAX, &req->t);
    if (n == JSON_NOMEM) return bad(err, errlen, "body is too deeply nested or too large");
    if (n < 0) return bad(err, errlen, "body is not valid JSON");
    const json_tok_t *t = req->t;
    if (t[0].type != JSON_OBJECT) return bad(err, errlen, "body must be a JSON object");

    static const char *required[] = {"run_id", "message", "model"};
    long *slots[] = {NULL, &req->message, &req->model};
    for (int i = 0; i < 3; i++) {
        long v = json_get(body, t, 0, required[i]);
        if (v < 0) return bad(err, errlen, "missing field '%s'", required[i]);
        if (t[v].type != JSON_STRING) return bad(err, errlen, "field '%s' must be a string", required[i]);
        if (slots[i]) *slots[i] = v;
        else {
            long k = json_str_decode(body, &t[v], req->run_id, RUN_ID_MAX);
            if (k <= 0) return bad(err, errlen, "field 'run_id' must be 1..%d characters", RUN_ID_MAX);
            req->run_id[k] = '\0';
            for (long j = 0; j < k; j++)
                if (!run_id_char(req->run_id[j]))
                    return bad(err, errlen,
                               "field 'run_id' may contain only letters, digits and . _ - : ~");
        }
    }
    if ((req->system = opt_field(body, t, "system", JSON_STRING)) == -2)
        return bad(err, errlen, "field 'system' must be a string");
    if ((req->history = opt_field(body, t, "history", JSON_ARRAY)) == -2)
        return bad(err, errlen, "field 'history' must be an array of chat messages");
    if (req->history >= 0) {
        long e = req->history + 1;
        for (uint32_t i = 0; i < t[req->history].size; i++, e = t[e].end)
            if (t[e].type != JSON_OBJECT)
                return bad(err, errlen, "field 'history[%u]' must be an object", i);
    }
    if ((req->tools = opt_field(body, t, "tools", JSON_ARRAY)) == -2)
        return bad(err, errlen, "field 'tools' must be an array of tool objects");
    if (req->tools >= 0) {
        long e = req->tools + 1;
        for (uint32_t i = 0; i < t[req->tools].size; i++, e = t[e].end) {
            long fn = json_get(body, t, e, "function");
            long nm = fn >= 0 ? json_get(body, t, fn, "name") : -1;
            if (nm < 0 || t[nm].type != JSON_STRING || t[nm].len == 0)
                return bad(err, errlen, "field 'tools[%u].function.name' must be a non-empty string", i);
        }
    }
    long budget = opt_field(body, t, "budget", JSON_OBJECT);
    if (budget == -2) return bad(err, errlen, "field 'budget' must be an object");
    if (budget >= 0) {
        long r = json_get(body, t, budget, "rounds");
        if (r >= 0 && t[r].type != JSON_NULL) {
            long long v;
            if (json_int(body, &t[r], &v) != 0 || v < 1 || v > AGENT_ROUNDS_MAX)
                return bad(err, errlen, "field 'budget.rounds' must be an integer from 1 to %d",
                           AGENT_ROUNDS_MAX);
            req->rounds = (int)v;
        }
    }
    return 0;
}

void agent_req_free(agent_req_t *req) {
    free(req->t);
    req->t = NULL;
}

/* ---- the loop ------------------------------------------------------------------------ */

typedef struct call {
    long index; /* -1: the fragment had none */
    buf_t id, name, args;
} call_t;

typedef struct ctx {
    const agent_cfg_t *cfg;
    const agent_req_t *req;
    buf_t model; /* the request's model, as JSON (the request is freed after setup) */
    run_t *run;
    int client;
    int gone;        /* the /chat client went away */
    buf_t d;         /* payload of the frame being built */
    buf_t frame;     /* the frame on the wire */
    buf_t msgs;      /* "[" + messages, comma-separated, without the closing bracket */
    size_t nmsgs;
    buf_t tools;     /* tools as a compact JSON array, or empty */
    buf_t names;     /* allowed tool names, each NUL-terminated */
    size_t nnames;
    buf_t scratch;   /* decoded strings */
    buf_t sse;       /* unparsed stream bytes */
    buf_t event;     /* data of the pending event */
    int have_event;
    int stream_done; /* [DONE] seen */
    buf_t text;      /* assistant content of this round */
    char carry[2][4];
    size_t carry_len[2];
    call_t *calls;
    size_t ncalls;
    int usage_seen;
    long long prompt_tokens, completion_tokens;
    buf_t http;      /* request bodies / answers */
} ctx_t;

static int send_all(int fd, const char *p, size_t n) {
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

static buf_t *payload(ctx_t *x) {
    buf_reset(&x->d);
    return &x->d;
}

/* Send the frame whose payload is in x->d. Returns 0, or -1 once the client is gone. */
static int emit(ctx_t *x, const char *type) {
    if (x->gone) return -1;
    buf_t *f = &x->frame;
    buf_reset(f);
    buf_puts(f, "data: {\"t\":\"");
    buf_puts(f, type);
    buf_puts(f, "\",\"d\":");
    buf_append(f, x->d.data ? x->d.data : "null", x->d.data ? x->d.len : 4);
    buf_puts(f, "}\n\n");
    if (f->err || x->d.err) {
        agent_log("run=%s frame '%s' too large, dropped", x->req->run_id, type);
        return 0;
    }
    if (send_all(x->client, f->data, f->len) != 0) {
        x->gone = 1;
        return -1;
    }
    return 0;
}

static int fail(ctx_t *x, const char *code, int status, const char *msg, size_t msglen) {
    buf_t *d = payload(x);
    buf_puts(d, "{\"code\":");
    jw_cstr(d, code);
    buf_puts(d, ",\"message\":");
    jw_str(d, msg, msglen);
    if (status) buf_printf(d, ",\"status\":%d", status);
    buf_putc(d, '}');
    emit(x, "error");
    agent_log("run=%s error=%s%s", x->req->run_id, code, status ? " (non-200 status)" : "");
    return A_ERROR;
}

static int failf(ctx_t *x, const char *code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(ctx_t *x, const char *code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail(x, code, 0, msg, strlen(msg));
}

static int too_large(ctx_t *x) {
    return failf(x, "conversation_too_large", "the conversation exceeds %u MiB", CONV_MAX >> 20);
}

/* Append one message (already JSON in m) to the conversation. */
static int add_msg(ctx_t *x, const buf_t *m) {
    if (m->err) return too_large(x);
    if (x->nmsgs) buf_putc(&x->msgs, ',');
    buf_append(&x->msgs, m->data, m->len);
    x->nmsgs++;
    return x->msgs.err ? too_large(x) : A_OK;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- conversation setup -------------------------------------------------------------- */

static int setup(ctx_t *x) {
    const agent_req_t *q = x->req;
    const char *b = q->body;
    const json_tok_t *t = q->t;
    buf_putc(&x->msgs, '[');
    buf_t *m = &x->http;
    if (q->system >= 0 && t[q->system].len > 0) {
        buf_reset(m);
        buf_puts(m, "{\"role\":\"system\",\"content\":");
        jw_value(m, b, t, q->system);
        buf_putc(m, '}');
        if (add_msg(x, m) != A_OK) return A_ERROR;
    }
    if (q->history >= 0) {
        long e = q->history + 1;
        for (uint32_t i = 0; i < t[q->history].size; i++, e = t[e].end) {
            buf_reset(m);
            jw_value(m, b, t, e);
            if (add_msg(x, m) != A_OK) return A_ERROR;
        }
    }
    buf_reset(m);
    buf_puts(m, "{\"role\":\"user\",\"content\":");
    jw_value(m, b, t, q->message);
    buf_putc(m, '}');
    if (add_msg(x, m) != A_OK) return A_ERROR;
    if (q->tools >= 0 && t[q->tools].size > 0) {
        jw_value(&x->tools, b, t, q->tools);
        long e = q->tools + 1;
        for (uint32_t i = 0; i < t[q->tools].size; i++, e = t[e].end) {
            long nm = json_get(b, t, json_get(b, t, e, "function"), "name");
            json_str_to_buf(b, &t[nm], &x->names);
            buf_putc(&x->names, '\0');
            x->nnames++;
        }
        if (x->tools.err || x->names.err) return too_large(x);
    }
    return A_OK;
}

static int tool_allowed(ctx_t *x, const char *name, size_t n) {
    const char *p = x->names.data;
    for (size_t i = 0; i < x->nnames; i++) {
        size_t l = strlen(p);
        if (l == n && memcmp(p, name, n) == 0) return 1;
        p += l + 1;
    }
    return 0;
}

/* ---- one inference round ------------------------------------------------------------- */

static void reset_round(ctx_t *x) {
    buf_reset(&x->text);
    x->carry_len[0] = x->carry_len[1] = 0;
    for (size_t i = 0; i < x->ncalls; i++) {
        buf_free(&x->calls[i].id);
        buf_free(&x->calls[i].name);
        buf_free(&x->calls[i].args);
    }
    x->ncalls = 0;
    x->usage_seen = 0;
    x->prompt_tokens = x->completion_tokens = 0;
    buf_reset(&x->sse);
    buf_reset(&x->event);
    x->have_event = 0;
    x->stream_done = 0;
}

/* Forward a text piece (chan 0: delta, 1: reasoning), holding back a trailing incomplete
 * UTF-8 sequence until the next piece so no frame splits a character. */
static int emit_text(ctx_t *x, int chan, const char *s, size_t n, int flush) {
    buf_t joined;
    buf_init(&joined, SSE_LINE_MAX + 8);
    if (x->carry_len[chan]) { /* rare: a character was split between two pieces */
        buf_append(&joined, x->carry[chan], x->carry_len[chan]);
        buf_append(&joined, s, n);
        s = joined.data;
        n = joined.len;
    }
    if (!s) s = "";
    size_t tail = flush ? 0 : utf8_incomplete_tail(s, n);
    size_t out = n - tail;
    memcpy(x->carry[chan], s + out, tail);
    x->carry_len[chan] = tail;
    int rc = A_OK;
    if (out > 0) {
        if (chan == 0) {
            buf_append(&x->text, s, out);
            if (x->text.err) rc = too_large(x);
        }
        if (rc == A_OK) {
            buf_t *d = payload(x);
            buf_puts(d, "{\"text\":");
            jw_str(d, s, out);
            buf_putc(d, '}');
            if (emit(x, chan ? "reasoning" : "delta") != 0) rc = A_CANCEL;
        }
    }
    buf_free(&joined);
    return rc;
}

static call_t *new_call(ctx_t *x, long index) {
    if (x->ncalls >= MAX_CALLS) return NULL;
    if (!x->calls) {
        x->calls = calloc(MAX_CALLS, sizeof *x->calls);
        if (!x->calls) return NULL;
    }
    call_t *c = &x->calls[x->ncalls++];
    c->index = index;
    buf_init(&c->id, ID_MAX);
    buf_init(&c->name, ID_MAX);
    buf_init(&c->args, CONV_MAX);
    return c;
}

static int tool_fragment(ctx_t *x, const char *b, const json_tok_t *t, long el) {
    if (t[el].type != JSON_OBJECT) return A_OK;
    long long idx = -1;
    long vi = json_get(b, t, el, "index");
    if (vi < 0 || json_int(b, &t[vi], &idx) != 0 || idx < 0 || idx > 1000000) idx = -1;
    long vid = json_get(b, t, el, "id");
    buf_t *id = &x->scratch;
    buf_reset(id);
    if (vid >= 0 && t[vid].type == JSON_STRING) json_str_to_buf(b, &t[vid], id);
    call_t *c = NULL;
    if (id->len && !id->err) {
        for (size_t i = x->ncalls; i-- > 0;) {
            call_t *k = &x->calls[i];
            if (idx >= 0 ? k->index == idx : (k->id.len == id->len && memcmp(k->id.data, id->data, id->len) == 0)) {
                c = k;
                break;
            }
        }
        /* a new id on an index already in use is a new call (Ollama numbers them all 0) */
        if (c && c->id.len && !(c->id.len == id->len && memcmp(c->id.data, id->data, id->len) == 0))
            c = NULL;
        if (!c) c = new_call(x, idx);
        if (c && !c->id.len) buf_append(&c->id, id->data, id->len);
    } else {
        for (size_t i = x->ncalls; i-- > 0 && !c;)
            if (idx < 0 || x->calls[i].index == idx) c = &x->calls[i];
        if (!c) c = new_call(x, idx);
    }
    if (!c) return failf(x, "inference_protocol", "more than %d tool calls in one round", MAX_CALLS);
    long fn = json_get(b, t, el, "function");
    if (fn >= 0 && t[fn].type == JSON_OBJECT) {
        long nm = json_get(b, t, fn, "name");
        if (nm >= 0 && t[nm].type == JSON_STRING && t[nm].len && !c->name.len)
            json_str_to_buf(b, &t[nm], &c->name);
        long ar = json_get(b, t, fn, "arguments");
        if (ar >= 0 && t[ar].type == JSON_STRING) json_str_to_buf(b, &t[ar], &c->args);
        else if (ar >= 0 && (t[ar].type == JSON_OBJECT || t[ar].type == JSON_ARRAY) && !c->args.len)
            jw_value(&c->args, b, t, ar);
        if (c->args.err) return too_large(x);
        if (c->name.err) return failf(x, "inference_protocol", "tool name longer than %d bytes", ID_MAX);
    }
    return A_OK;
}

static int text_field(ctx_t *x, const char *b, const json_tok_t *t, long obj, const char *key, int chan) {
    long v = json_get(b, t, obj, key);
    if (v < 0 || t[v].type != JSON_STRING || t[v].len == 0) return -1;
    buf_reset(&x->scratch);
    json_str_to_buf(b, &t[v], &x->scratch);
    return emit_text(x, chan, x->scratch.data, x->scratch.len, 0);
}

/* Decoded text of a provider error: error.message, a string error, or the JSON itself. */
static void error_text(const char *b, const json_tok_t *t, long e, buf_t *out) {
    long m = t[e].type == JSON_OBJECT ? json_get(b, t, e, "message") : -1;
    if (m >= 0 && t[m].type == JSON_STRING) json_str_to_buf(b, &t[m], out);
    else if (t[e].type == JSON_STRING) json_str_to_buf(b, &t[e], out);
    else jw_value(out, b, t, e);
}

static int handle_chunk(ctx_t *x, const char *b, const json_tok_t *t) {
    if (t[0].type != JSON_OBJECT)
        return failf(x, "inference_protocol", "stream chunk is not a JSON object");
    long e = json_get(b, t, 0, "error");
    if (e >= 0 && t[e].type != JSON_NULL) {
        buf_t m;
        buf_init(&m, 4096);
        error_text(b, t, e, &m);
        size_t n = utf8_cut(m.data ? m.data : "", m.len, 500);
        int rc = fail(x, "inference_stream", 0, m.data ? m.data : "", n);
        buf_free(&m);
        return rc;
    }
    long u = json_get(b, t, 0, "usage");
    if (u >= 0 && t[u].type == JSON_OBJECT) {
        long long v;
        long pt = json_get(b, t, u, "prompt_tokens"), ct = json_get(b, t, u, "completion_tokens");
        x->usage_seen = 1;
        if (pt >= 0 && json_int(b, &t[pt], &v) == 0) x->prompt_tokens = v;
        if (ct >= 0 && json_int(b, &t[ct], &v) == 0) x->completion_tokens = v;
    }
    long ch = json_get(b, t, 0, "choices");
    long c0 = ch >= 0 ? json_at(t, ch, 0) : -1;
    if (c0 < 0 || t[c0].type != JSON_OBJECT) return A_OK;
    long d = json_get(b, t, c0, "delta");
    if (d < 0 || t[d].type != JSON_OBJECT) d = json_get(b, t, c0, "message"); /* non-streamed */
    if (d < 0 || t[d].type != JSON_OBJECT) return A_OK;
    int rc;
    if ((rc = text_field(x, b, t, d, "reasoning_content", 1)) > 0) return rc;
    if (rc < 0 && (rc = text_field(x, b, t, d, "reasoning", 1)) > 0) return rc;
    if ((rc = text_field(x, b, t, d, "content", 0)) > 0) return rc;
    long tc = json_get(b, t, d, "tool_calls");
    if (tc >= 0 && t[tc].type == JSON_ARRAY) {
        long el = tc + 1;
        for (uint32_t i = 0; i < t[tc].size; i++, el = t[el].end)
            if ((rc = tool_fragment(x, b, t, el)) != A_OK) return rc;
    }
    return A_OK;
}

static int trimmed(const char **s, size_t *n) {
    while (*n && strchr(" \t\r\n", (*s)[0])) (*s)++, (*n)--;
    while (*n && strchr(" \t\r\n", (*s)[*n - 1])) (*n)--;
    return *n > 0;
}

static int dispatch_json(ctx_t *x, const char *s, size_t n) {
    if (!trimmed(&s, &n)) return A_OK;
    if (n == 6 && memcmp(s, "[DONE]", 6) == 0) {
        x->stream_done = 1;
        return A_OK;
    }
    json_tok_t *t;
    long r = json_parse_alloc(s, n, STREAM_TOKS_MAX, &t);
    if (r < 0) {
        size_t show = utf8_cut(s, n, 200);
        char msg[300];
        snprintf(msg, sizeof msg, "unparseable stream chunk: %.*s", (int)show, s);
        return fail(x, "inference_protocol", 0, msg, strlen(msg));
    }
    int rc = handle_chunk(x, s, t);
    free(t);
    return rc;
}

static int dispatch(ctx_t *x) {
    x->have_event = 0;
    int rc = dispatch_json(x, x->event.data ? x->event.data : "", x->event.len);
    buf_reset(&x->event);
    return rc;
}

/* A pending event that already holds a whole JSON value is dispatched before the next `data:`
 * line, so streams that omit the blank line between events still work. */
static int event_complete(ctx_t *x) {
    const char *s = x->event.data ? x->event.data : "";
    size_t n = x->event.len;
    if (!trimmed(&s, &n)) return 0;
    if (n == 6 && memcmp(s, "[DONE]", 6) == 0) return 1;
    if (s[0] != '{' || s[n - 1] != '}') return 0;
    return json_parse(s, n, NULL, 0, JSON_MAX_DEPTH) > 0;
}

static int on_line(ctx_t *x, const sse_line_t *l) {
    if (l->kind == SSE_BLANK) return x->have_event ? dispatch(x) : A_OK;
    if (l->kind != SSE_DATA) return A_OK; /* event:, id:, retry:, comments */
    if (x->have_event && event_complete(x)) {
        int rc = dispatch(x);
        if (rc != A_OK || x->stream_done) return rc;
    }
    if (x->have_event) buf_putc(&x->event, '\n');
    buf_append(&x->event, l->value, l->value_len);
    x->have_event = 1;
    if (x->event.err) return failf(x, "inference_protocol", "stream event larger than %u MiB", SSE_LINE_MAX >> 20);
    return A_OK;
}

static int infer_fail(ctx_t *x, hc_t *c, int rc, const char *io_code) {
    switch (rc) {
    case HC_ECANCEL: return A_CANCEL;
    case HC_EGONE: x->gone = 1; return A_CANCEL;
    case HC_ETIMEOUT:
        return failf(x, "inference_timeout", "no data from the inference URL for %d s",
                     x->cfg->inference_timeout_s);
    case HC_ECONNECT: return failf(x, "inference_connect", "cannot reach the inference URL: %s", c->err);
    case HC_EPROTO:
    case HC_ETOOBIG: return failf(x, "inference_protocol", "bad inference response: %s", c->err);
    default: return failf(x, io_code, "inference connection failed: %s", c->err);
    }
}

static int http_error(ctx_t *x, hc_t *c) {
    buf_t body;
    buf_init(&body, ERR_BODY_MAX);
    int rc = hc_read_all(c, &body);
    if (rc == HC_ECANCEL || rc == HC_EGONE) {
        buf_free(&body);
        return infer_fail(x, c, rc, "inference_http");
    }
    buf_t m;
    buf_init(&m, ERR_BODY_MAX);
    json_tok_t *t = NULL;
    long e = -1;
    if (body.len && json_parse_alloc(body.data, body.len, STREAM_TOKS_MAX, &t) > 0 && t[0].type == JSON_OBJECT)
        e = json_get(body.data, t, 0, "error");
    if (e >= 0 && t[e].type != JSON_NULL) error_text(body.data, t, e, &m);
    else if (body.len) buf_append(&m, body.data, body.len);
    else buf_printf(&m, "the inference URL answered HTTP %d", c->status);
    size_t n = utf8_cut(m.data, m.len, 500);
    rc = fail(x, "inference_http", c->status, m.data, n);
    free(t);
    buf_free(&m);
    buf_free(&body);
    return rc;
}

/* Read a 200 answer. Usually SSE; a body whose first non-blank byte is '{' is taken as one
 * non-streamed JSON completion instead, whatever its Content-Type says. */
static int read_stream(ctx_t *x, hc_t *c) {
    int eof = 0, mode = 0; /* 0: undecided, 1: SSE, 2: one JSON answer */
    size_t skip = 0;       /* a UTF-8 BOM to skip */
    for (;;) {
        const char *d;
        size_t n;
        int r = hc_read_body(c, &d, &n);
        if (r < 0) return infer_fail(x, c, r, "inference_protocol");
        if (run_cancelled(x->run)) return A_CANCEL;
        int partial = 0; /* the new bytes cannot complete a line: skip re-scanning */
        if (r == 0) {
            eof = 1;
        } else {
            partial = mode == 1 && x->sse.len && x->sse.data[x->sse.len - 1] != '\r' &&
                      !memchr(d, '\n', n) && !memchr(d, '\r', n);
            if (buf_append(&x->sse, d, n) != 0)
                return failf(x, "inference_protocol", "stream line longer than %u MiB", SSE_LINE_MAX >> 20);
        }
        if (partial) continue;
        const char *s = x->sse.data ? x->sse.data : "";
        size_t len = x->sse.len;
        if (mode == 0) {
            if (len < 3 && !eof && len && (unsigned char)s[0] == 0xEF) continue;
            size_t i = len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
            skip = i;
            while (i < len && strchr(" \t\r\n", s[i])) i++;
            if (i == len && !eof) continue;
            mode = i < len && s[i] == '{' ? 2 : 1;
        }
        if (mode == 2) {
            if (!eof) continue;
            return dispatch_json(x, s + skip, len - skip);
        }
        size_t off = skip;
        skip = 0;
        long k;
        int rc = A_OK;
        sse_line_t l;
        while ((k = sse_parse_line(x->sse.data + off, x->sse.len - off, SSE_LINE_MAX, eof, &l)) > 0) {
            off += (size_t)k;
            rc = on_line(x, &l);
            if (rc != A_OK || x->stream_done) break;
        }
        buf_consume(&x->sse, off);
        if (rc != A_OK) return rc;
        if (x->stream_done) return A_OK;
        if (k == -1)
            return failf(x, "inference_protocol", "stream line longer than %u MiB", SSE_LINE_MAX >> 20);
        if (eof) return x->have_event ? dispatch(x) : A_OK;
    }
}

static int inference(ctx_t *x) {
    const agent_cfg_t *cfg = x->cfg;
    const agent_req_t *q = x->req;
    buf_t pre, suf, head;
    buf_init(&pre, CONV_MAX);
    buf_init(&suf, CONV_MAX);
    buf_init(&head, 16384);
    buf_puts(&pre, "{\"model\":");
    buf_append(&pre, x->model.data, x->model.len);
    buf_puts(&pre, ",\"messages\":");
    buf_putc(&suf, ']');
    if (x->tools.len) {
        buf_puts(&suf, ",\"tools\":");
        buf_append(&suf, x->tools.data, x->tools.len);
    }
    buf_puts(&suf, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
    size_t clen = pre.len + x->msgs.len + suf.len;
    buf_printf(&head,
               "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
               "X-Resolve-Run-Id: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
               cfg->inference.path, cfg->inference.host, cfg->token, q->run_id, clen);
    int rc;
    hc_t c;
    hc_init(&c, cfg->inference_timeout_s * 1000, x->run->cancel_rd, x->client);
    if (pre.err || suf.err || head.err) {
        rc = too_large(x);
        goto out;
    }
    int r = hc_connect(&c, &cfg->inference);
    if (r == HC_OK) r = hc_send(&c, head.data, head.len);
    if (r == HC_OK) r = hc_send(&c, pre.data, pre.len);
    if (r == HC_OK) r = hc_send(&c, x->msgs.data, x->msgs.len);
    if (r == HC_OK) r = hc_send(&c, suf.data, suf.len);
    if (r != HC_OK) {
        rc = infer_fail(x, &c, r, "inference_connect");
        goto out;
    }
    /* sent: a stream can last minutes, do not keep the request (the tools) meanwhile */
    buf_free(&head);
    buf_free(&pre);
    buf_free(&suf);
    r = hc_read_head(&c);
    if (r != HC_OK) rc = infer_fail(x, &c, r, "inference_protocol");
    else if (c.status != 200) rc = http_error(x, &c);
    else rc = read_stream(x, &c);
out:
    hc_close(&c);
    buf_free(&pre);
    buf_free(&suf);
    buf_free(&head);
    return rc;
}

/* ---- tools --------------------------------------------------------------------------- */

typedef struct tres {
    int ok, truncated;
    buf_t out;  /* decoded output text */
    buf_t mime; /* JSON object or null */
    buf_t ms;   /* JSON number */
} tres_t;

static void tres_failf(tres_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tres_failf(tres_t *r, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->ok = 0;
    buf_reset(&r->out);
    buf_puts(&r->out, msg);
}

/* POST the call to the tools URL and fill r. Returns A_OK or A_CANCEL. */
static int call_tool(ctx_t *x, call_t *k, const char *ab, const json_tok_t *at, tres_t *r) {
    const agent_cfg_t *cfg = x->cfg;
    buf_t *body = &x->http;
    buf_reset(body);
    buf_puts(body, "{\"run_id\":");
    jw_cstr(body, x->req->run_id);
    buf_puts(body, ",\"call_id\":");
    jw_str(body, k->id.data, k->id.len);
    buf_puts(body, ",\"name\":");
    jw_str(body, k->name.data, k->name.len);
    buf_puts(body, ",\"arguments\":");
    jw_value(body, ab, at, 0);
    buf_putc(body, '}');
    char head[4096 + AGENT_TOKEN_MAX];
    snprintf(head, sizeof head,
             "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
             "Content-Type: application/json\r\nAccept: application/json\r\n"
             "X-Resolve-Run-Id: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
             cfg->tools.path, cfg->tools.host, cfg->token, x->req->run_id, body->len);
    if (body->err) {
        tres_failf(r, "arguments for '%s' are too large", k->name.data);
        return A_OK;
    }
    hc_t c;
    hc_init(&c, cfg->tool_timeout_s * 1000, x->run->cancel_rd, x->client);
    int rc = A_OK;
    int e = hc_connect(&c, &cfg->tools);
    if (e == HC_OK) e = hc_send(&c, head, strlen(head));
    if (e == HC_OK) e = hc_send(&c, body->data, body->len);
    if (e == HC_OK) e = hc_read_head(&c);
    buf_t ans;
    buf_init(&ans, TOOL_ANSWER_MAX);
    if (e == HC_OK) e = hc_read_all(&c, &ans);
    json_tok_t *t = NULL;
    if (e == HC_ECANCEL) {
        rc = A_CANCEL;
    } else if (e == HC_EGONE) {
        x->gone = 1;
        rc = A_CANCEL;
    } else if (e == HC_ETIMEOUT) {
        tres_failf(r, "tool '%s' timed out after %d s", k->name.data, cfg->tool_timeout_s);
    } else if (e == HC_ECONNECT) {
        tres_failf(r, "tools endpoint unreachable: %s", c.err);
    } else if (e == HC_ETOOBIG) {
        tres_failf(r, "tools endpoint answer larger than %u MiB", TOOL_ANSWER_MAX >> 20);
    } else if (e != HC_OK) {
        tres_failf(r, "tools endpoint failed: %s", c.err);
    } else if (c.status != 200) {
        buf_t m;
        buf_init(&m, ERR_BODY_MAX);
        long ei = -1;
        if (ans.len && json_parse_alloc(ans.data, ans.len, STREAM_TOKS_MAX, &t) > 0 && t[0].type == JSON_OBJECT)
            ei = json_get(ans.data, t, 0, "error");
        if (ei >= 0 && t[ei].type != JSON_NULL) error_text(ans.data, t, ei, &m);
        else buf_append(&m, ans.data ? ans.data : "", ans.len < 500 ? ans.len : 500);
        size_t n = utf8_cut(m.data ? m.data : "", m.len, 500);
        tres_failf(r, "tools endpoint answered HTTP %d: %.*s", c.status, (int)n, m.data ? m.data : "");
        buf_free(&m);
    } else if (json_parse_alloc(ans.data ? ans.data : "", ans.len, BODY_TOKS_MAX, &t) <= 0 ||
               t[0].type != JSON_OBJECT) {
        tres_failf(r, "tools endpoint sent an answer that is not a JSON object");
    } else {
        const char *b = ans.data;
        long v = json_get(b, t, 0, "ok");
        r->ok = v >= 0 && t[v].type == JSON_TRUE;
        v = json_get(b, t, 0, "output");
        buf_reset(&r->out);
        if (v >= 0 && t[v].type == JSON_STRING) json_str_to_buf(b, &t[v], &r->out);
        else if (v >= 0 && t[v].type != JSON_NULL) jw_value(&r->out, b, t, v);
        v = json_get(b, t, 0, "mime");
        if (v >= 0 && t[v].type == JSON_OBJECT) {
            buf_reset(&r->mime);
            jw_value(&r->mime, b, t, v);
        }
        v = json_get(b, t, 0, "truncated");
        r->truncated = v >= 0 && t[v].type == JSON_TRUE;
        v = json_get(b, t, 0, "ms");
        if (v >= 0 && t[v].type == JSON_NUMBER) {
            buf_reset(&r->ms);
            jw_value(&r->ms, b, t, v);
        }
    }
    free(t);
    buf_free(&ans);
    hc_close(&c);
    return rc;
}

static int run_tools(ctx_t *x, int round) {
    /* ids for calls that came without one; the assistant message first */
    buf_t *m = &x->http;
    buf_reset(m);
    for (size_t i = 0; i < x->ncalls; i++)
        if (!x->calls[i].id.len) buf_printf(&x->calls[i].id, "call_%d_%zu", round, i);
    buf_puts(m, "{\"role\":\"assistant\",\"content\":");
    if (x->text.len) jw_str(m, x->text.data, x->text.len);
    else buf_puts(m, "null");
    buf_puts(m, ",\"tool_calls\":[");
    for (size_t i = 0; i < x->ncalls; i++) {
        call_t *k = &x->calls[i];
        if (i) buf_putc(m, ',');
        buf_puts(m, "{\"id\":");
        jw_str(m, k->id.data, k->id.len);
        buf_puts(m, ",\"type\":\"function\",\"function\":{\"name\":");
        jw_str(m, k->name.data ? k->name.data : "", k->name.len);
        buf_puts(m, ",\"arguments\":");
        if (k->args.len) jw_str(m, k->args.data, k->args.len);
        else buf_puts(m, "\"{}\"");
        buf_puts(m, "}}");
    }
    buf_puts(m, "]}");
    if (add_msg(x, m) != A_OK) return A_ERROR;

    for (size_t i = 0; i < x->ncalls; i++) {
        if (run_cancelled(x->run) || x->gone) return A_CANCEL;
        call_t *k = &x->calls[i];
        if (!k->name.data) buf_puts(&k->name, ""); /* a NUL-terminated name from here on */
        const char *args = k->args.len ? k->args.data : "{}";
        size_t alen = k->args.len ? k->args.len : 2;
        const char *as = args;
        size_t an = alen;
        if (!trimmed(&as, &an)) {
            as = "{}";
            an = 2;
        }
        json_tok_t *at = NULL;
        long pr = json_parse_alloc(as, an, BODY_TOKS_MAX, &at);
        int valid = pr > 0 && at[0].type == JSON_OBJECT;

        buf_t *d = payload(x);
        buf_puts(d, "{\"call_id\":");
        jw_str(d, k->id.data, k->id.len);
        buf_puts(d, ",\"name\":");
        jw_str(d, k->name.data, k->name.len);
        buf_puts(d, ",\"arguments\":");
        if (valid) jw_value(d, as, at, 0);
        else jw_str(d, args, alen);
        buf_putc(d, '}');
        if (emit(x, "tool_call") != 0) {
            free(at);
            return A_CANCEL;
        }

        tres_t r;
        memset(&r, 0, sizeof r);
        buf_init(&r.out, TOOL_ANSWER_MAX);
        buf_init(&r.mime, TOOL_ANSWER_MAX);
        buf_init(&r.ms, 64);
        buf_puts(&r.mime, "null");
        long long t0 = now_ms();
        int rc = A_OK;
        if (!tool_allowed(x, k->name.data, k->name.len)) {
            buf_t list;
            buf_init(&list, 800);
            const char *p = x->names.data;
            for (size_t j = 0; j < x->nnames; j++) {
                if (j) buf_puts(&list, ", ");
                buf_puts(&list, p);
                p += strlen(p) + 1;
            }
            if (list.err) {
                buf_reset(&list);
                buf_puts(&list, "(list too long)");
            }
            tres_failf(&r, "unknown tool '%.200s': not among the tools this run may use (%s)",
                       k->name.data, x->nnames ? list.data : "none");
            buf_free(&list);
        } else if (!valid) {
            const char *why = pr == JSON_INCOMPLETE ? "unexpected end of input"
                              : pr == JSON_NOMEM    ? "nested too deeply or too large"
                              : pr > 0              ? "arguments must be a JSON object"
                                                    : "syntax error";
            tres_failf(&r, "invalid JSON arguments for '%.200s': %s", k->name.data, why);
        } else {
            rc = call_tool(x, k, as, at, &r);
        }
        free(at);
        if (rc == A_OK) {
            if (!r.ms.len) buf_printf(&r.ms, "%lld", now_ms() - t0);
            if (r.out.len > OUTPUT_MAX) {
                size_t keep = utf8_cut(r.out.data, r.out.len, OUTPUT_MAX);
                size_t total = r.out.len;
                r.out.len = keep;
                buf_printf(&r.out, "\n[output truncated: %zu of %zu characters shown]", keep, total);
                r.truncated = 1;
            }
            const char *out = r.out.data ? r.out.data : "";
            d = payload(x);
            buf_puts(d, "{\"call_id\":");
            jw_str(d, k->id.data, k->id.len);
            buf_puts(d, ",\"name\":");
            jw_str(d, k->name.data, k->name.len);
            buf_printf(d, ",\"ok\":%s,\"output\":", r.ok ? "true" : "false");
            jw_str(d, out, r.out.len);
            buf_puts(d, ",\"mime\":");
            buf_append(d, r.mime.data, r.mime.len);
            buf_printf(d, ",\"truncated\":%s,\"ms\":", r.truncated ? "true" : "false");
            buf_append(d, r.ms.data, r.ms.len);
            buf_putc(d, '}');
            if (emit(x, "tool_result") != 0) rc = A_CANCEL;
        }
        if (rc == A_OK) {
            m = &x->http;
            buf_reset(m);
            buf_puts(m, "{\"role\":\"tool\",\"tool_call_id\":");
            jw_str(m, k->id.data, k->id.len);
            buf_puts(m, ",\"content\":");
            jw_str(m, r.out.data ? r.out.data : "", r.out.len);
            buf_putc(m, '}');
            if (add_msg(x, m) != A_OK) rc = A_ERROR;
        }
        buf_free(&r.out);
        buf_free(&r.mime);
        buf_free(&r.ms);
        if (rc != A_OK) return rc;
    }
    return A_OK;
}

/* One round: inference, then tools. *calls is set when the model asked for tools. */
static int round_once(ctx_t *x, int n, int *calls) {
    *calls = 0;
    reset_round(x);
    buf_t *d = payload(x);
    buf_printf(d, "{\"n\":%d,\"of\":%d}", n, x->req->rounds);
    if (emit(x, "round") != 0) return A_CANCEL;
    int rc = inference(x);
    if (rc != A_OK) return rc;
    for (int chan = 0; chan < 2; chan++)
        if (x->carry_len[chan] && (rc = emit_text(x, chan, NULL, 0, 1)) != A_OK) return rc;
    if (x->usage_seen) {
        d = payload(x);
        buf_printf(d, "{\"prompt_tokens\":%lld,\"completion_tokens\":%lld}", x->prompt_tokens,
                   x->completion_tokens);
        if (emit(x, "usage") != 0) return A_CANCEL;
    }
    /* drop fragments that carried nothing at all */
    size_t w = 0;
    for (size_t i = 0; i < x->ncalls; i++) {
        call_t *k = &x->calls[i];
        if (!k->id.len && !k->name.len && !k->args.len) {
            buf_free(&k->id);
            buf_free(&k->name);
            buf_free(&k->args);
            continue;
        }
        x->calls[w++] = *k;
    }
    x->ncalls = w;
    if (!x->ncalls) return A_OK;
    *calls = 1;
    return run_tools(x, n);
}

/* Once the conversation is set up only the model, run id and rounds of the request are
 * needed: free its tokens and, when the caller handed it over, its body. */
static void release_request(agent_req_t *req) {
    free(req->t);
    req->t = NULL;
    if (req->body_buf) {
        buf_free(req->body_buf);
        req->body = NULL;
    }
}

void agent_run(const agent_cfg_t *cfg, agent_req_t *req, run_t *run, int client_fd) {
    ctx_t x;
    memset(&x, 0, sizeof x);
    x.cfg = cfg;
    x.req = req;
    x.run = run;
    x.client = client_fd;
    buf_init(&x.d, FRAME_MAX);
    buf_init(&x.frame, FRAME_MAX + 64);
    buf_init(&x.msgs, CONV_MAX);
    buf_init(&x.tools, CONV_MAX);
    buf_init(&x.names, CONV_MAX);
    buf_init(&x.scratch, SSE_LINE_MAX);
    buf_init(&x.sse, SSE_LINE_MAX + 64 * 1024);
    buf_init(&x.event, SSE_LINE_MAX);
    buf_init(&x.text, CONV_MAX);
    buf_init(&x.http, CONV_MAX + 4096);
    buf_init(&x.model, CONV_MAX);
    jw_value(&x.model, req->body, req->t, req->model);

    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Cache-Control: no-cache\r\nConnection: close\r\n"
                               "X-Accel-Buffering: no\r\n\r\n";
    if (send_all(client_fd, head, sizeof head - 1) != 0) x.gone = 1;
    agent_log("run=%s started (rounds %d)", req->run_id, req->rounds);

    buf_t *d = payload(&x);
    buf_puts(d, "{\"run_id\":");
    jw_cstr(d, req->run_id);
    buf_puts(d, ",\"model\":");
    buf_append(d, x.model.data, x.model.len);
    buf_printf(d, ",\"rounds\":%d}", req->rounds);
    emit(&x, "run");

    int rc = x.gone ? A_CANCEL : setup(&x);
    release_request(req);
    int used = 0, calls = 0;
    const char *reason = "stop";
    for (int n = 1; rc == A_OK && n <= req->rounds; n++) {
        if (run_cancelled(run) || x.gone) {
            rc = A_CANCEL;
            break;
        }
        used = n;
        rc = round_once(&x, n, &calls);
        if (rc != A_OK || !calls) break;
        if (n == req->rounds) reason = "budget";
    }
    if (rc == A_ERROR) reason = "error";
    else if (rc == A_CANCEL) reason = "cancelled";
    d = payload(&x);
    buf_puts(d, "{\"reason\":");
    jw_cstr(d, reason);
    buf_printf(d, ",\"rounds\":%d}", used);
    emit(&x, "done");
    agent_log("run=%s done reason=%s rounds=%d%s", req->run_id, reason, used,
              x.gone ? " (client gone)" : "");

    reset_round(&x);
    free(x.calls);
    buf_free(&x.d);
    buf_free(&x.frame);
    buf_free(&x.msgs);
    buf_free(&x.tools);
    buf_free(&x.names);
    buf_free(&x.scratch);
    buf_free(&x.sse);
    buf_free(&x.event);
    buf_free(&x.text);
    buf_free(&x.http);
    buf_free(&x.model);
}
