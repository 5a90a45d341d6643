/* chat_req: the /chat request contract. See chat_req.h. */
#include "chat_req.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Optional field: -1 if absent or null; -2 if present with the wrong type. */
static long opt_field(const char *b, const json_tok_t *t, const char *name, int type) {
    long v = json_get(b, t, 0, name);
    if (v < 0 || t[v].type == JSON_NULL) return -1;
    return t[v].type == type ? v : -2;
}

static int run_id_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == ':' || c == '~';
}

int chat_req_parse(const char *body, size_t len, chat_req_t *req, char *err, size_t errlen) {
    memset(req, 0, sizeof *req);
    req->body = body;
    req->message = req->history = req->system = req->tools = req->model = -1;
    req->rounds = CHAT_REQ_ROUNDS_DEFAULT;
    long n = json_parse_alloc(body, len, CHAT_REQ_TOKS_MAX, &req->t);
    if (n == JSON_NOMEM) return bad(err, errlen, "body is too deeply nested or too large");
    if (n < 0) return bad(err, errlen, "body is not valid JSON");
    const json_tok_t *t = req->t;
    if (t[0].type != JSON_OBJECT) return bad(err, errlen, "body must be a JSON object");

    static const char *required[] = {"run_id", "message", "model"};
    long *slots[] = {NULL, &req->message, &req->model};
    for (int i = 0; i < 3; i++) {
        long v = json_get(body, t, 0, required[i]);
        if (v < 0) return bad(err, errlen, "missing field '%s'", required[i]);
        if (t[v].type != JSON_STRING) return bad(err, errlen, "field '%s' must be a string", required[i]);
        if (slots[i]) *slots[i] = v;
        else {
            long k = json_str_decode(body, &t[v], req->run_id, RUN_ID_MAX);
            if (k <= 0) return bad(err, errlen, "field 'run_id' must be 1..%d characters", RUN_ID_MAX);
            req->run_id[k] = '\0';
            for (long j = 0; j < k; j++)
                if (!run_id_char(req->run_id[j]))
                    return bad(err, errlen,
                               "field 'run_id' may contain only letters, digits and . _ - : ~");
        }
    }
    if ((req->system = opt_field(body, t, "system", JSON_STRING)) == -2)
        return bad(err, errlen, "field 'system' must be a string");
    if ((req->history = opt_field(body, t, "history", JSON_ARRAY)) == -2)
        return bad(err, errlen, "field 'history' must be an array of chat messages");
    if (req->history >= 0) {
        long e = req->history + 1;
        for (uint32_t i = 0; i < t[req->history].size; i++, e = t[e].end)
            if (t[e].type != JSON_OBJECT)
                return bad(err, errlen, "field 'history[%u]' must be an object", i);
    }
    if ((req->tools = opt_field(body, t, "tools", JSON_ARRAY)) == -2)
        return bad(err, errlen, "field 'tools' must be an array of tool objects");
    if (req->tools >= 0) {
        long e = req->tools + 1;
        for (uint32_t i = 0; i < t[req->tools].size; i++, e = t[e].end) {
            long fn = json_get(body, t, e, "function");
            long nm = fn >= 0 ? json_get(body, t, fn, "name") : -1;
            if (nm < 0 || t[nm].type != JSON_STRING || t[nm].len == 0)
                return bad(err, errlen, "field 'tools[%u].function.name' must be a non-empty string", i);
        }
    }
    long budget = opt_field(body, t, "budget", JSON_OBJECT);
    if (budget == -2) return bad(err, errlen, "field 'budget' must be an object");
    if (budget >= 0) {
        long r = json_get(body, t, budget, "rounds");
        if (r >= 0 && t[r].type != JSON_NULL) {
            long long v;
            if (json_int(body, &t[r], &v) != 0 || v < 1 || v > CHAT_REQ_ROUNDS_MAX)
                return bad(err, errlen, "field 'budget.rounds' must be an integer from 1 to %d",
                           CHAT_REQ_ROUNDS_MAX);
            req->rounds = (int)v;
        }
    }
    return 0;
}

void chat_req_free(chat_req_t *req) {
    free(req->t);
    req->t = NULL;
}

void chat_req_release(chat_req_t *req) {
    chat_req_free(req);
    if (req->body_buf) {
        buf_free(req->body_buf);
        req->body = NULL;
    }
}
