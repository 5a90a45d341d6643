/* answer: the JSON answers of agent-httpd (everything but the /chat stream). Each answer is
 * one small write with `Connection: close`; on a non-blocking socket it is best effort. */
#ifndef ANSWER_H
#define ANSWER_H

#include <stddef.h>

#include "runs.h"

/* `status` with a JSON body. extra: more header lines ("Name: value\r\n"...), or NULL. */
void answer_json(int fd, int status, const char *extra, const char *body, size_t len);

/* {"error":{"code":code,"message":message}} with `status`. */
void answer_error(int fd, int status, const char *code, const char *message, const char *extra);

/* GET /healthz: {"ok":true,"version","uptime_s","active_runs"}. */
void answer_health(int fd, long uptime_s, int active_runs);

/* POST /runs/{run_id}/cancel: cancel the run, {"ok":true} or 404 no_such_run. */
void answer_cancel(int fd, runs_t *runs, const char *run_id);

#endif
