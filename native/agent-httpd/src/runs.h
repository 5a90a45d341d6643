/* runs: the registry of active runs, so that POST /runs/{id}/cancel and /messages can reach a
 * running loop.
 *
 * Each run owns a pipe whose read end becomes readable once the run is cancelled; the loop
 * polls it next to its sockets, so a cancel aborts any in-flight request at once. Each run also
 * holds the steering messages queued for it (at most RUN_MESSAGES_MAX), which its loop takes at
 * the next round boundary; once the loop will start no more rounds the queue is closed, so a
 * message is either delivered or refused, never silently dropped while the run goes on. */
#ifndef RUNS_H
#define RUNS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "buf.h"

#define RUN_ID_MAX 128
#define RUN_MESSAGES_MAX 8

/* A queued steering message: its `message` frame's payload and its user turn, both JSON. */
typedef struct run_msg {
    struct run_msg *next;
    buf_t frame; /* {"id":…,"text":…} */
    buf_t user;  /* {"role":"user","content":…} */
} run_msg_t;

typedef struct run {
    struct run *next;
    char id[RUN_ID_MAX + 1];
    int cancel_rd; /* poll for POLLIN: readable once cancelled (never drained) */
    int cancel_wr;
    atomic_int cancelled;
    pthread_mutex_t msg_mu; /* guards the fields below */
    run_msg_t *msgs;        /* queued, oldest first */
    int nmsgs;
    int msgs_closed;        /* the loop starts no more rounds: refuse new messages */
} run_t;

typedef struct runs {
    pthread_mutex_t mu;
    run_t *head;
    int count;
    int max;
    int stopping;
} runs_t;

enum { RUNS_OK = 0, RUNS_EXISTS = -1, RUNS_FULL = -2, RUNS_ERR = -3, RUNS_NONE = -4, RUNS_CLOSED = -5 };

/* Initialise an empty registry holding at most max runs. */
void runs_init(runs_t *r, int max);

/* Destroy the registry (it must be empty). */
void runs_destroy(runs_t *r);

/* Register run `id` (1..RUN_ID_MAX bytes). Returns RUNS_OK and a new run in *out (owned by the
 * registry until runs_remove), RUNS_EXISTS if that id is active, RUNS_FULL at the limit or
 * while stopping, RUNS_ERR if no pipe could be made. */
int runs_add(runs_t *r, const char *id, size_t idlen, run_t **out);

/* Cancel the active run `id`. Returns 0, or -1 if there is no such run. */
int runs_cancel(runs_t *r, const char *id, size_t idlen);

/* Cancel every active run and refuse new ones (shutdown). */
void runs_cancel_all(runs_t *r);

/* Unregister and free a run returned by runs_add. */
void runs_remove(runs_t *r, run_t *run);

/* Number of active runs. */
int runs_count(runs_t *r);

/* 1 once the run was cancelled. */
int runs_cancelled(run_t *run);

/* Queue message m (from run_msg_new) for the active run `id`. Returns RUNS_OK (the run owns m
 * now), RUNS_NONE if there is no such run, RUNS_CLOSED if it starts no more rounds, RUNS_FULL
 * when RUN_MESSAGES_MAX are queued; on an error the caller still owns m. */
int runs_message(runs_t *r, const char *id, size_t idlen, run_msg_t *m);

/* Take every queued message of run, oldest first (NULL if none); free with run_msg_free. */
run_msg_t *runs_take_messages(run_t *run);

/* At the end of a round: 1 when messages are queued and may_continue (the loop goes on to
 * deliver them), else close the queue and return 0. */
int runs_messages_waiting(run_t *run, int may_continue);

/* Close the queue: messages still in it are freed (never delivered). Returns their number. */
int runs_close_messages(run_t *run);

/* A new message, empty, its buffers bounded by the conversation's limit; NULL on OOM. */
run_msg_t *run_msg_new(void);

/* Free a list of messages. */
void run_msg_free(run_msg_t *m);

#endif
