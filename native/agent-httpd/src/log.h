/* log: one line "agent-httpd: ..." to stderr (stderr is the gateway's log). */
#ifndef LOG_H
#define LOG_H

/* Write one formatted line; cut at 1023 bytes. Never given secrets. */
void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
