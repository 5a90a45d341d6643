/* conv: the conversation a run sends to inference: `[system?] + history + user`, then per
 * round the assistant message and one tool message per call; the request's tools and the
 * names the model may call. Bounded at AGENT_CONV_MAX. */
#ifndef CONV_H
#define CONV_H

#include <stddef.h>

#include "buf.h"
#include "chat_req.h"
#include "frames.h"

typedef struct conv {
    buf_t msgs;  /* "[" + messages, comma-separated, without the closing bracket */
    size_t nmsgs;
    buf_t tools; /* tools as a compact JSON array, or empty */
    buf_t names; /* allowed tool names, each NUL-terminated */
    size_t nnames;
} conv_t;

void conv_init(conv_t *c);
void conv_free(conv_t *c);

/* The first messages and the tools, from the request. scratch: a buffer to build messages
 * in. Returns AGENT_OK, or AGENT_ERROR once a too-large error frame was sent. */
int conv_setup(conv_t *c, const chat_req_t *q, frames_t *f, buf_t *scratch);

/* Append one message (already JSON in m). AGENT_OK, or AGENT_ERROR as above. */
int conv_add(conv_t *c, frames_t *f, const buf_t *m);

/* 1 when the run may call the tool named name[0..n). */
int conv_allows(const conv_t *c, const char *name, size_t n);

/* The allowed names as "a, b, c" (or "none") into out, or "(list too long)" past its max. */
void conv_list_names(const conv_t *c, buf_t *out);

#endif
