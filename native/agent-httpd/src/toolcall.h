/* toolcall: the tool calls of a round. Each becomes a `tool_call` frame, then a POST to the
 * tools URL (unless its name is not among the run's tools or its arguments are not a JSON
 * object: then an ok:false result without a request), a `tool_result` frame (output cut at
 * 20,000 bytes on a UTF-8 boundary), and messages added to the conversation. */
#ifndef TOOLCALL_H
#define TOOLCALL_H

#include "agent.h"
#include "conv.h"
#include "frames.h"
#include "stream.h"

typedef struct toolcall_round {
    const agent_cfg_t *cfg;
    run_t *run;
    const char *run_id;
    frames_t *frames;
    conv_t *conv;
    stream_t *stream; /* the round's calls and assistant text */
    buf_t *scratch;   /* request bodies and messages are built here */
    int n;            /* the round, from 1 */
} toolcall_round_t;

/* Add the assistant message with its tool_calls, then run every call in order. Returns
 * AGENT_OK, AGENT_ERROR or AGENT_CANCEL (cancelled, or the client gone). */
int toolcall_run(const toolcall_round_t *x);

#endif
