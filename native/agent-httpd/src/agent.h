/* agent: one /chat run, the agent loop: inference rounds and tool calls, streamed to the
 * caller as SSE frames `data: {"t":TYPE,"d":DATA}`. One module per job: chat_req (the /chat
 * body), conv (the conversation), frames (frames to the client), stream (reading an inference
 * answer), toolcall (running tool calls); this one runs the rounds. */
#ifndef AGENT_H
#define AGENT_H

#include <stddef.h>

#include "agent_base.h"
#include "chat_req.h"
#include "runs.h"
#include "url.h"


typedef struct agent_cfg {
    url_t inference;
    url_t tools;
    char token[AGENT_TOKEN_MAX + 1];
    size_t token_len;
    int inference_timeout_s;
    int tool_timeout_s;
} agent_cfg_t;

/* Answer the /chat request on client_fd: the 200 SSE head, then frames, ending with exactly
 * one `done` (unless the client went away). Blocks until the run ends. The run must be
 * registered; it is not removed here. req is released (chat_req_release) once the
 * conversation is set up; the caller still calls chat_req_free. */
void agent_run(const agent_cfg_t *cfg, chat_req_t *req, run_t *run, int client_fd);

#endif
