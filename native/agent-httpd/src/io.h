/* io: the socket helpers every part of agent-httpd shares. */
#ifndef IO_H
#define IO_H

#include <stddef.h>
#include <sys/socket.h>

/* Linux and the BSDs have MSG_NOSIGNAL; where it is missing, main() ignoring SIGPIPE does. */
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

/* Send all n bytes on a socket (no SIGPIPE), retrying on EINTR. Returns 0, or -1 once the
 * peer is gone, the send timed out, or (on a non-blocking socket) its buffer is full. */
int io_write_all(int fd, const char *p, size_t n);

/* Milliseconds on the monotonic clock. */
long long io_now_ms(void);

/* Switch O_NONBLOCK on (1) or off (0). Returns 0 or -1. */
int io_set_nonblocking(int fd, int on);

#endif
