/* server: the loopback HTTP listener of agent-httpd.
 *
 * One thread (the caller of server_run) accepts connections and reads request heads without
 * blocking, all at once; a head must arrive whole within o->head_timeout_ms (10 s by
 * default). Errors, /healthz and cancels
 * are answered right there, so they need no thread and are never refused for lack of one.
 * Only an authorised request with a body (/chat) gets a thread of its own. Connections whose
 * head is not complete yet are capped per client address and in total; at a cap the oldest of
 * them is closed, so idle connections cannot crowd out the gateway's health checks. */
#ifndef SERVER_H
#define SERVER_H

#include "agent.h"

typedef struct server_opts {
    const agent_cfg_t *cfg; /* borrowed for the server's lifetime */
    int port;               /* 0: pick a free port */
    int max_runs;
    int stop_fd;            /* readable => stop accepting and return */
    int head_timeout_ms;    /* a request head must arrive whole within this */
} server_opts_t;

/* Bind 127.0.0.1:port. Returns the listening fd and sets *bound_port, or -1 with a reason in
 * err. */
int server_listen(int port, int *bound_port, char *err, size_t errlen);

/* Serve on listen_fd until o->stop_fd becomes readable; then cancel active runs, wait briefly
 * for connections to finish, close listen_fd and return 0. */
int server_run(const server_opts_t *o, int listen_fd);

#endif
