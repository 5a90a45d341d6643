/* agent: the /chat request contract and the agent loop (inference rounds + tool calls),
 * streamed to the caller as SSE frames `data: {"t":TYPE,"d":DATA}`. */
#ifndef AGENT_H
#define AGENT_H

#include <stddef.h>

#include "buf.h"
#include "json.h"
#include "runs.h"
#include "url.h"

#define AGENT_VERSION "0.1.0"
#define AGENT_TOKEN_MAX 4096
#define AGENT_ROUNDS_DEFAULT 8
#define AGENT_ROUNDS_MAX 64

typedef struct agent_cfg {
    url_t inference;
    url_t tools;
    char token[AGENT_TOKEN_MAX + 1];
    size_t token_len;
    int inference_timeout_s;
    int tool_timeout_s;
} agent_cfg_t;

/* A validated /chat body. Token indexes are -1 when the optional field is absent or null. */
typedef struct agent_req {
    const char *body; /* borrowed: the request body, must outlive the req (or see body_buf) */
    json_tok_t *t;    /* owned: tokens of body (agent_req_free) */
    buf_t *body_buf;  /* optional: the buffer holding body; agent_run frees it (and t) once the
                         conversation is set up, so a long run does not keep its request */
    char run_id[RUN_ID_MAX + 1];
    long message, history, system, tools, model;
    int rounds;
} agent_req_t;

/* Validate a /chat body (body must outlive req). Returns 0, or -1 with a message naming the
 * offending field in err. Call agent_req_free in both cases. */
int agent_parse_chat(const char *body, size_t len, agent_req_t *req, char *err, size_t errlen);

/* Free what agent_parse_chat allocated. */
void agent_req_free(agent_req_t *req);

/* Answer the /chat request on client_fd: the 200 SSE head, then frames, ending with exactly
 * one `done` (unless the client went away). Blocks until the run ends. The run must be
 * registered; it is not removed here. */
void agent_run(const agent_cfg_t *cfg, agent_req_t *req, run_t *run, int client_fd);

/* Write one log line "agent-httpd: ..." to stderr. */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
