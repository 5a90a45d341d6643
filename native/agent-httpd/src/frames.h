/* frames: a run's SSE frames to its /chat client, `data: {"t":TYPE,"d":DATA}\n\n`. Once the
 * client is gone nothing more is sent.
 *
 * Text (delta, reasoning) is held back and sent as one frame per channel run: the stream reader
 * calls frames_flush() after each network read, and every other frame flushes it first, so the
 * order of everything stays as it came while a read of many chunks costs one frame, one write. */
#ifndef FRAMES_H
#define FRAMES_H

#include <stddef.h>

#include "buf.h"

typedef struct frames {
    int client;         /* the /chat socket */
    int gone;           /* the client went away */
    const char *run_id; /* for log lines; outlives the frames */
    buf_t d;            /* payload of the frame being built */
    buf_t frame;        /* the frame on the wire */
    buf_t text;         /* text held back (decoded UTF-8, whole characters only) */
    int text_chan;      /* its channel: 0 delta, 1 reasoning */
} frames_t;

void frames_init(frames_t *f, int client, const char *run_id);
void frames_free(frames_t *f);

/* Send the 200 head of the event stream. */
void frames_start(frames_t *f);

/* The payload buffer of the next frame, emptied. */
buf_t *frames_payload(frames_t *f);

/* Send the frame whose payload is in frames_payload(). Returns 0, or -1 once the client is
 * gone. A frame too large to build is dropped (and logged). */
int frames_emit(frames_t *f, const char *type);

/* Add a piece of text to the held-back text of channel chan (0: delta, 1: reasoning); text of
 * the other channel is sent first, and so is the held-back text once it reaches
 * FRAMES_TEXT_FLUSH bytes. Returns 0, or -1 once the client is gone. */
#define FRAMES_TEXT_FLUSH (64u << 10)
int frames_text(frames_t *f, int chan, const char *s, size_t n);

/* Send the held-back text, if any, as one frame. Returns 0, or -1 once the client is gone. */
int frames_flush(frames_t *f);

/* Send an `error` frame {code, message, status?} and log it. Returns AGENT_ERROR. */
int frames_fail(frames_t *f, const char *code, int status, const char *msg, size_t msglen);
int frames_failf(frames_t *f, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* frames_fail with conversation_too_large. */
int frames_too_large(frames_t *f);

#endif
