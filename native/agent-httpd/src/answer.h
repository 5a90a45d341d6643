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

/* POST /runs/{run_id}/messages with body[0..len) `{"id","text"}`: queue a steering message,
 * {"ok":true}; 400 bad_request, 413 message_too_large, 404 no_such_run, 409 run_ending (it
 * starts no more rounds), 429 too_many_messages. */
void answer_message(int fd, runs_t *runs, const char *run_id, const char *body, size_t len);

#endif
