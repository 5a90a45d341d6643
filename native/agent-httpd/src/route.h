/* route: what to do with a request head. Pure: no I/O, no allocation.
 *
 * The server reads a head, asks route_head what it means (authorised? which endpoint? how is
 * the body framed?), and either answers at once (errors, /healthz, cancel) or hands the
 * connection to a thread that reads the body and runs the chat or queues the message. */
#ifndef ROUTE_H
#define ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "runs.h"

#define ROUTE_HEAD_MAX (16 * 1024)
#define ROUTE_BODY_MAX (8u << 20)

enum route_kind { ROUTE_ERROR = 0, ROUTE_HEALTH, ROUTE_CHAT, ROUTE_CANCEL, ROUTE_MESSAGE };

typedef struct route {
    enum route_kind kind;
    /* ROUTE_ERROR: the answer to send */
    int status;
    const char *code;    /* static string */
    const char *message; /* static string */
    char extra[64];      /* extra header lines ("Name: value\r\n"...), or "" */
    /* the endpoints */
    char run_id[RUN_ID_MAX + 1]; /* ROUTE_CANCEL, ROUTE_MESSAGE: the decoded run id */
    size_t head_len;             /* bytes of the head, through the blank line */
    int chunked;                 /* the body is chunked */
    uint64_t content_length;     /* else its length (0: no body) */
    int expect_continue;         /* the client waits for "100 Continue" */
} route_t;

/* Route the head at the start of data[0..len). Returns -2 when more bytes are needed (the
 * head is incomplete and shorter than ROUTE_HEAD_MAX), else 0 with *r filled: an error answer
 * (400 malformed, 431 too large, 401 no/wrong token, 404, 405, 400/413 body framing) or an
 * endpoint. token[0..token_len) is the launch token, compared in constant time. */
int route_head(const char *data, size_t len, const char *token, size_t token_len, route_t *r);

/* 1 when the routed request carries a body. */
int route_has_body(const route_t *r);

#endif
