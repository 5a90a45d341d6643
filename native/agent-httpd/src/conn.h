/* conn: one routed request on its own thread: read the body, then answer (a steering message
 * among them) or run the chat. */
#ifndef CONN_H
#define CONN_H

#include "agent.h"
#include "buf.h"
#include "route.h"
#include "runs.h"

/* What every connection thread shares; owned by the server. */
typedef struct conn_shared {
    const agent_cfg_t *cfg;
    runs_t *runs;
    int stop_fd;           /* readable => stop waiting for the client */
    long long start_ms;    /* io_now_ms() at start, for uptime */
} conn_shared_t;

/* A request whose head was read and routed. */
typedef struct conn_job {
    const conn_shared_t *sh;
    int fd;        /* blocking socket; the caller closes it after conn_serve */
    route_t route; /* ROUTE_HEALTH, ROUTE_CHAT, ROUTE_CANCEL or ROUTE_MESSAGE */
    buf_t in;      /* bytes read after the head (the start of the body); conn_serve frees it */
} conn_job_t;

/* Serve job on the calling thread until the answer or the run is over. */
void conn_serve(conn_job_t *job);

#endif
