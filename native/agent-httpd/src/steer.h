/* steer: the body of POST /runs/{run_id}/messages, `{"id","text"}`: a person's message to a
 * running run, delivered at its next round boundary (native/README.md). Pure: no I/O, no
 * allocation; the tokens live in the caller's steer_msg_t. */
#ifndef STEER_H
#define STEER_H

#include <stddef.h>

#include "json.h"

#define STEER_ID_MAX 64               /* bytes of the message's id */
#define STEER_TEXT_MAX (256u << 10)   /* bytes of the text as sent (escaped JSON) */
#define STEER_TOKS 32                 /* a body of more tokens is not {id, text} */

typedef struct steer_msg {
    json_tok_t t[STEER_TOKS];
    long id;   /* token of the id (a string) */
    long text; /* token of the text (a non-empty string) */
} steer_msg_t;

enum { STEER_OK = 0, STEER_BAD = -1, STEER_TOO_LARGE = -2 };

/* Parse body[0..len): an object with a string "id" of 1..STEER_ID_MAX characters from
 * `A-Z a-z 0-9 . _ - : ~` and a non-empty string "text" of at most STEER_TEXT_MAX bytes; other
 * members are ignored. Returns STEER_OK with m filled, else STEER_BAD or STEER_TOO_LARGE with
 * *err a static message naming the field. body must outlive m. */
int steer_parse(const char *body, size_t len, steer_msg_t *m, const char **err);

#endif
