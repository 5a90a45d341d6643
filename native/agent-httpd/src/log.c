/* log: one line to stderr. See log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

void log_line(const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "agent-httpd: %s\n", line);
}
