/* runs: registry of active runs with cancellation. See runs.h. */
#include "runs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void runs_init(runs_t *r, int max) {
    pthread_mutex_init(&r->mu, NULL);
    r->head = NULL;
    r->count = 0;
    r->max = max;
    r->stopping = 0;
}

void runs_destroy(runs_t *r) { pthread_mutex_destroy(&r->mu); }

static run_t *find(runs_t *r, const char *id, size_t idlen) {
    for (run_t *p = r->head; p; p = p->next)
        if (strlen(p->id) == idlen && memcmp(p->id, id, idlen) == 0) return p;
    return NULL;
}

static void fire(run_t *p) {
    if (atomic_exchange(&p->cancelled, 1)) return;
    char c = 'x';
    ssize_t w = write(p->cancel_wr, &c, 1);
    (void)w; /* the pipe is empty and non-blocking: one byte always fits */
}

int runs_add(runs_t *r, const char *id, size_t idlen, run_t **out) {
    *out = NULL;
    if (idlen == 0 || idlen > RUN_ID_MAX) return RUNS_ERR;
    run_t *p = calloc(1, sizeof *p);
    if (!p) return RUNS_ERR;
    int fds[2];
    if (pipe(fds) != 0) {
        free(p);
        return RUNS_ERR;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
        fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
    }
    p->cancel_rd = fds[0];
    p->cancel_wr = fds[1];
    memcpy(p->id, id, idlen);
    p->id[idlen] = '\0';
    atomic_init(&p->cancelled, 0);
    int rc = RUNS_OK;
    pthread_mutex_lock(&r->mu);
    if (find(r, id, idlen)) rc = RUNS_EXISTS;
    else if (r->stopping || r->count >= r->max) rc = RUNS_FULL;
    else {
        p->next = r->head;
        r->head = p;
        r->count++;
    }
    pthread_mutex_unlock(&r->mu);
    if (rc != RUNS_OK) {
        close(fds[0]);
        close(fds[1]);
        free(p);
        return rc;
    }
    *out = p;
    return RUNS_OK;
}

int runs_cancel(runs_t *r, const char *id, size_t idlen) {
    pthread_mutex_lock(&r->mu);
    run_t *p = find(r, id, idlen);
    if (p) fire(p);
    pthread_mutex_unlock(&r->mu);
    return p ? 0 : -1;
}

void runs_cancel_all(runs_t *r) {
    pthread_mutex_lock(&r->mu);
    r->stopping = 1;
    for (run_t *p = r->head; p; p = p->next) fire(p);
    pthread_mutex_unlock(&r->mu);
}

void runs_remove(runs_t *r, run_t *run) {
    pthread_mutex_lock(&r->mu);
    for (run_t **pp = &r->head; *pp; pp = &(*pp)->next) {
        if (*pp == run) {
            *pp = run->next;
            r->count--;
            break;
        }
    }
    pthread_mutex_unlock(&r->mu);
    close(run->cancel_rd);
    close(run->cancel_wr);
    free(run);
}

int runs_count(runs_t *r) {
    pthread_mutex_lock(&r->mu);
    int n = r->count;
    pthread_mutex_unlock(&r->mu);
    return n;
}

int runs_cancelled(run_t *run) { return atomic_load(&run->cancelled); }
