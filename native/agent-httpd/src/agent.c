/* agent: one /chat run, the rounds of the agent loop. See agent.h and native/README.md. */
#include "agent.h"

#include <stdio.h>
#include <string.h>

#include "conv.h"
#include "frames.h"
#include "http_client.h"
#include "json.h"
#include "log.h"
#include "stream.h"
#include "toolcall.h"

/* A run's state, for the length of agent_run. */
typedef struct ctx {
    const agent_cfg_t *cfg;
    const chat_req_t *req;
    run_t *run;
    buf_t model; /* the request's model, as JSON (the request is freed after setup) */
    frames_t frames;
    conv_t conv;
    stream_t stream;
    buf_t http; /* request bodies and messages are built here */
} ctx_t;

/* The inference request of this round around the conversation: head, body before and after
 * the messages. Returns -1 when too large. */
static int inference_request(ctx_t *x, buf_t *head, buf_t *pre, buf_t *suf) {
    buf_puts(pre, "{\"model\":");
    buf_append(pre, x->model.data, x->model.len);
    buf_puts(pre, ",\"messages\":");
    buf_putc(suf, ']');
    if (x->conv.tools.len) {
        buf_puts(suf, ",\"tools\":");
        buf_append(suf, x->conv.tools.data, x->conv.tools.len);
    }
    buf_puts(suf, ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
    size_t clen = pre->len + x->conv.msgs.len + suf->len;
    const agent_cfg_t *cfg = x->cfg;
    buf_printf(head,
               "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"
               "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
               "X-Resolve-Run-Id: %s\r\nContent-Length: %zu\r\n\r\n",
               cfg->inference.path, cfg->inference.host, cfg->token, x->req->run_id, clen);
    return pre->err || suf->err || head->err ? -1 : 0;
}

/* One inference request, its answer streamed as frames. */
static int inference(ctx_t *x) {
    const agent_cfg_t *cfg = x->cfg;
    buf_t pre, suf, head;
    buf_init(&pre, AGENT_CONV_MAX);
    buf_init(&suf, AGENT_CONV_MAX);
    buf_init(&head, 16384);
    int rc, r;
    hc_t c;
    hc_init(&c, cfg->inference_timeout_s * 1000, x->run->cancel_rd, x->frames.client);
    for (int fresh = 0;; fresh = 1) {
        if (inference_request(x, &head, &pre, &suf) != 0) {
            rc = frames_too_large(&x->frames);
            goto out;
        }
        const hc_part_t parts[] = {{head.data, head.len},
                                   {pre.data, pre.len},
                                   {x->conv.msgs.data, x->conv.msgs.len},
                                   {suf.data, suf.len}};
        r = hc_send_request(&c, &cfg->inference, parts, sizeof parts / sizeof parts[0], fresh);
        /* Sent: a stream can last minutes, do not keep the request (the tools) meanwhile. Freed
         * before the answer's buffer is made, which then takes their place instead of sitting
         * above it (about 6 KiB more per live run, measured). */
        buf_free(&head);
        buf_free(&pre);
        buf_free(&suf);
        if (r == HC_OK) r = hc_read_head(&c);
        if (r != HC_ESTALE) break;
        hc_drop(&c); /* a kept connection the gateway closed while it idled: again, on a new one */
    }
    if (r != HC_OK)
        rc = stream_io_error(&x->frames, &c, r, c.sent ? "inference_protocol" : "inference_connect",
                             cfg->inference_timeout_s);
    else if (c.status != 200) rc = stream_http_error(&x->frames, &c, cfg->inference_timeout_s);
    else rc = stream_read(&x->stream, &x->frames, &c, x->run, cfg->inference_timeout_s);
out:
    hc_close(&c);
    buf_free(&pre);
    buf_free(&suf);
    buf_free(&head);
    return rc;
}

/* One round: inference, then tools. *calls is set when the model asked for tools. */
static int round_once(ctx_t *x, int n, int *calls) {
    *calls = 0;
    stream_reset(&x->stream);
    buf_t *d = frames_payload(&x->frames);
    buf_printf(d, "{\"n\":%d,\"of\":%d}", n, x->req->rounds);
    if (frames_emit(&x->frames, "round") != 0) return AGENT_CANCEL;
    int rc = inference(x);
    if (rc == AGENT_OK) rc = stream_finish(&x->stream, &x->frames);
    if (rc != AGENT_OK || !x->stream.ncalls) return rc;
    *calls = 1;
    toolcall_round_t tr = {x->cfg,   x->run,         x->req->run_id, &x->frames,
                           &x->conv, &x->stream,     &x->http,       n};
    return toolcall_run(&tr);
}

/* The messages a person sent the run since the last round (POST /runs/{id}/messages), in the
 * order they came: each joins the conversation as a user turn, then its `message` frame says
 * so, so the frame stands where the message took effect. */
static int deliver(ctx_t *x) {
    run_msg_t *list = runs_take_messages(x->run);
    int rc = AGENT_OK;
    for (run_msg_t *m = list; m && rc == AGENT_OK; m = m->next) {
        rc = conv_add(&x->conv, &x->frames, &m->user);
        if (rc != AGENT_OK) break;
        buf_t *d = frames_payload(&x->frames);
        buf_append(d, m->frame.data, m->frame.len);
        if (frames_emit(&x->frames, "message") != 0) rc = AGENT_CANCEL;
    }
    run_msg_free(list);
    return rc;
}

/* A round's answer without tool calls, kept when the run goes on for a message: the model
 * sees what it said before it. No text, no turn (an empty assistant turn is refused by some
 * providers; the transcript keeps none either). */
static int add_answer(ctx_t *x) {
    const stream_t *st = &x->stream;
    if (!st->text.len) return AGENT_OK;
    buf_reset(&x->http);
    buf_puts(&x->http, "{\"role\":\"assistant\",\"content\":");
    jw_str(&x->http, st->text.data, st->text.len);
    buf_putc(&x->http, '}');
    return conv_add(&x->conv, &x->frames, &x->http);
}

/* The rounds, up to the budget. A round that asked for no tools ends the run, unless messages
 * came meanwhile and the budget has a round for them. Returns the done reason and sets *used. */
static const char *rounds(ctx_t *x, int rc, int *used) {
    const char *reason = "stop";
    int calls = 0;
    *used = 0;
    for (int n = 1; rc == AGENT_OK && n <= x->req->rounds; n++) {
        if (runs_cancelled(x->run) || x->frames.gone) {
            rc = AGENT_CANCEL;
            break;
        }
        if ((rc = deliver(x)) != AGENT_OK) break;
        *used = n;
        rc = round_once(x, n, &calls);
        if (rc != AGENT_OK) break;
        if (!calls) {
            if (!runs_messages_waiting(x->run, n < x->req->rounds)) break;
            if ((rc = add_answer(x)) != AGENT_OK) break;
        }
        if (calls && n == x->req->rounds) reason = "budget";
    }
    int left = runs_close_messages(x->run);
    if (left) log_line("run=%s %d message(s) not delivered", x->req->run_id, left);
    if (rc == AGENT_ERROR) reason = "error";
    else if (rc == AGENT_CANCEL) reason = "cancelled";
    return reason;
}

static void ctx_init(ctx_t *x, const agent_cfg_t *cfg, const chat_req_t *req, run_t *run, int fd) {
    memset(x, 0, sizeof *x);
    x->cfg = cfg;
    x->req = req;
    x->run = run;
    frames_init(&x->frames, fd, req->run_id);
    conv_init(&x->conv);
    stream_init(&x->stream);
    buf_init(&x->http, AGENT_CONV_MAX + 4096);
    buf_init(&x->model, AGENT_CONV_MAX);
    jw_value(&x->model, req->body, req->t, req->model);
}

static void ctx_free(ctx_t *x) {
    frames_free(&x->frames);
    conv_free(&x->conv);
    stream_free(&x->stream);
    buf_free(&x->http);
    buf_free(&x->model);
}

void agent_run(const agent_cfg_t *cfg, chat_req_t *req, run_t *run, int client_fd) {
    ctx_t x;
    ctx_init(&x, cfg, req, run, client_fd);
    frames_start(&x.frames);
    log_line("run=%s started (rounds %d)", req->run_id, req->rounds);

    buf_t *d = frames_payload(&x.frames);
    buf_puts(d, "{\"run_id\":");
    jw_cstr(d, req->run_id);
    buf_puts(d, ",\"model\":");
    buf_append(d, x.model.data, x.model.len);
    buf_printf(d, ",\"rounds\":%d}", req->rounds);
    frames_emit(&x.frames, "run");

    int rc = x.frames.gone ? AGENT_CANCEL : conv_setup(&x.conv, req, &x.frames, &x.http);
    chat_req_release(req);
    int used;
    const char *reason = rounds(&x, rc, &used);
    d = frames_payload(&x.frames);
    buf_puts(d, "{\"reason\":");
    jw_cstr(d, reason);
    buf_printf(d, ",\"rounds\":%d}", used);
    frames_emit(&x.frames, "done");
    log_line("run=%s done reason=%s rounds=%d%s", req->run_id, reason, used,
              x.frames.gone ? " (client gone)" : "");
    ctx_free(&x);
}
