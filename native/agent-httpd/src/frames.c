/* frames: a run's SSE frames to its /chat client. See frames.h. */
#include "frames.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent_base.h"
#include "log.h"
#include "io.h"
#include "json.h"

#define FRAME_MAX (AGENT_CONV_MAX + 4096) /* one frame's payload */

void frames_init(frames_t *f, int client, const char *run_id) {
    f->client = client;
    f->gone = 0;
    f->run_id = run_id;
    buf_init(&f->d, FRAME_MAX);
    buf_init(&f->frame, FRAME_MAX + 64);
    buf_init(&f->text, FRAME_MAX / 2); /* escaped, it must still fit one frame */
    f->text_chan = 0;
}

void frames_free(frames_t *f) {
    buf_free(&f->d);
    buf_free(&f->frame);
    buf_free(&f->text);
}

void frames_start(frames_t *f) {
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Cache-Control: no-cache\r\nConnection: close\r\n"
                               "X-Accel-Buffering: no\r\n\r\n";
    if (io_write_all(f->client, head, sizeof head - 1) != 0) f->gone = 1;
}

buf_t *frames_payload(frames_t *f) {
    buf_reset(&f->d);
    return &f->d;
}

/* Send the frame in f->frame (built by the caller), unless it could not be built. */
static int send_frame(frames_t *f, const char *type, int too_large) {
    buf_t *w = &f->frame;
    if (w->err || too_large) {
        log_line("run=%s frame '%s' too large, dropped", f->run_id, type);
        return 0;
    }
    if (io_write_all(f->client, w->data, w->len) != 0) {
        f->gone = 1;
        return -1;
    }
    return 0;
}

static void frame_head(buf_t *w, const char *type) {
    buf_reset(w);
    buf_puts(w, "data: {\"t\":\"");
    buf_puts(w, type);
    buf_puts(w, "\",\"d\":");
}

int frames_flush(frames_t *f) {
    if (f->gone) return -1;
    if (!f->text.len && !f->text.err) return 0;
    const char *type = f->text_chan ? "reasoning" : "delta";
    buf_t *w = &f->frame;
    frame_head(w, type);
    buf_puts(w, "{\"text\":");
    jw_str(w, f->text.data ? f->text.data : "", f->text.len);
    buf_puts(w, "}}\n\n");
    int too_large = f->text.err;
    buf_reset(&f->text);
    return send_frame(f, type, too_large);
}

int frames_text(frames_t *f, int chan, const char *s, size_t n) {
    if (f->gone) return -1;
    if ((f->text.len && f->text_chan != chan) || f->text.len + n > FRAMES_TEXT_FLUSH)
        if (frames_flush(f) != 0) return -1;
    f->text_chan = chan;
    buf_append(&f->text, s, n); /* past its max: err, and the flush logs the drop */
    return 0;
}

int frames_emit(frames_t *f, const char *type) {
    if (frames_flush(f) != 0) return -1;
    buf_t *w = &f->frame;
    frame_head(w, type);
    buf_append(w, f->d.data ? f->d.data : "null", f->d.data ? f->d.len : 4);
    buf_puts(w, "}\n\n");
    return send_frame(f, type, f->d.err);
}

int frames_fail(frames_t *f, const char *code, int status, const char *msg, size_t msglen) {
    buf_t *d = frames_payload(f);
    buf_puts(d, "{\"code\":");
    jw_cstr(d, code);
    buf_puts(d, ",\"message\":");
    jw_str(d, msg, msglen);
    if (status) buf_printf(d, ",\"status\":%d", status);
    buf_putc(d, '}');
    frames_emit(f, "error");
    log_line("run=%s error=%s%s", f->run_id, code, status ? " (non-200 status)" : "");
    return AGENT_ERROR;
}

int frames_failf(frames_t *f, const char *code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return frames_fail(f, code, 0, msg, strlen(msg));
}

int frames_too_large(frames_t *f) {
    return frames_failf(f, "conversation_too_large", "the conversation exceeds %u MiB",
                        AGENT_CONV_MAX >> 20);
}
