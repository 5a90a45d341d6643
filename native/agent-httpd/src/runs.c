/* runs: registry of active runs with cancellation. See runs.h. */
#include "runs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_base.h"

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
    pthread_mutex_init(&p->msg_mu, NULL);
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
        pthread_mutex_destroy(&p->msg_mu);
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
    run_msg_free(run->msgs);
    pthread_mutex_destroy(&run->msg_mu);
    free(run);
}

int runs_count(runs_t *r) {
    pthread_mutex_lock(&r->mu);
    int n = r->count;
    pthread_mutex_unlock(&r->mu);
    return n;
}

int runs_cancelled(run_t *run) { return atomic_load(&run->cancelled); }

run_msg_t *run_msg_new(void) {
    run_msg_t *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    buf_init(&m->frame, AGENT_CONV_MAX);
    buf_init(&m->user, AGENT_CONV_MAX);
    return m;
}

void run_msg_free(run_msg_t *m) {
    while (m) {
        run_msg_t *next = m->next;
        buf_free(&m->frame);
        buf_free(&m->user);
        free(m);
        m = next;
    }
}

int runs_message(runs_t *r, const char *id, size_t idlen, run_msg_t *m) {
    int rc = RUNS_NONE;
    pthread_mutex_lock(&r->mu); /* held: the run cannot be removed meanwhile */
    run_t *p = find(r, id, idlen);
    if (p) {
        pthread_mutex_lock(&p->msg_mu);
        if (p->msgs_closed || atomic_load(&p->cancelled)) rc = RUNS_CLOSED;
        else if (p->nmsgs >= RUN_MESSAGES_MAX) rc = RUNS_FULL;
        else {
            run_msg_t **tail = &p->msgs;
            while (*tail) tail = &(*tail)->next;
            m->next = NULL;
            *tail = m;
            p->nmsgs++;
            rc = RUNS_OK;
        }
        pthread_mutex_unlock(&p->msg_mu);
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

run_msg_t *runs_take_messages(run_t *run) {
    pthread_mutex_lock(&run->msg_mu);
    run_msg_t *list = run->msgs;
    run->msgs = NULL;
    run->nmsgs = 0;
    pthread_mutex_unlock(&run->msg_mu);
    return list;
}

int runs_messages_waiting(run_t *run, int may_continue) {
    pthread_mutex_lock(&run->msg_mu);
    int waiting = may_continue && run->nmsgs > 0;
    if (!waiting) run->msgs_closed = 1;
    pthread_mutex_unlock(&run->msg_mu);
    return waiting;
}

int runs_close_messages(run_t *run) {
    pthread_mutex_lock(&run->msg_mu);
    run->msgs_closed = 1;
    run_msg_t *left = run->msgs;
    int n = run->nmsgs;
    run->msgs = NULL;
    run->nmsgs = 0;
    pthread_mutex_unlock(&run->msg_mu);
    run_msg_free(left);
    return n;
}
