/* steer: a steering message's body. See steer.h. */
#include "steer.h"

static int id_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == ':' || c == '~';
}

static int fail(const char **err, const char *message, int rc) {
    *err = message;
    return rc;
}

int steer_parse(const char *body, size_t len, steer_msg_t *m, const char **err) {
    m->id = m->text = -1;
    long n = json_parse(body, len, m->t, STEER_TOKS, 4);
    if (n == JSON_NOMEM) return fail(err, "body must be {\"id\", \"text\"}", STEER_BAD);
    if (n < 0) return fail(err, "body is not valid JSON", STEER_BAD);
    const json_tok_t *t = m->t;
    if (t[0].type != JSON_OBJECT) return fail(err, "body must be a JSON object", STEER_BAD);
    long id = json_get(body, t, 0, "id");
    if (id < 0 || t[id].type != JSON_STRING)
        return fail(err, "field 'id' must be a string", STEER_BAD);
    /* an id is plain ASCII: its raw bytes are its characters (an escape is refused) */
    if (t[id].len == 0 || t[id].len > STEER_ID_MAX)
        return fail(err, "field 'id' must be 1..64 characters", STEER_BAD);
    for (uint32_t i = 0; i < t[id].len; i++)
        if (!id_char(body[t[id].start + i]))
            return fail(err, "field 'id' may contain only letters, digits and . _ - : ~", STEER_BAD);
    long text = json_get(body, t, 0, "text");
    if (text < 0 || t[text].type != JSON_STRING || t[text].len == 0)
        return fail(err, "field 'text' must be a non-empty string", STEER_BAD);
    if (t[text].len > STEER_TEXT_MAX)
        return fail(err, "field 'text' exceeds 256 KiB", STEER_TOO_LARGE);
    m->id = id;
    m->text = text;
    return STEER_OK;
}
