/* agent_base: what the agent modules (agent, conv, frames, stream, toolcall) share: their
 * bounds and the result of a step of the loop. Only definitions: no code, so any module may
 * include it without depending on the loop. */
#ifndef AGENT_BASE_H
#define AGENT_BASE_H

#define AGENT_VERSION "0.1.0"
#define AGENT_TOKEN_MAX 4096
#define AGENT_CONV_MAX (16u << 20)      /* the whole conversation sent to inference */
#define AGENT_ERR_BODY_MAX (64 * 1024)  /* non-200 bodies read for their message */
#define AGENT_ANSWER_TOKS_MAX (1u << 20) /* JSON tokens in an upstream answer or event */

/* How a step of the loop ended: go on, an error frame was sent, or stop (cancelled or the
 * client is gone). */
enum { AGENT_OK = 0, AGENT_ERROR = 1, AGENT_CANCEL = 2 };

#endif
