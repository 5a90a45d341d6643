/* agent-httpd: command line, token, signals. See native/README.md for the contract. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "server.h"
#include "slice.h"

static agent_cfg_t cfg; /* the token lives here, nowhere else */
static int stop_pipe[2] = {-1, -1};

static const char usage[] =
    "usage: agent-httpd --port N --inference-url URL --tools-url URL (--token-fd N | --token-file PATH)\n"
    "                   [--inference-timeout SECONDS] [--tool-timeout SECONDS] [--max-runs N]\n"
    "                   [--head-timeout SECONDS]\n"
    "The launch token is read from file descriptor N (a pipe: up to a newline or end of file),\n"
    "or from a mode-0600 file that is removed once read; never from argv or the environment.\n"
    "URLs must be http://127.0.0.1:PORT/path, http://localhost:PORT/path or http://[::1]:PORT/path.\n";

static void die(const char *fmt, const char *arg) {
    fprintf(stderr, "agent-httpd: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    exit(2);
}

static void on_signal(int sig) {
    (void)sig;
    int saved = errno;
    char c = 's';
    ssize_t w = write(stop_pipe[1], &c, 1);
    (void)w;
    errno = saved;
}

static int parse_int(const char *s, int lo, int hi, const char *name) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "agent-httpd: %s must be an integer from %d to %d\n", name, lo, hi);
        exit(2);
    }
    return (int)v;
}

static void set_token(const char *s, size_t n) {
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (n == 0) die("%s", "the launch token is empty");
    if (n > AGENT_TOKEN_MAX) die("%s", "the launch token is longer than 4096 bytes");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            die("%s", "the launch token must be printable ASCII without spaces");
    memcpy(cfg.token, s, n);
    cfg.token[n] = '\0';
    cfg.token_len = n;
}

/* Read the token from fd: up to a newline or end of file, bounded. -1 (errno set) if unreadable. */
static int read_token_from(int fd) {
    char tmp[AGENT_TOKEN_MAX + 8];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, tmp + n, sizeof tmp - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        char *nl = memchr(tmp + n, '\n', (size_t)k);
        n += (size_t)k;
        if (nl) {
            n = (size_t)(nl - tmp);
            break;
        }
        if (n == sizeof tmp) break;
    }
    set_token(tmp, n);
    volatile char *v = tmp;
    for (size_t i = 0; i < sizeof tmp; i++) v[i] = 0;
    return 0;
}

/* The launcher's end of a pipe (or any open descriptor); closed once read. */
static void read_token_fd(const char *arg) {
    int fd = parse_int(arg, 0, 1 << 20, "--token-fd");
    if (fd == 1 || fd == 2) die("%s", "--token-fd cannot be stdout or stderr");
    struct stat st;
    if (fstat(fd, &st) != 0) die("--token-fd %s is not an open file descriptor", arg);
    if (read_token_from(fd) != 0) die("cannot read --token-fd: %s", strerror(errno));
    close(fd);
    if (fd == 0 && open("/dev/null", O_RDONLY) != 0) die("%s", "cannot reopen stdin");
}

/* A per-launch file: refused if group/other may use it, removed once read so that nothing
 * else can read it later. */
static void read_token_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) die("cannot open --token-file: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) die("%s", "--token-file is not a regular file");
    if (st.st_mode & 077)
        die("%s", "--token-file is readable or writable by group/other; chmod 600 it");
    if (read_token_from(fd) != 0) die("cannot read --token-file: %s", strerror(errno));
    close(fd);
    if (unlink(path) != 0) die("cannot remove --token-file once read: %s", strerror(errno));
}

/* Runs need descriptors (client, inference, tools, cancel pipe): use the hard limit. */
static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max) return;
    rlim_t want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
    if (want <= rl.rlim_cur) return;
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
}

typedef struct args {
    int port, max_runs, head_timeout_s;
    const char *inference, *tools, *token_file, *token_fd;
} args_t;

/* The value of option opts[which] at argv[*i] ("--name value" or "--name=value"), or exit 2. */
static const char *option(int argc, char **argv, int *i, int *which) {
    static const char *const opts[] = {"--port",         "--inference-url", "--tools-url",
                                       "--token-file",   "--inference-timeout",
                                       "--tool-timeout", "--max-runs",      "--token-fd",
                                       "--head-timeout"};
    const char *a = argv[*i];
    for (int k = 0; k < (int)(sizeof opts / sizeof *opts); k++) {
        size_t l = strlen(opts[k]);
        if (strncmp(a, opts[k], l) != 0 || (a[l] != '\0' && a[l] != '=')) continue;
        const char *val = a[l] == '=' ? a + l + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
        if (!val) {
            fprintf(stderr, "agent-httpd: %s needs a value\n%s", a, usage);
            exit(2);
        }
        *which = k;
        return val;
    }
    fprintf(stderr, "agent-httpd: unknown argument '%s'\n%s", a, usage);
    exit(2);
}

/* The command line into *o and cfg; --help and --version answer and exit 0, errors exit 2. */
static void parse_args(int argc, char **argv, args_t *o) {
    *o = (args_t){-1, 256, 10, NULL, NULL, NULL, NULL};
    cfg.inference_timeout_s = 120;
    cfg.tool_timeout_s = 900;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            exit(0);
        }
        if (!strcmp(argv[i], "--version")) {
            puts(AGENT_VERSION);
            exit(0);
        }
        int which = -1;
        const char *val = option(argc, argv, &i, &which);
        switch (which) {
        case 0: o->port = parse_int(val, 0, 65535, "--port"); break;
        case 1: o->inference = val; break;
        case 2: o->tools = val; break;
        case 3: o->token_file = val; break;
        case 4: cfg.inference_timeout_s = parse_int(val, 1, 86400, "--inference-timeout"); break;
        case 5: cfg.tool_timeout_s = parse_int(val, 1, 86400, "--tool-timeout"); break;
        case 6: o->max_runs = parse_int(val, 1, 4096, "--max-runs"); break;
        case 7: o->token_fd = val; break;
        case 8: o->head_timeout_s = parse_int(val, 1, 3600, "--head-timeout"); break;
        }
    }
    if (o->port < 0 || !o->inference || !o->tools) {
        fprintf(stderr, "agent-httpd: --port, --inference-url and --tools-url are required\n%s", usage);
        exit(2);
    }
    char err[256];
    if (url_parse(o->inference, strlen(o->inference), &cfg.inference, err, sizeof err) != 0)
        die("--inference-url: %s", err);
    if (url_parse(o->tools, strlen(o->tools), &cfg.tools, err, sizeof err) != 0)
        die("--tools-url: %s", err);
}

static void load_token(const args_t *o) {
    /* The environment is no place for it: /proc/<pid>/environ keeps it whatever we unset. */
    if (getenv("RESOLVE_RUNTIME_TOKEN"))
        die("%s", "RESOLVE_RUNTIME_TOKEN is not read (the environment stays readable in /proc); "
                  "pass the token with --token-fd or --token-file");
    if (o->token_fd && o->token_file) die("%s", "pass either --token-fd or --token-file, not both");
    if (o->token_fd) read_token_fd(o->token_fd);
    else if (o->token_file) read_token_file(o->token_file);
    else die("%s", "no launch token: pass --token-fd N or --token-file PATH (never argv)");
}

/* SIGTERM/SIGINT write to the stop pipe; SIGPIPE is ignored. */
static void handle_signals(void) {
    if (pipe(stop_pipe) != 0) die("pipe: %s", strerror(errno));
    fcntl(stop_pipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(stop_pipe[1], F_SETFD, FD_CLOEXEC);
    fcntl(stop_pipe[1], F_SETFL, O_NONBLOCK);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
#ifdef __linux__
    /* The gateway can exit without stopping us (SIGKILL, or a SIGINT a server without a
       terminal does not handle, as under JupyterHub): then stop too, never linger. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
}

int main(int argc, char **argv) {
#ifdef __linux__
    /* Not dumpable: /proc/<pid>/mem, environ, maps, fd/ and the like become root-only, so
       other processes of the same user (agent code) cannot read the token from memory. */
    prctl(PR_SET_DUMPABLE, 0);
#endif
    args_t o;
    parse_args(argc, argv, &o);
    load_token(&o);
    raise_fd_limit();
    handle_signals();
    int sliced = slice_short(); /* the listener's thread, before the port is announced */

    char err[256];
    int bound = 0;
    int lfd = server_listen(o.port, &bound, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "agent-httpd: %s\n", err);
        return 1;
    }
    printf("{\"port\": %d}\n", bound);
    fflush(stdout);
    log_line("listening on 127.0.0.1:%d (inference %s, tools %s; short slices %s)", bound,
             cfg.inference.host, cfg.tools.host, sliced == 0 ? "on" : "not available");

    server_opts_t so = {&cfg, o.port, o.max_runs, stop_pipe[0], o.head_timeout_s * 1000};
    server_run(&so, lfd);
    log_line("%s", "stopped");
    volatile char *v = cfg.token;
    for (size_t i = 0; i < sizeof cfg.token; i++) v[i] = 0;
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    return 0;
}
