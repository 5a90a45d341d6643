/* http_client: a minimal HTTP/1.1 client for the two loopback URLs agent-httpd may reach.
 *
 * Connections are kept alive: hc_close() gives a connection whose answer was read to its end
 * (and did not say "Connection: close") to a small process-wide pool, and hc_request() takes one
 * from there, checked still open; a request on a kept connection that the server closed while it
 * idled (no byte of an answer) is sent once more on a new one. Every wait polls the socket with
 * an optional cancel fd (readable = abort, HC_ECANCEL) and an optional client fd (the /chat
 * caller: hang-up = abort, HC_EGONE), with an idle timeout. Response bodies may be framed by
 * Content-Length, chunked transfer coding, or the peer closing the connection. */
#ifndef HTTP_CLIENT_H
#define HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "chunked.h"
#include "url.h"

enum hc_err {
    HC_OK = 0,
    HC_ECONNECT = -1, /* could not connect */
    HC_ETIMEOUT = -2, /* no progress within the idle timeout */
    HC_EPROTO = -3,   /* malformed response */
    HC_ECANCEL = -4,  /* the cancel fd fired */
    HC_EGONE = -5,    /* the watched client hung up */
    HC_EIO = -6,      /* socket error after connecting */
    HC_ETOOBIG = -7,  /* response larger than the caller's bound */
    HC_ESTALE = -8    /* a kept connection was closed by the server: send again (hc_request) */
};

#define HC_POOL_MAX 16    /* idle connections kept, all targets together */
#define HC_POOL_IDLE_S 60 /* the longest a connection waits in the pool */

enum hc_mode { HC_BODY_LENGTH, HC_BODY_CHUNKED, HC_BODY_CLOSE };

typedef struct hc {
    int fd;
    int timeout_ms;
    int cancel_fd; /* -1: none */
    int client_fd; /* -1: none */
    buf_t in;      /* received, not yet consumed */
    size_t hold;   /* bytes of `in` lent out by the last hc_read_body */
    int status;
    int mode;
    uint64_t remaining;
    chunked_t ch;
    int done;
    int reused;     /* the connection came from the pool */
    int sent;       /* the whole request was sent */
    int keep;       /* the answer lets the connection serve another request */
    int pool_port;  /* the target, for the pool */
    int pool_v6;
    char content_type[128];
    char err[200]; /* detail of the last error, for messages */
} hc_t;

/* Prepare a client (allocates nothing yet). Pass -1 for fds not to watch. */
void hc_init(hc_t *c, int timeout_ms, int cancel_fd, int client_fd);

/* Connect to u, always with a new connection. Returns HC_OK or an hc_err (detail in c->err). */
int hc_connect(hc_t *c, const url_t *u);

/* One piece of a request. */
typedef struct hc_part {
    const void *p;
    size_t n;
} hc_part_t;

/* Send a request (its head and body in n parts) to u on a kept connection or a new one, and
 * read the answer's head. Returns HC_OK or an hc_err, as hc_read_head. */
int hc_request(hc_t *c, const url_t *u, const hc_part_t *parts, size_t n);

/* The two halves of hc_request, for a caller that frees its request before the answer: send
 * it (on a kept connection unless `fresh`; one the server closed at the send is replaced), then
 * hc_read_head. HC_ESTALE from hc_read_head: a kept connection closed before any answer, the
 * request never arrived; hc_drop, then send it again with `fresh` set. */
int hc_send_request(hc_t *c, const url_t *u, const hc_part_t *parts, size_t n, int fresh);

/* Forget the connection of a request that must be sent again (closed; the buffer kept). */
void hc_drop(hc_t *c);

/* Send all n bytes. Returns HC_OK or an hc_err. */
int hc_send(hc_t *c, const void *p, size_t n);

/* Read and parse the response head (skipping 1xx heads); sets status, mode, content_type.
 * Returns HC_OK or an hc_err. */
int hc_read_head(hc_t *c);

/* Next piece of the body: returns 1 with *data (length *len) viewing bytes owned by c (valid until the
 * next call), 0 at the end of the body (a peer closing early also ends it), or an hc_err. */
int hc_read_body(hc_t *c, const char **data, size_t *len);

/* Append the rest of the body to out. Returns HC_OK, HC_ETOOBIG when out->max is reached
 * (out holds what fitted), or another hc_err. */
int hc_read_all(hc_t *c, buf_t *out);

/* Done with the connection: into the pool if its answer was read to the end (at most a little
 * more is read now, without waiting) and may be followed by another request, else closed.
 * Frees the buffers. Safe to call twice. */
void hc_close(hc_t *c);

#endif
