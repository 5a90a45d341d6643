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
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "server.h"

static agent_cfg_t cfg; /* the token lives here, nowhere else */
static int stop_pipe[2] = {-1, -1};

static const char usage[] =
    "usage: agent-httpd --port N --inference-url URL --tools-url URL [--token-file PATH]\n"
    "                   [--inference-timeout SECONDS] [--tool-timeout SECONDS] [--max-runs N]\n"
    "The launch token comes from $RESOLVE_RUNTIME_TOKEN or --token-file (mode 0600), never argv.\n"
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

static void read_token_file(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("cannot open --token-file: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) die("%s", "--token-file is not a regular file");
    if (st.st_mode & 077)
        die("%s", "--token-file is readable or writable by group/other; chmod 600 it");
    char tmp[AGENT_TOKEN_MAX + 8];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, tmp + n, sizeof tmp - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) die("cannot read --token-file: %s", strerror(errno));
        if (k == 0 || (n += (size_t)k) == sizeof tmp) break;
    }
    close(fd);
    set_token(tmp, n);
    volatile char *v = tmp;
    for (size_t i = 0; i < sizeof tmp; i++) v[i] = 0;
}

int main(int argc, char **argv) {
    int port = -1, max_runs = 256;
    const char *inf = NULL, *tools = NULL, *token_file = NULL;
    cfg.inference_timeout_s = 120;
    cfg.tool_timeout_s = 900;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            puts(AGENT_VERSION);
            return 0;
        }
        static const char *const opts[] = {"--port", "--inference-url", "--tools-url", "--token-file",
                                           "--inference-timeout", "--tool-timeout", "--max-runs"};
        int which = -1;
        for (int k = 0; k < 7; k++) {
            size_t l = strlen(opts[k]);
            if (!strncmp(a, opts[k], l) && (a[l] == '\0' || a[l] == '=')) {
                which = k;
                val = a[l] == '=' ? a + l + 1 : (i + 1 < argc ? argv[++i] : NULL);
                break;
            }
        }
        if (which < 0) {
            fprintf(stderr, "agent-httpd: unknown argument '%s'\n%s", a, usage);
            return 2;
        }
        if (!val) {
            fprintf(stderr, "agent-httpd: %s needs a value\n%s", a, usage);
            return 2;
        }
        switch (which) {
        case 0: port = parse_int(val, 0, 65535, "--port"); break;
        case 1: inf = val; break;
        case 2: tools = val; break;
        case 3: token_file = val; break;
        case 4: cfg.inference_timeout_s = parse_int(val, 1, 86400, "--inference-timeout"); break;
        case 5: cfg.tool_timeout_s = parse_int(val, 1, 86400, "--tool-timeout"); break;
        case 6: max_runs = parse_int(val, 1, 4096, "--max-runs"); break;
        }
    }
    if (port < 0 || !inf || !tools) {
        fprintf(stderr, "agent-httpd: --port, --inference-url and --tools-url are required\n%s", usage);
        return 2;
    }
    char err[256];
    if (url_parse(inf, strlen(inf), &cfg.inference, err, sizeof err) != 0)
        die("--inference-url: %s", err);
    if (url_parse(tools, strlen(tools), &cfg.tools, err, sizeof err) != 0) die("--tools-url: %s", err);

    const char *env = getenv("RESOLVE_RUNTIME_TOKEN");
    if (env && *env) set_token(env, strlen(env));
    unsetenv("RESOLVE_RUNTIME_TOKEN");
    if (!cfg.token_len && token_file) read_token_file(token_file);
    if (!cfg.token_len)
        die("%s", "no launch token: set RESOLVE_RUNTIME_TOKEN or pass --token-file (never argv)");

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

    int bound = 0;
    int lfd = server_listen(port, &bound, err, sizeof err);
    if (lfd < 0) {
        fprintf(stderr, "agent-httpd: %s\n", err);
        return 1;
    }
    printf("{\"port\": %d}\n", bound);
    fflush(stdout);
    agent_log("listening on 127.0.0.1:%d (inference %s, tools %s)", bound, cfg.inference.host,
              cfg.tools.host);

    server_opts_t o = {&cfg, port, max_runs, stop_pipe[0]};
    server_run(&o, lfd);
    agent_log("%s", "stopped");
    volatile char *v = cfg.token;
    for (size_t i = 0; i < sizeof cfg.token; i++) v[i] = 0;
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    return 0;
}
