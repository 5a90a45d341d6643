/* Unit tests for steer.c: the body of POST /runs/{run_id}/messages. */
#include "t.h"

#include "../src/steer.h"

static int parse(const char *body, steer_msg_t *m, const char **err) {
    guard_t g;
    size_t n = strlen(body);
    char *p = guard_copy(&g, body, n);
    int rc = steer_parse(p, n, m, err);
    /* the tokens point into p: check what they say before it goes */
    if (rc == STEER_OK)
        rc = (m->t[m->id].type == JSON_STRING && m->t[m->text].type == JSON_STRING &&
              m->t[m->id].start < n && m->t[m->text].start < n) ? STEER_OK : 99;
    guard_free(&g);
    return rc;
}

static int refused(const char *body, int want, const char *says) {
    steer_msg_t m;
    const char *err = NULL;
    return parse(body, &m, &err) == want && err && strstr(err, says) != NULL;
}

static void test_good(void) {
    steer_msg_t m;
    const char *err = NULL;
    const char *b = "{\"id\":\"msg-1.a:b~c_d\",\"text\":\"use body_mass_g \\u00e9\",\"extra\":[1,{\"x\":2}]}";
    CHECK(parse(b, &m, &err) == STEER_OK && m.t[m.id].len == 13);
    CHECK(parse(" {\"text\":\"x\", \"id\":\"a\"} ", &m, &err) == STEER_OK && m.t[m.text].len == 1);
    char id64[100] = "{\"text\":\"t\",\"id\":\"";
    memset(id64 + strlen(id64), 'a', 64);
    strcpy(id64 + strlen("{\"text\":\"t\",\"id\":\"") + 64, "\"}");
    CHECK(parse(id64, &m, &err) == STEER_OK);
}

static void test_refused(void) {
    CHECK(refused("", STEER_BAD, "not valid JSON"));
    CHECK(refused("{\"id\":\"a\",\"text\":\"b\"", STEER_BAD, "not valid JSON"));
    CHECK(refused("[1]", STEER_BAD, "JSON object"));
    CHECK(refused("{\"text\":\"b\"}", STEER_BAD, "'id'"));
    CHECK(refused("{\"id\":1,\"text\":\"b\"}", STEER_BAD, "'id'"));
    CHECK(refused("{\"id\":\"\",\"text\":\"b\"}", STEER_BAD, "1..64"));
    CHECK(refused("{\"id\":\"a b\",\"text\":\"b\"}", STEER_BAD, "letters"));
    CHECK(refused("{\"id\":\"a\\u0041\",\"text\":\"b\"}", STEER_BAD, "letters"));
    CHECK(refused("{\"id\":\"a\"}", STEER_BAD, "'text'"));
    CHECK(refused("{\"id\":\"a\",\"text\":\"\"}", STEER_BAD, "'text'"));
    CHECK(refused("{\"id\":\"a\",\"text\":null}", STEER_BAD, "'text'"));
    CHECK(refused("{\"id\":\"a\",\"text\":\"b\",\"x\":[[[[[1]]]]]}", STEER_BAD, "{\"id\", \"text\"}"));
    char many[512] = "{\"id\":\"a\",\"text\":\"b\"";
    for (int i = 0; i < 20; i++) sprintf(many + strlen(many), ",\"k%d\":%d", i, i);
    strcat(many, "}");
    CHECK(refused(many, STEER_BAD, "{\"id\", \"text\"}"));
    char id65[100] = "{\"text\":\"t\",\"id\":\"";
    memset(id65 + strlen(id65), 'a', 65);
    strcpy(id65 + strlen("{\"text\":\"t\",\"id\":\"") + 65, "\"}");
    CHECK(refused(id65, STEER_BAD, "1..64"));
    size_t n = STEER_TEXT_MAX + 64;
    char *big = malloc(n);
    strcpy(big, "{\"id\":\"a\",\"text\":\"");
    size_t at = strlen(big);
    memset(big + at, 'x', STEER_TEXT_MAX + 1);
    strcpy(big + at + STEER_TEXT_MAX + 1, "\"}");
    CHECK(refused(big, STEER_TOO_LARGE, "256 KiB"));
    strcpy(big + at + STEER_TEXT_MAX, "\"}");
    steer_msg_t m;
    const char *err;
    CHECK(parse(big, &m, &err) == STEER_OK);
    free(big);
}

/* Every prefix of a good body is refused (never read past its end: the guard page). */
static void test_prefixes(void) {
    const char *b = "{\"id\":\"m1\",\"text\":\"stop plotting\"}";
    for (size_t k = 0; k < strlen(b); k++) {
        char part[64];
        memcpy(part, b, k);
        part[k] = '\0';
        steer_msg_t m;
        const char *err = NULL;
        CHECK(parse(part, &m, &err) == STEER_BAD && err);
    }
}

int main(void) {
    test_good();
    test_refused();
    test_prefixes();
    return t_finish("test_steer");
}
