/* runs: the registry of active runs, so that POST /runs/{id}/cancel can reach a running loop.
 *
 * Each run owns a pipe whose read end becomes readable once the run is cancelled; the loop
 * polls it next to its sockets, so a cancel aborts any in-flight request at once. */
#ifndef RUNS_H
#define RUNS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#define RUN_ID_MAX 128

typedef struct run {
    struct run *next;
    char id[RUN_ID_MAX + 1];
    int cancel_rd; /* poll for POLLIN: readable once cancelled (never drained) */
    int cancel_wr;
    atomic_int cancelled;
} run_t;

typedef struct runs {
    pthread_mutex_t mu;
    run_t *head;
    int count;
    int max;
    int stopping;
} runs_t;

enum { RUNS_OK = 0, RUNS_EXISTS = -1, RUNS_FULL = -2, RUNS_ERR = -3 };

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

#endif
