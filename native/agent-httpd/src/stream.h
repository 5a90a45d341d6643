/* stream: reading a round's inference answer (DESIGN §8): SSE or one JSON completion, text and
 * reasoning forwarded as they come (a read's text as one frame per channel: frames.h), usage,
 * and tool calls collected by index, each announced while it is written (tool_progress: its
 * name as soon as it comes, then its growth at most every STREAM_PROGRESS_MS). */
#ifndef STREAM_H
#define STREAM_H

#include <stddef.h>

#include "buf.h"
#include "frames.h"
#include "http_client.h"
#include "json.h"
#include "runs.h"

#define STREAM_LINE_MAX (4u << 20) /* one line / one event of the inference stream */
#define STREAM_PROGRESS_MS 500     /* a call being written: one tool_progress frame this often */

typedef struct stream_call {
    long index; /* -1: the fragment had none */
    buf_t id, name, args;
    long pieces;       /* argument fragments so far (about one token each) */
    long long shown_ms; /* when its last tool_progress frame went out (0: none yet) */
} stream_call_t;

typedef struct stream {
    buf_t sse;   /* unparsed stream bytes */
    buf_t event; /* data of the pending event */
    int have_event;
    int done;    /* [DONE] seen */
    buf_t text;  /* assistant content of this round */
    char carry[2][4];
    size_t carry_len[2];
    stream_call_t *calls; /* the round's tool calls */
    size_t ncalls;
    int usage_seen;
    long long prompt_tokens, completion_tokens;
    buf_t scratch; /* decoded strings */
} stream_t;

void stream_init(stream_t *s);
void stream_free(stream_t *s);

/* Forget the previous round. */
void stream_reset(stream_t *s);

/* Read the 200 answer on c until it ends. Returns AGENT_OK, AGENT_ERROR (an error frame was
 * sent) or AGENT_CANCEL (run cancelled, or the client gone). */
int stream_read(stream_t *s, frames_t *f, hc_t *c, run_t *run, int timeout_s);

/* End of the round: send held-back text and the usage, drop empty call fragments. */
int stream_finish(stream_t *s, frames_t *f);

/* A failed inference request (an hc_* error rc) as a frame: AGENT_ERROR, or AGENT_CANCEL. */
int stream_io_error(frames_t *f, const hc_t *c, int rc, const char *io_code, int timeout_s);

/* A non-200 inference answer as an inference_http error frame (its message cut to 500). */
int stream_http_error(frames_t *f, hc_t *c, int timeout_s);

/* Decoded text of an upstream error value t[e]: error.message, a string, or the JSON. */
void stream_error_text(const char *b, const json_tok_t *t, long e, buf_t *out);

/* Trim JSON whitespace around s[0..n). Returns 1 if anything is left. */
int stream_trim(const char **s, size_t *n);

#endif
