/* agent: one /chat run, the agent loop: inference rounds and tool calls, streamed to the
 * caller as SSE frames `data: {"t":TYPE,"d":DATA}`. One module per job: chat_req (the /chat
 * body), conv (the conversation), frames (frames to the client), stream (reading an inference
 * answer), toolcall (running tool calls); this one runs the rounds. */
#ifndef AGENT_H
#define AGENT_H

#include <stddef.h>

#include "chat_req.h"
#include "runs.h"
#include "url.h"

#define AGENT_VERSION "0.1.0"
#define AGENT_TOKEN_MAX 4096
#define AGENT_CONV_MAX (16u << 20)      /* the whole conversation sent to inference */
#define AGENT_ERR_BODY_MAX (64 * 1024)  /* non-200 bodies read for their message */
#define AGENT_ANSWER_TOKS_MAX (1u << 20) /* JSON tokens in an upstream answer or event */

typedef struct agent_cfg {
    url_t inference;
    url_t tools;
    char token[AGENT_TOKEN_MAX + 1];
    size_t token_len;
    int inference_timeout_s;
    int tool_timeout_s;
} agent_cfg_t;

/* How a step of the loop ended: go on, an error frame was sent, or stop (cancelled or the
 * client is gone). */
enum { AGENT_OK = 0, AGENT_ERROR = 1, AGENT_CANCEL = 2 };

/* Answer the /chat request on client_fd: the 200 SSE head, then frames, ending with exactly
 * one `done` (unless the client went away). Blocks until the run ends. The run must be
 * registered; it is not removed here. req is released (chat_req_release) once the
 * conversation is set up; the caller still calls chat_req_free. */
void agent_run(const agent_cfg_t *cfg, chat_req_t *req, run_t *run, int client_fd);

/* Write one log line "agent-httpd: ..." to stderr. */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
