/* server: the loopback listener and the request-head reader. See server.h and native/README.md. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "answer.h"
#include "conn.h"
#include "io.h"
#include "log.h"
#include "route.h"
#include "slice.h"

#define LINGER_MS 2000         /* after an early answer, read what the client still sends */
#define LINGER_MAX (64u << 20)
#define READ_CHUNK 4096
#define ACCEPT_BATCH 64 /* accepts per turn of the loop, so heads already here go first */
#define POOL_MAX 2048   /* connections whose head is not complete yet (and lingering ones) */
#define POOL_MIN 32
#define STACK_SIZE (256 * 1024)
#define LISTEN_BACKLOG 1024 /* hundreds of chats can start at once; the kernel caps it too */

/* A connection the loop holds: its head is being read, or it was answered and lingers. */
typedef struct pend {
    int fd; /* -1: a free slot */
    uint32_t peer;
    int lingering;
    long long deadline_ms;
    size_t scanned; /* bytes of in already searched for a line end */
    size_t drained;
    buf_t in;
} pend_t;

typedef struct srv {
    const server_opts_t *o;
    runs_t runs;
    conn_shared_t sh;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int threads;
    int max_threads;
    pthread_attr_t attr;
    pend_t *pool;
    size_t pool_max, per_client;
    struct pollfd *pfd; /* [0] listener, [1] stop, [2 + i] polled[i] */
    pend_t **polled;
    unsigned long evicted;
    long long evict_logged_ms;
} srv_t;

typedef struct thread_job {
    conn_job_t job;
    srv_t *s;
} thread_job_t;

int server_listen(int port, int *bound_port, char *err, size_t errlen) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
        snprintf(err, errlen, "bind 127.0.0.1:%d: %s", port, strerror(errno));
        close(fd);
        return -1;
    }
    socklen_t al = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &al);
    *bound_port = ntohs(a.sin_port);
    return fd;
}

/* ---- connections the loop holds ----------------------------------------------------- */

static void pend_close(pend_t *p) {
    close(p->fd);
    p->fd = -1;
    buf_free(&p->in);
}

/* Answered early: let the client finish sending (briefly) so it reads the answer instead of
 * a connection reset, then close. */
static void pend_linger(pend_t *p, long long now) {
    shutdown(p->fd, SHUT_WR);
    buf_free(&p->in);
    p->lingering = 1;
    p->drained = 0;
    p->deadline_ms = now + LINGER_MS;
}

static void pend_drain(pend_t *p) {
    char tmp[16384];
    for (int i = 0; i < 4; i++) {
        ssize_t k = recv(p->fd, tmp, sizeof tmp, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k <= 0 || (p->drained += (size_t)k) > LINGER_MAX) {
            pend_close(p);
            return;
        }
    }
}

static void *thread_main(void *arg) {
    thread_job_t *t = arg;
    slice_short(); /* inherited from the listener here (Linux 6.18); asked again all the same */
    srv_t *s = t->s;
    int fd = t->job.fd;
    conn_serve(&t->job);
    close(fd);
    free(t);
    pthread_mutex_lock(&s->mu);
    s->threads--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Give an authorised request with a body (a chat) a thread of its own. */
static void handoff(srv_t *s, pend_t *p, const route_t *rt, long long now) {
    pthread_mutex_lock(&s->mu);
    int full = s->threads >= s->max_threads;
    if (!full) s->threads++;
    pthread_mutex_unlock(&s->mu);
    if (full) {
        answer_error(p->fd, 503, "busy", "too many connections", NULL);
        pend_linger(p, now);
        return;
    }
    thread_job_t *t = malloc(sizeof *t);
    pthread_t th;
    if (t) {
        t->s = s;
        t->job.sh = &s->sh;
        t->job.fd = p->fd;
        t->job.route = *rt;
        t->job.in = p->in; /* moved: the thread owns the bytes after the head */
        buf_consume(&t->job.in, rt->head_len);
    }
    if (t && io_set_nonblocking(p->fd, 0) == 0 && pthread_create(&th, &s->attr, thread_main, t) == 0) {
        buf_init(&p->in, 0);
        p->fd = -1;
        return;
    }
    free(t); /* the buffer still belongs to p */
    answer_error(p->fd, 503, "busy", "cannot start a thread for this request", NULL);
    pend_close(p);
    pthread_mutex_lock(&s->mu);
    s->threads--;
    pthread_mutex_unlock(&s->mu);
}

/* A whole head was routed: answer it here, or hand it over. */
static void dispatch(srv_t *s, pend_t *p, const route_t *rt, long long now) {
    if (rt->kind == ROUTE_ERROR) {
        answer_error(p->fd, rt->status, rt->code, rt->message, rt->extra[0] ? rt->extra : NULL);
    } else if (rt->kind == ROUTE_CHAT || rt->kind == ROUTE_MESSAGE || route_has_body(rt)) {
        handoff(s, p, rt, now);
        return;
    } else if (rt->kind == ROUTE_HEALTH) {
        answer_health(p->fd, (long)((now - s->sh.start_ms) / 1000), runs_count(&s->runs));
    } else {
        answer_cancel(p->fd, &s->runs, rt->run_id);
    }
    pend_linger(p, now);
}

/* Read what arrived of p's head; once it is whole, dispatch it. */
static void pend_read(srv_t *s, pend_t *p, long long now) {
    const agent_cfg_t *cfg = s->o->cfg;
    for (;;) {
        char *dst = buf_reserve(&p->in, READ_CHUNK);
        if (!dst) { /* cannot happen below ROUTE_HEAD_MAX; out of memory */
            pend_close(p);
            return;
        }
        ssize_t k = recv(p->fd, dst, READ_CHUNK, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (k <= 0) {
            pend_close(p);
            return;
        }
        p->in.len += (size_t)k;
        p->in.data[p->in.len] = '\0';
        /* parse again only once a new line has arrived */
        int line = memchr(p->in.data + p->scanned, '\n', p->in.len - p->scanned) != NULL;
        p->scanned = p->in.len;
        if (!line && p->in.len < ROUTE_HEAD_MAX) continue;
        route_t rt;
        if (route_head(p->in.data, p->in.len, cfg->token, cfg->token_len, &rt) == -2) continue;
        dispatch(s, p, &rt, now);
        return;
    }
}

/* The held connection nearest its deadline, among peer's when peer is given; *count says how
 * many there are and *free_slot is a free slot, or NULL when the pool is full. */
static pend_t *nearest(srv_t *s, const uint32_t *peer, size_t *count, pend_t **free_slot) {
    pend_t *first = NULL;
    *count = 0;
    *free_slot = NULL;
    for (size_t i = 0; i < s->pool_max; i++) {
        pend_t *p = &s->pool[i];
        if (p->fd < 0) {
            if (!*free_slot) *free_slot = p;
        } else if (!peer || p->peer == *peer) {
            ++*count;
            if (!first || p->deadline_ms < first->deadline_ms) first = p;
        }
    }
    return first;
}

static void evict(srv_t *s, pend_t *p, long long now) {
    pend_close(p);
    if (s->evicted++ == 0 || now - s->evict_logged_ms >= 10000) {
        log_line("too many unfinished requests: closed %lu idle connection(s) so far", s->evicted);
        s->evict_logged_ms = now;
    }
}

/* A slot for a new connection from peer. Over the per-client cap, or with the pool full, the
 * held connection nearest its deadline is closed (an idle one: a fresh head is read at once),
 * so a flood of idle connections cannot keep a health check out. */
static pend_t *pool_slot(srv_t *s, uint32_t peer, long long now) {
    size_t mine, all;
    pend_t *free_slot;
    pend_t *victim = nearest(s, &peer, &mine, &free_slot);
    if (mine < s->per_client) victim = free_slot ? NULL : nearest(s, NULL, &all, &free_slot);
    if (!victim) return free_slot;
    evict(s, victim, now);
    return victim;
}

static void admit(srv_t *s, int fd, uint32_t peer, long long now) {
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (io_set_nonblocking(fd, 1) != 0) {
        close(fd);
        return;
    }
    int one = 1; /* frames are small and latency matters: no Nagle delay */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct timeval tv = {60, 0}; /* a stalled reader cannot pin a chat thread forever */
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    pend_t *p = pool_slot(s, peer, now);
    p->fd = fd;
    p->peer = peer;
    p->lingering = 0;
    p->deadline_ms = now + s->o->head_timeout_ms; /* for the whole head, however it trickles in */
    p->scanned = p->drained = 0;
    buf_init(&p->in, ROUTE_HEAD_MAX + READ_CHUNK);
    pend_read(s, p, now); /* the head is usually here already */
}

static void accept_some(srv_t *s, int lfd, long long now) {
    for (int i = 0; i < ACCEPT_BATCH; i++) {
        struct sockaddr_in a;
        socklen_t al = sizeof a;
        memset(&a, 0, sizeof a);
        int fd = accept(lfd, (struct sockaddr *)&a, &al);
        if (fd >= 0) {
            admit(s, fd, ntohl(a.sin_addr.s_addr), now);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE) {
            size_t all;
            pend_t *free_slot, *v = nearest(s, NULL, &all, &free_slot);
            if (v) { /* out of descriptors: the idlest held connection gives up its own */
                evict(s, v, now);
                continue;
            }
            struct timespec ts = {0, 50 * 1000000};
            nanosleep(&ts, NULL);
        }
        return;
    }
}

/* Close held connections past their deadline: a head that did not arrive whole in time
 * gets a 408; a lingering one is done. */
static void expire(srv_t *s, long long now) {
    char msg[80];
    snprintf(msg, sizeof msg, "the request head did not arrive within %d s", s->o->head_timeout_ms / 1000);
    for (size_t i = 0; i < s->pool_max; i++) {
        pend_t *p = &s->pool[i];
        if (p->fd < 0 || p->deadline_ms > now) continue;
        if (!p->lingering) answer_error(p->fd, 408, "request_timeout", msg, NULL);
        pend_close(p);
    }
}

static long long next_deadline(srv_t *s) {
    long long first = -1;
    for (size_t i = 0; i < s->pool_max; i++)
        if (s->pool[i].fd >= 0 && (first < 0 || s->pool[i].deadline_ms < first)) first = s->pool[i].deadline_ms;
    return first;
}

/* One turn: wait for the listener, a held connection or a deadline, then serve them.
 * Returns -1 once asked to stop. */
static int turn(srv_t *s, int lfd) {
    size_t n = 0;
    s->pfd[0] = (struct pollfd){lfd, POLLIN, 0};
    s->pfd[1] = (struct pollfd){s->o->stop_fd, POLLIN, 0};
    for (size_t i = 0; i < s->pool_max; i++) {
        if (s->pool[i].fd < 0) continue;
        s->pfd[2 + n] = (struct pollfd){s->pool[i].fd, POLLIN, 0};
        s->polled[n++] = &s->pool[i];
    }
    long long deadline = next_deadline(s), wait = -1;
    if (deadline >= 0) {
        wait = deadline - io_now_ms();
        wait = wait < 0 ? 0 : wait > 60000 ? 60000 : wait;
    }
    int r = poll(s->pfd, (nfds_t)(n + 2), (int)wait);
    if (r < 0 && errno == EINTR) return 0;
    if (r < 0 || s->pfd[1].revents) return -1;
    long long now = io_now_ms();
    for (size_t i = 0; i < n; i++) {
        pend_t *p = s->polled[i];
        if (!s->pfd[2 + i].revents || p->fd != s->pfd[2 + i].fd) continue;
        if (p->lingering) pend_drain(p);
        else pend_read(s, p, now);
    }
    expire(s, now);
    if (s->pfd[0].revents) accept_some(s, lfd, now);
    return 0;
}

static size_t pool_size(void) {
    struct rlimit rl;
    size_t n = POOL_MAX; /* and a quarter of the descriptors at most: runs need theirs */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur / 4 < n)
        n = (size_t)(rl.rlim_cur / 4);
    return n < POOL_MIN ? POOL_MIN : n;
}

static int srv_init(srv_t *s, const server_opts_t *o) {
    memset(s, 0, sizeof *s);
    s->o = o;
    s->max_threads = o->max_runs + 64;
    s->pool_max = pool_size();
    s->per_client = s->pool_max / 2;
    s->pool = calloc(s->pool_max, sizeof *s->pool);
    s->pfd = calloc(s->pool_max + 2, sizeof *s->pfd);
    s->polled = calloc(s->pool_max, sizeof *s->polled);
    if (!s->pool || !s->pfd || !s->polled) return -1;
    for (size_t i = 0; i < s->pool_max; i++) s->pool[i].fd = -1;
    runs_init(&s->runs, o->max_runs);
    s->sh = (conn_shared_t){o->cfg, &s->runs, o->stop_fd, io_now_ms()};
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_attr_init(&s->attr);
    pthread_attr_setstacksize(&s->attr, STACK_SIZE);
    pthread_attr_setdetachstate(&s->attr, PTHREAD_CREATE_DETACHED);
    return 0;
}

int server_run(const server_opts_t *o, int listen_fd) {
    srv_t s;
    if (srv_init(&s, o) != 0 || io_set_nonblocking(listen_fd, 1) != 0) {
        log_line("%s", "cannot set up the listener (out of memory?)");
        free(s.pool);
        free(s.pfd);
        free(s.polled);
        close(listen_fd);
        return -1;
    }
    while (turn(&s, listen_fd) == 0) {
    }
    close(listen_fd);
    for (size_t i = 0; i < s.pool_max; i++)
        if (s.pool[i].fd >= 0) pend_close(&s.pool[i]);
    free(s.pool);
    free(s.pfd);
    free(s.polled);
    runs_cancel_all(&s.runs);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 3;
    pthread_mutex_lock(&s.mu);
    while (s.threads > 0)
        if (pthread_cond_timedwait(&s.cv, &s.mu, &deadline) != 0) break;
    int left = s.threads;
    pthread_mutex_unlock(&s.mu);
    pthread_attr_destroy(&s.attr);
    if (left) {
        log_line("stopping with %d connection(s) still open", left);
        return 0; /* threads still use s: do not destroy it; the process exits next */
    }
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    runs_destroy(&s.runs);
    return 0;
}
