/* toolcall: the tool calls of a round. See toolcall.h and native/README.md. */
#include "toolcall.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_client.h"
#include "io.h"
#include "json.h"
#include "utf8.h"

#define TOOL_ANSWER_MAX (16u << 20) /* a tools answer */
#define OUTPUT_MAX 20000            /* tool output bytes passed to the model */

/* A tool's result, as the tool_result frame and the tool message carry it. */
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

/* A non-200 answer of the tools URL: its error message, or the start of its body. */
static void fail_status(tres_t *r, int status, const buf_t *ans) {
    buf_t m;
    buf_init(&m, AGENT_ERR_BODY_MAX);
    json_tok_t *t = NULL;
    long ei = -1;
    if (ans->len && json_parse_alloc(ans->data, ans->len, AGENT_ANSWER_TOKS_MAX, &t) > 0 &&
        t[0].type == JSON_OBJECT)
        ei = json_get(ans->data, t, 0, "error");
    if (ei >= 0 && t[ei].type != JSON_NULL) stream_error_text(ans->data, t, ei, &m);
    else buf_append(&m, ans->data ? ans->data : "", ans->len < 500 ? ans->len : 500);
    size_t n = utf8_cut(m.data ? m.data : "", m.len, 500);
    tres_failf(r, "tools endpoint answered HTTP %d: %.*s", status, (int)n, m.data ? m.data : "");
    free(t);
    buf_free(&m);
}

/* A 200 answer {ok, output, mime, truncated, ms} into r. */
static void read_answer(tres_t *r, const buf_t *ans) {
    json_tok_t *t = NULL;
    const char *b = ans->data ? ans->data : "";
    if (json_parse_alloc(b, ans->len, AGENT_ANSWER_TOKS_MAX, &t) <= 0 || t[0].type != JSON_OBJECT) {
        tres_failf(r, "tools endpoint sent an answer that is not a JSON object");
        free(t);
        return;
    }
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
    free(t);
}

/* The request to the tools URL for call k with arguments t[0] of ab, into x->scratch and head.
 * Returns -1 if the body is too large. */
static int build_request(const toolcall_round_t *x, const stream_call_t *k, const char *ab,
                         const json_tok_t *at, char *head, size_t headlen) {
    buf_t *body = x->scratch;
    buf_reset(body);
    buf_puts(body, "{\"run_id\":");
    jw_cstr(body, x->run_id);
    buf_puts(body, ",\"call_id\":");
    jw_str(body, k->id.data, k->id.len);
    buf_puts(body, ",\"name\":");
    jw_str(body, k->name.data, k->name.len);
    buf_puts(body, ",\"arguments\":");
    jw_value(body, ab, at, 0);
    buf_putc(body, '}');
    snprintf(head, headlen,
             "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
             "Content-Type: application/json\r\nAccept: application/json\r\n"
             "X-Resolve-Run-Id: %s\r\nContent-Length: %zu\r\n\r\n",
             x->cfg->tools.path, x->cfg->tools.host, x->cfg->token, x->run_id, body->len);
    return body->err ? -1 : 0;
}

/* POST call k to the tools URL and fill r. Returns AGENT_OK or AGENT_CANCEL. */
static int post_call(const toolcall_round_t *x, const stream_call_t *k, const char *ab,
                     const json_tok_t *at, tres_t *r) {
    const agent_cfg_t *cfg = x->cfg;
    char head[4096 + AGENT_TOKEN_MAX];
    if (build_request(x, k, ab, at, head, sizeof head) != 0) {
        tres_failf(r, "arguments for '%s' are too large", k->name.data);
        return AGENT_OK;
    }
    hc_t c;
    hc_init(&c, cfg->tool_timeout_s * 1000, x->run->cancel_rd, x->frames->client);
    int rc = AGENT_OK;
    const hc_part_t parts[] = {{head, strlen(head)}, {x->scratch->data, x->scratch->len}};
    int e = hc_request(&c, &cfg->tools, parts, 2);
    buf_t ans;
    buf_init(&ans, TOOL_ANSWER_MAX);
    if (e == HC_OK) e = hc_read_all(&c, &ans);
    if (e == HC_ECANCEL || e == HC_EGONE) {
        if (e == HC_EGONE) x->frames->gone = 1;
        rc = AGENT_CANCEL;
    } else if (e == HC_ETIMEOUT)
        tres_failf(r, "tool '%s' timed out after %d s", k->name.data, cfg->tool_timeout_s);
    else if (e == HC_ECONNECT) tres_failf(r, "tools endpoint unreachable: %s", c.err);
    else if (e == HC_ETOOBIG)
        tres_failf(r, "tools endpoint answer larger than %u MiB", TOOL_ANSWER_MAX >> 20);
    else if (e != HC_OK) tres_failf(r, "tools endpoint failed: %s", c.err);
    else if (c.status != 200) fail_status(r, c.status, &ans);
    else read_answer(r, &ans);
    buf_free(&ans);
    hc_close(&c);
    return rc;
}

/* The assistant message of the round: its text and every call (ids given to calls that came
 * without one: call_<round>_<i>). */
static int add_assistant(const toolcall_round_t *x) {
    stream_t *st = x->stream;
    buf_t *m = x->scratch;
    buf_reset(m);
    for (size_t i = 0; i < st->ncalls; i++)
        if (!st->calls[i].id.len) buf_printf(&st->calls[i].id, "call_%d_%zu", x->n, i);
    buf_puts(m, "{\"role\":\"assistant\",\"content\":");
    if (st->text.len) jw_str(m, st->text.data, st->text.len);
    else buf_puts(m, "null");
    buf_puts(m, ",\"tool_calls\":[");
    for (size_t i = 0; i < st->ncalls; i++) {
        const stream_call_t *k = &st->calls[i];
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
    return conv_add(x->conv, x->frames, m);
}

/* The tool_call frame: arguments parsed when valid, else the raw string. */
static int emit_call(const toolcall_round_t *x, const stream_call_t *k, const char *args,
                     size_t alen, const char *as, const json_tok_t *at) {
    buf_t *d = frames_payload(x->frames);
    buf_puts(d, "{\"call_id\":");
    jw_str(d, k->id.data, k->id.len);
    buf_puts(d, ",\"name\":");
    jw_str(d, k->name.data, k->name.len);
    buf_puts(d, ",\"arguments\":");
    if (at) jw_value(d, as, at, 0);
    else jw_str(d, args, alen);
    buf_putc(d, '}');
    return frames_emit(x->frames, "tool_call") != 0 ? AGENT_CANCEL : AGENT_OK;
}

/* The tool_result frame, then the tool message. */
static int emit_result(const toolcall_round_t *x, const stream_call_t *k, tres_t *r,
                       long long t0) {
    if (!r->ms.len) buf_printf(&r->ms, "%lld", io_now_ms() - t0);
    if (r->out.len > OUTPUT_MAX) {
        size_t keep = utf8_cut(r->out.data, r->out.len, OUTPUT_MAX);
        size_t total = r->out.len;
        r->out.len = keep;
        buf_printf(&r->out, "\n[output truncated: %zu of %zu characters shown]", keep, total);
        r->truncated = 1;
    }
    const char *out = r->out.data ? r->out.data : "";
    buf_t *d = frames_payload(x->frames);
    buf_puts(d, "{\"call_id\":");
    jw_str(d, k->id.data, k->id.len);
    buf_puts(d, ",\"name\":");
    jw_str(d, k->name.data, k->name.len);
    buf_printf(d, ",\"ok\":%s,\"output\":", r->ok ? "true" : "false");
    jw_str(d, out, r->out.len);
    buf_puts(d, ",\"mime\":");
    buf_append(d, r->mime.data, r->mime.len);
    buf_printf(d, ",\"truncated\":%s,\"ms\":", r->truncated ? "true" : "false");
    buf_append(d, r->ms.data, r->ms.len);
    buf_putc(d, '}');
    if (frames_emit(x->frames, "tool_result") != 0) return AGENT_CANCEL;
    buf_t *m = x->scratch;
    buf_reset(m);
    buf_puts(m, "{\"role\":\"tool\",\"tool_call_id\":");
    jw_str(m, k->id.data, k->id.len);
    buf_puts(m, ",\"content\":");
    jw_str(m, out, r->out.len);
    buf_putc(m, '}');
    return conv_add(x->conv, x->frames, m);
}

/* Execute call k (or refuse it) into r. pr: what parsing its arguments returned. */
static int execute(const toolcall_round_t *x, const stream_call_t *k, long pr, const char *as,
                   const json_tok_t *at, tres_t *r) {
    if (!conv_allows(x->conv, k->name.data, k->name.len)) {
        buf_t list;
        buf_init(&list, 800);
        conv_list_names(x->conv, &list);
        tres_failf(r, "unknown tool '%.200s': not among the tools this run may use (%s)",
                   k->name.data, list.data);
        buf_free(&list);
        return AGENT_OK;
    }
    if (!at) {
        const char *why = pr == JSON_INCOMPLETE ? "unexpected end of input"
                          : pr == JSON_NOMEM    ? "nested too deeply or too large"
                          : pr > 0              ? "arguments must be a JSON object"
                                                : "syntax error";
        tres_failf(r, "invalid JSON arguments for '%.200s': %s", k->name.data, why);
        return AGENT_OK;
    }
    return post_call(x, k, as, at, r);
}

/* One call: tool_call frame, execution, tool_result frame, tool message. */
static int one_call(const toolcall_round_t *x, stream_call_t *k) {
    if (!k->name.data) buf_puts(&k->name, ""); /* a NUL-terminated name from here on */
    const char *args = k->args.len ? k->args.data : "{}";
    size_t alen = k->args.len ? k->args.len : 2;
    const char *as = args;
    size_t an = alen;
    if (!stream_trim(&as, &an)) {
        as = "{}";
        an = 2;
    }
    json_tok_t *at = NULL;
    long pr = json_parse_alloc(as, an, AGENT_ANSWER_TOKS_MAX, &at);
    const json_tok_t *valid = pr > 0 && at[0].type == JSON_OBJECT ? at : NULL;
    if (emit_call(x, k, args, alen, as, valid) != AGENT_OK) {
        free(at);
        return AGENT_CANCEL;
    }
    tres_t r;
    memset(&r, 0, sizeof r);
    buf_init(&r.out, TOOL_ANSWER_MAX);
    buf_init(&r.mime, TOOL_ANSWER_MAX);
    buf_init(&r.ms, 64);
    buf_puts(&r.mime, "null");
    long long t0 = io_now_ms();
    int rc = execute(x, k, pr, as, valid, &r);
    free(at);
    if (rc == AGENT_OK) rc = emit_result(x, k, &r, t0);
    buf_free(&r.out);
    buf_free(&r.mime);
    buf_free(&r.ms);
    return rc;
}

int toolcall_run(const toolcall_round_t *x) {
    if (add_assistant(x) != AGENT_OK) return AGENT_ERROR;
    for (size_t i = 0; i < x->stream->ncalls; i++) {
        if (runs_cancelled(x->run) || x->frames->gone) return AGENT_CANCEL;
        int rc = one_call(x, &x->stream->calls[i]);
        if (rc != AGENT_OK) return rc;
    }
    return AGENT_OK;
}
