/* conv: the conversation a run sends to inference. See conv.h. */
#include "conv.h"

#include <string.h>

#include "agent_base.h"
#include "log.h"
#include "json.h"

void conv_init(conv_t *c) {
    memset(c, 0, sizeof *c);
    buf_init(&c->msgs, AGENT_CONV_MAX);
    buf_init(&c->tools, AGENT_CONV_MAX);
    buf_init(&c->names, AGENT_CONV_MAX);
}

void conv_free(conv_t *c) {
    buf_free(&c->msgs);
    buf_free(&c->tools);
    buf_free(&c->names);
}

int conv_add(conv_t *c, frames_t *f, const buf_t *m) {
    if (m->err) return frames_too_large(f);
    if (c->nmsgs) buf_putc(&c->msgs, ',');
    buf_append(&c->msgs, m->data, m->len);
    c->nmsgs++;
    return c->msgs.err ? frames_too_large(f) : AGENT_OK;
}

/* {"role":role,"content":<the request's field v>} */
static int add_role(conv_t *c, frames_t *f, buf_t *m, const chat_req_t *q, const char *role, long v) {
    buf_reset(m);
    buf_puts(m, "{\"role\":\"");
    buf_puts(m, role);
    buf_puts(m, "\",\"content\":");
    jw_value(m, q->body, q->t, v);
    buf_putc(m, '}');
    return conv_add(c, f, m);
}

static int setup_tools(conv_t *c, const chat_req_t *q, frames_t *f) {
    const char *b = q->body;
    const json_tok_t *t = q->t;
    jw_value(&c->tools, b, t, q->tools);
    long e = q->tools + 1;
    for (uint32_t i = 0; i < t[q->tools].size; i++, e = t[e].end) {
        long nm = json_get(b, t, json_get(b, t, e, "function"), "name");
        json_str_to_buf(b, &t[nm], &c->names);
        buf_putc(&c->names, '\0');
        c->nnames++;
    }
    return c->tools.err || c->names.err ? frames_too_large(f) : AGENT_OK;
}

int conv_setup(conv_t *c, const chat_req_t *q, frames_t *f, buf_t *m) {
    const json_tok_t *t = q->t;
    buf_putc(&c->msgs, '[');
    if (q->system >= 0 && t[q->system].len > 0 && add_role(c, f, m, q, "system", q->system) != AGENT_OK)
        return AGENT_ERROR;
    if (q->history >= 0) {
        long e = q->history + 1;
        for (uint32_t i = 0; i < t[q->history].size; i++, e = t[e].end) {
            buf_reset(m);
            jw_value(m, q->body, t, e);
            if (conv_add(c, f, m) != AGENT_OK) return AGENT_ERROR;
        }
    }
    if (add_role(c, f, m, q, "user", q->message) != AGENT_OK) return AGENT_ERROR;
    if (q->tools >= 0 && t[q->tools].size > 0) return setup_tools(c, q, f);
    return AGENT_OK;
}

int conv_allows(const conv_t *c, const char *name, size_t n) {
    const char *p = c->names.data;
    for (size_t i = 0; i < c->nnames; i++) {
        size_t l = strlen(p);
        if (l == n && memcmp(p, name, n) == 0) return 1;
        p += l + 1;
    }
    return 0;
}

void conv_list_names(const conv_t *c, buf_t *out) {
    const char *p = c->names.data;
    for (size_t j = 0; j < c->nnames; j++) {
        if (j) buf_puts(out, ", ");
        buf_puts(out, p);
        p += strlen(p) + 1;
    }
    if (!c->nnames) buf_puts(out, "none");
    if (out->err) {
        buf_reset(out);
        buf_puts(out, "(list too long)");
    }
}
