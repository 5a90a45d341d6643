/* stream: reading a round's inference answer. See stream.h and native/README.md. */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_base.h"
#include "io.h"
#include "log.h"
#include "slice.h"
#include "sse.h"
#include "utf8.h"

#define MAX_CALLS 128 /* tool calls per round */
#define ID_MAX 512    /* tool call id / name */

void stream_init(stream_t *st) {
    memset(st, 0, sizeof *st);
    buf_init(&st->sse, STREAM_LINE_MAX + 64 * 1024);
    buf_init(&st->event, STREAM_LINE_MAX);
    buf_init(&st->text, AGENT_CONV_MAX);
    buf_init(&st->scratch, STREAM_LINE_MAX);
}

void stream_reset(stream_t *st) {
    buf_reset(&st->text);
    st->carry_len[0] = st->carry_len[1] = 0;
    for (size_t i = 0; i < st->ncalls; i++) {
        buf_free(&st->calls[i].id);
        buf_free(&st->calls[i].name);
        buf_free(&st->calls[i].args);
    }
    st->ncalls = 0;
    st->usage_seen = 0;
    st->prompt_tokens = st->completion_tokens = 0;
    buf_reset(&st->sse);
    buf_reset(&st->event);
    st->have_event = 0;
    st->done = 0;
}

void stream_free(stream_t *st) {
    stream_reset(st);
    free(st->calls);
    st->calls = NULL;
    buf_free(&st->sse);
    buf_free(&st->event);
    buf_free(&st->text);
    buf_free(&st->scratch);
}

/* Forward a text piece (chan 0: delta, 1: reasoning), holding back a trailing incomplete
 * UTF-8 sequence until the next piece so no frame splits a character. */
static int emit_text(stream_t *st, frames_t *f, int chan, const char *s, size_t n, int flush) {
    buf_t joined;
    buf_init(&joined, STREAM_LINE_MAX + 8);
    if (st->carry_len[chan]) { /* rare: a character was split between two pieces */
        buf_append(&joined, st->carry[chan], st->carry_len[chan]);
        buf_append(&joined, s, n);
        s = joined.data;
        n = joined.len;
    }
    if (!s) s = "";
    size_t tail = flush ? 0 : utf8_incomplete_tail(s, n);
    size_t out = n - tail;
    memcpy(st->carry[chan], s + out, tail);
    st->carry_len[chan] = tail;
    int rc = AGENT_OK;
    if (out > 0) {
        if (chan == 0) {
            buf_append(&st->text, s, out);
            if (st->text.err) rc = frames_too_large(f);
        }
        if (rc == AGENT_OK && frames_text(f, chan, s, out) != 0) rc = AGENT_CANCEL;
    }
    buf_free(&joined);
    return rc;
}

static stream_call_t *new_call(stream_t *st, long index) {
    if (st->ncalls >= MAX_CALLS) return NULL;
    if (!st->calls) {
        st->calls = calloc(MAX_CALLS, sizeof *st->calls);
        if (!st->calls) return NULL;
    }
    stream_call_t *c = &st->calls[st->ncalls++];
    c->index = index;
    c->pieces = 0;
    c->shown_ms = 0;
    buf_init(&c->id, ID_MAX);
    buf_init(&c->name, ID_MAX);
    buf_init(&c->args, AGENT_CONV_MAX);
    return c;
}

/* Say that call c is being written: which tool, and how far (fragments and bytes of arguments so
 * far), so a person sees more than silence during a long call. The first frame goes out as soon
 * as the name is known, the next ones at most every STREAM_PROGRESS_MS. */
static int tool_progress(stream_t *st, frames_t *f, stream_call_t *c) {
    if (!c->name.len) return AGENT_OK;
    long long now = io_now_ms();
    if (c->shown_ms && now - c->shown_ms < STREAM_PROGRESS_MS) return AGENT_OK;
    c->shown_ms = now > 0 ? now : 1;
    buf_t *d = frames_payload(f);
    buf_printf(d, "{\"index\":%zu,\"call_id\":", (size_t)(c - st->calls));
    if (c->id.len) jw_str(d, c->id.data, c->id.len);
    else buf_puts(d, "null");
    buf_puts(d, ",\"name\":");
    jw_str(d, c->name.data, c->name.len);
    buf_printf(d, ",\"pieces\":%ld,\"bytes\":%zu}", c->pieces, c->args.len);
    return frames_emit(f, "tool_progress") != 0 ? AGENT_CANCEL : AGENT_OK;
}

static int tool_fragment(stream_t *st, frames_t *f, const char *b, const json_tok_t *t, long el) {
    if (t[el].type != JSON_OBJECT) return AGENT_OK;
    long long idx = -1;
    long vi = json_get(b, t, el, "index");
    if (vi < 0 || json_int(b, &t[vi], &idx) != 0 || idx < 0 || idx > 1000000) idx = -1;
    long vid = json_get(b, t, el, "id");
    buf_t *id = &st->scratch;
    buf_reset(id);
    if (vid >= 0 && t[vid].type == JSON_STRING) json_str_to_buf(b, &t[vid], id);
    stream_call_t *c = NULL;
    if (id->len && !id->err) {
        for (size_t i = st->ncalls; i-- > 0;) {
            stream_call_t *k = &st->calls[i];
            if (idx >= 0 ? k->index == idx : (k->id.len == id->len && memcmp(k->id.data, id->data, id->len) == 0)) {
                c = k;
                break;
            }
        }
        /* a new id on an index already in use is a new call (Ollama numbers them all 0) */
        if (c && c->id.len && !(c->id.len == id->len && memcmp(c->id.data, id->data, id->len) == 0))
            c = NULL;
        if (!c) c = new_call(st, idx);
        if (c && !c->id.len) buf_append(&c->id, id->data, id->len);
    } else {
        for (size_t i = st->ncalls; i-- > 0 && !c;)
            if (idx < 0 || st->calls[i].index == idx) c = &st->calls[i];
        if (!c) c = new_call(st, idx);
    }
    if (!c) return frames_failf(f, "inference_protocol", "more than %d tool calls in one round", MAX_CALLS);
    long fn = json_get(b, t, el, "function");
    if (fn >= 0 && t[fn].type == JSON_OBJECT) {
        long nm = json_get(b, t, fn, "name");
        if (nm >= 0 && t[nm].type == JSON_STRING && t[nm].len && !c->name.len)
            json_str_to_buf(b, &t[nm], &c->name);
        long ar = json_get(b, t, fn, "arguments");
        if (ar >= 0 && t[ar].type == JSON_STRING && t[ar].len) c->pieces++;
        if (ar >= 0 && t[ar].type == JSON_STRING) json_str_to_buf(b, &t[ar], &c->args);
        else if (ar >= 0 && (t[ar].type == JSON_OBJECT || t[ar].type == JSON_ARRAY) && !c->args.len)
            jw_value(&c->args, b, t, ar);
        if (c->args.err) return frames_too_large(f);
        if (c->name.err) return frames_failf(f, "inference_protocol", "tool name longer than %d bytes", ID_MAX);
    }
    return tool_progress(st, f, c);
}

static int text_field(stream_t *st, frames_t *f, const char *b, const json_tok_t *t, long obj,
                      const char *key, int chan) {
    long v = json_get(b, t, obj, key);
    if (v < 0 || t[v].type != JSON_STRING || t[v].len == 0) return -1;
    buf_reset(&st->scratch);
    json_str_to_buf(b, &t[v], &st->scratch);
    return emit_text(st, f, chan, st->scratch.data, st->scratch.len, 0);
}

void stream_error_text(const char *b, const json_tok_t *t, long e, buf_t *out) {
    long m = t[e].type == JSON_OBJECT ? json_get(b, t, e, "message") : -1;
    if (m >= 0 && t[m].type == JSON_STRING) json_str_to_buf(b, &t[m], out);
    else if (t[e].type == JSON_STRING) json_str_to_buf(b, &t[e], out);
    else jw_value(out, b, t, e);
}

static int handle_chunk(stream_t *st, frames_t *f, const char *b, const json_tok_t *t) {
    if (t[0].type != JSON_OBJECT)
        return frames_failf(f, "inference_protocol", "stream chunk is not a JSON object");
    long e = json_get(b, t, 0, "error");
    if (e >= 0 && t[e].type != JSON_NULL) {
        buf_t m;
        buf_init(&m, 4096);
        stream_error_text(b, t, e, &m);
        size_t n = utf8_cut(m.data ? m.data : "", m.len, 500);
        int rc = frames_fail(f, "inference_stream", 0, m.data ? m.data : "", n);
        buf_free(&m);
        return rc;
    }
    long u = json_get(b, t, 0, "usage");
    if (u >= 0 && t[u].type == JSON_OBJECT) {
        long long v;
        long pt = json_get(b, t, u, "prompt_tokens"), ct = json_get(b, t, u, "completion_tokens");
        st->usage_seen = 1;
        if (pt >= 0 && json_int(b, &t[pt], &v) == 0) st->prompt_tokens = v;
        if (ct >= 0 && json_int(b, &t[ct], &v) == 0) st->completion_tokens = v;
    }
    long ch = json_get(b, t, 0, "choices");
    long c0 = ch >= 0 ? json_at(t, ch, 0) : -1;
    if (c0 < 0 || t[c0].type != JSON_OBJECT) return AGENT_OK;
    long d = json_get(b, t, c0, "delta");
    if (d < 0 || t[d].type != JSON_OBJECT) d = json_get(b, t, c0, "message"); /* non-streamed */
    if (d < 0 || t[d].type != JSON_OBJECT) return AGENT_OK;
    int rc;
    if ((rc = text_field(st, f, b, t, d, "reasoning_content", 1)) > 0) return rc;
    if (rc < 0 && (rc = text_field(st, f, b, t, d, "reasoning", 1)) > 0) return rc;
    if ((rc = text_field(st, f, b, t, d, "content", 0)) > 0) return rc;
    long tc = json_get(b, t, d, "tool_calls");
    if (tc >= 0 && t[tc].type == JSON_ARRAY) {
        long el = tc + 1;
        for (uint32_t i = 0; i < t[tc].size; i++, el = t[el].end)
            if ((rc = tool_fragment(st, f, b, t, el)) != AGENT_OK) return rc;
    }
    return AGENT_OK;
}

int stream_trim(const char **s, size_t *n) {
    while (*n && strchr(" \t\r\n", (*s)[0])) (*s)++, (*n)--;
    while (*n && strchr(" \t\r\n", (*s)[*n - 1])) (*n)--;
    return *n > 0;
}

static int dispatch_json(stream_t *st, frames_t *f, const char *s, size_t n) {
    if (!stream_trim(&s, &n)) return AGENT_OK;
    if (n == 6 && memcmp(s, "[DONE]", 6) == 0) {
        st->done = 1;
        return AGENT_OK;
    }
    json_tok_t *t;
    long r = json_parse_alloc(s, n, AGENT_ANSWER_TOKS_MAX, &t);
    if (r < 0) {
        size_t show = utf8_cut(s, n, 200);
        char msg[300];
        snprintf(msg, sizeof msg, "unparseable stream chunk: %.*s", (int)show, s);
        return frames_fail(f, "inference_protocol", 0, msg, strlen(msg));
    }
    int rc = handle_chunk(st, f, s, t);
    free(t);
    return rc;
}

static int dispatch(stream_t *st, frames_t *f) {
    st->have_event = 0;
    int rc = dispatch_json(st, f, st->event.data ? st->event.data : "", st->event.len);
    buf_reset(&st->event);
    return rc;
}

/* A pending event that already holds a whole JSON value is dispatched before the next `data:`
 * line, so streams that omit the blank line between events still work. */
static int event_complete(const stream_t *st) {
    const char *s = st->event.data ? st->event.data : "";
    size_t n = st->event.len;
    if (!stream_trim(&s, &n)) return 0;
    if (n == 6 && memcmp(s, "[DONE]", 6) == 0) return 1;
    if (s[0] != '{' || s[n - 1] != '}') return 0;
    return json_parse(s, n, NULL, 0, JSON_MAX_DEPTH) > 0;
}

static int on_line(stream_t *st, frames_t *f, const sse_line_t *l) {
    if (l->kind == SSE_BLANK) return st->have_event ? dispatch(st, f) : AGENT_OK;
    if (l->kind != SSE_DATA) return AGENT_OK; /* event:, id:, retry:, comments */
    if (st->have_event && event_complete(st)) {
        int rc = dispatch(st, f);
        if (rc != AGENT_OK || st->done) return rc;
    }
    if (st->have_event) buf_putc(&st->event, '\n');
    buf_append(&st->event, l->value, l->value_len);
    st->have_event = 1;
    if (st->event.err) return frames_failf(f, "inference_protocol", "stream event larger than %u MiB", STREAM_LINE_MAX >> 20);
    return AGENT_OK;
}

int stream_io_error(frames_t *f, const hc_t *c, int rc, const char *io_code, int timeout_s) {
    switch (rc) {
    case HC_ECANCEL: return AGENT_CANCEL;
    case HC_EGONE: f->gone = 1; return AGENT_CANCEL;
    case HC_ETIMEOUT:
        return frames_failf(f, "inference_timeout", "no data from the inference URL for %d s", timeout_s);
    case HC_ECONNECT: return frames_failf(f, "inference_connect", "cannot reach the inference URL: %s", c->err);
    case HC_EPROTO:
    case HC_ETOOBIG: return frames_failf(f, "inference_protocol", "bad inference response: %s", c->err);
    default: return frames_failf(f, io_code, "inference connection failed: %s", c->err);
    }
}

int stream_http_error(frames_t *f, hc_t *c, int timeout_s) {
    buf_t body;
    buf_init(&body, AGENT_ERR_BODY_MAX);
    int rc = hc_read_all(c, &body);
    if (rc == HC_ECANCEL || rc == HC_EGONE) {
        buf_free(&body);
        return stream_io_error(f, c, rc, "inference_http", timeout_s);
    }
    buf_t m;
    buf_init(&m, AGENT_ERR_BODY_MAX);
    json_tok_t *t = NULL;
    long e = -1;
    if (body.len && json_parse_alloc(body.data, body.len, AGENT_ANSWER_TOKS_MAX, &t) > 0 && t[0].type == JSON_OBJECT)
        e = json_get(body.data, t, 0, "error");
    if (e >= 0 && t[e].type != JSON_NULL) stream_error_text(body.data, t, e, &m);
    else if (body.len) buf_append(&m, body.data, body.len);
    else buf_printf(&m, "the inference URL answered HTTP %d", c->status);
    size_t n = utf8_cut(m.data, m.len, 500);
    rc = frames_fail(f, "inference_http", c->status, m.data, n);
    free(t);
    buf_free(&m);
    buf_free(&body);
    return rc;
}

/* Read a 200 answer. Usually SSE; a body whose first non-blank byte is '{' is taken as one
 * non-streamed JSON completion instead, whatever its Content-Type says. The text of each
 * network read goes out as one frame, before the next read can wait. */
static int read_answer(stream_t *st, frames_t *f, hc_t *c, run_t *run, int timeout_s) {
    int eof = 0, mode = 0; /* 0: undecided, 1: SSE, 2: one JSON answer */
    size_t skip = 0;       /* a UTF-8 BOM to skip */
    int started = 0;       /* the answer's first bytes are in: its first frame needs no wake-up */
    for (;;) {
        const char *d;
        size_t n;
        if (frames_flush(f) != 0) return AGENT_CANCEL;
        int r = hc_read_body(c, &d, &n);
        if (r < 0) return stream_io_error(f, c, r, "inference_protocol", timeout_s);
        if (runs_cancelled(run)) return AGENT_CANCEL;
        int partial = 0; /* the new bytes cannot complete a line: skip re-scanning */
        if (r == 0) {
            eof = 1;
        } else {
            if (!started) {
                started = 1;
                slice_default();
            }
            partial = mode == 1 && st->sse.len && st->sse.data[st->sse.len - 1] != '\r' &&
                      !memchr(d, '\n', n) && !memchr(d, '\r', n);
            if (buf_append(&st->sse, d, n) != 0)
                return frames_failf(f, "inference_protocol", "stream line longer than %u MiB", STREAM_LINE_MAX >> 20);
        }
        if (partial) continue;
        const char *s = st->sse.data ? st->sse.data : "";
        size_t len = st->sse.len;
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
            return dispatch_json(st, f, s + skip, len - skip);
        }
        size_t off = skip;
        skip = 0;
        long k;
        int rc = AGENT_OK;
        sse_line_t l;
        while ((k = sse_parse_line(st->sse.data + off, st->sse.len - off, STREAM_LINE_MAX, eof, &l)) > 0) {
            off += (size_t)k;
            rc = on_line(st, f, &l);
            if (rc != AGENT_OK || st->done) break;
        }
        buf_consume(&st->sse, off);
        if (rc != AGENT_OK) return rc;
        if (st->done) return AGENT_OK;
        if (k == -1)
            return frames_failf(f, "inference_protocol", "stream line longer than %u MiB", STREAM_LINE_MAX >> 20);
        if (eof) return st->have_event ? dispatch(st, f) : AGENT_OK;
    }
}

int stream_read(stream_t *st, frames_t *f, hc_t *c, run_t *run, int timeout_s) {
    int rc = read_answer(st, f, c, run, timeout_s);
    slice_short(); /* for what comes next: tool calls, the next round's first token */
    if (frames_flush(f) != 0 && rc == AGENT_OK) rc = AGENT_CANCEL;
    return rc;
}

int stream_finish(stream_t *st, frames_t *f) {
    int rc;
    for (int chan = 0; chan < 2; chan++)
        if (st->carry_len[chan] && (rc = emit_text(st, f, chan, NULL, 0, 1)) != AGENT_OK) return rc;
    if (st->usage_seen) {
        buf_t *d = frames_payload(f);
        buf_printf(d, "{\"prompt_tokens\":%lld,\"completion_tokens\":%lld}", st->prompt_tokens,
                   st->completion_tokens);
        if (frames_emit(f, "usage") != 0) return AGENT_CANCEL;
    }
    if (frames_flush(f) != 0) return AGENT_CANCEL;
    /* drop fragments that carried nothing at all */
    size_t w = 0;
    for (size_t i = 0; i < st->ncalls; i++) {
        stream_call_t *k = &st->calls[i];
        if (!k->id.len && !k->name.len && !k->args.len) {
            buf_free(&k->id);
            buf_free(&k->name);
            buf_free(&k->args);
            continue;
        }
        st->calls[w++] = *k;
    }
    st->ncalls = w;
    return AGENT_OK;
}
