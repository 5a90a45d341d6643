/* chat_req: the /chat request contract (native/README.md "Dialect"): validate a body. */
#ifndef CHAT_REQ_H
#define CHAT_REQ_H

#include <stddef.h>

#include "buf.h"
#include "json.h"
#include "runs.h"

#define CHAT_REQ_ROUNDS_DEFAULT 8
#define CHAT_REQ_ROUNDS_MAX 64
#define CHAT_REQ_TOKS_MAX (1u << 20) /* JSON tokens in a body */

/* A validated /chat body. Token indexes are -1 when the optional field is absent or null. */
typedef struct chat_req {
    const char *body; /* borrowed: the request body, must outlive the req (or see body_buf) */
    json_tok_t *t;    /* owned: tokens of body (chat_req_free) */
    buf_t *body_buf;  /* optional: the buffer holding body; chat_req_release frees it */
    char run_id[RUN_ID_MAX + 1];
    long message, history, system, tools, model;
    int rounds;
} chat_req_t;

/* Validate a /chat body (body must outlive req). Returns 0, or -1 with a message naming the
 * offending field in err. Call chat_req_free in both cases. */
int chat_req_parse(const char *body, size_t len, chat_req_t *req, char *err, size_t errlen);

/* Free what chat_req_parse allocated. */
void chat_req_free(chat_req_t *req);

/* Once the conversation is set up only the run id and rounds are needed: free the tokens and,
 * when the caller handed it over, the body, so a long run does not keep its request. */
void chat_req_release(chat_req_t *req);

#endif
