/* Unit tests for route.c: what a request head means (token, endpoint, body framing). */
#include "t.h"

#include "../src/route.h"

static const char TOKEN[] = "s3cret-token";

static int route(const char *head, route_t *r) {
    guard_t g;
    size_t n = strlen(head);
    char *p = guard_copy(&g, head, n);
    int rc = route_head(p, n, TOKEN, sizeof TOKEN - 1, r);
    guard_free(&g);
    return rc;
}

#define AUTH "Authorization: Bearer s3cret-token\r\n"

static int error(const char *head, int status, const char *code) {
    route_t r;
    return route(head, &r) == 0 && r.kind == ROUTE_ERROR && r.status == status && strcmp(r.code, code) == 0;
}

static void test_endpoints(void) {
    route_t r;
    const char *h = "GET /healthz HTTP/1.1\r\n" AUTH "\r\n";
    CHECK(route(h, &r) == 0 && r.kind == ROUTE_HEALTH && r.head_len == strlen(h) && !route_has_body(&r));
    CHECK(route("GET /healthz?x=1 HTTP/1.1\r\nauthorization: bearer   s3cret-token\r\n\r\n", &r) == 0 &&
          r.kind == ROUTE_HEALTH);
    CHECK(route("POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 12\r\nExpect: 100-continue\r\n\r\n{", &r) == 0 &&
          r.kind == ROUTE_CHAT && r.content_length == 12 && r.expect_continue && route_has_body(&r));
    CHECK(route("POST /chat HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\n\r\n", &r) == 0 &&
          r.kind == ROUTE_CHAT && r.chunked && !r.expect_continue);
    CHECK(route("POST /runs/run%2Dx.1/cancel HTTP/1.1\r\n" AUTH "\r\n", &r) == 0 && r.kind == ROUTE_CANCEL &&
          strcmp(r.run_id, "run-x.1") == 0);
    CHECK(route("POST /runs/run-m/messages HTTP/1.1\r\n" AUTH "Content-Length: 20\r\n\r\n", &r) == 0 &&
          r.kind == ROUTE_MESSAGE && strcmp(r.run_id, "run-m") == 0 && r.content_length == 20);
    CHECK(route("POST /runs/m/messages HTTP/1.1\r\n" AUTH "\r\n", &r) == 0 && r.kind == ROUTE_MESSAGE &&
          !route_has_body(&r)); /* answered by the thread: a message needs its body */
    CHECK(error("POST /runs//messages HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(error("POST /runs/a/messages/cancel HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(error("POST /runs/messages HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(route("GET /runs/a/messages HTTP/1.1\r\n" AUTH "\r\n", &r) == 0 && r.status == 405);
    CHECK(error("POST /runs/a%00b/cancel HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(error("POST /runs/a/b/cancel HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(error("POST /runs//cancel HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(error("GET /nope HTTP/1.1\r\n" AUTH "\r\n", 404, "not_found"));
    CHECK(route("POST /healthz HTTP/1.1\r\n" AUTH "\r\n", &r) == 0 && r.status == 405 &&
          strcmp(r.extra, "Allow: GET\r\n") == 0);
    CHECK(route("GET /chat HTTP/1.1\r\n" AUTH "\r\n", &r) == 0 && r.status == 405 &&
          strcmp(r.extra, "Allow: POST\r\n") == 0);
}

static void test_token(void) {
    route_t r;
    CHECK(route("GET /healthz HTTP/1.1\r\n\r\n", &r) == 0 && r.status == 401 &&
          strcmp(r.extra, "WWW-Authenticate: Bearer\r\n") == 0);
    CHECK(error("GET /healthz HTTP/1.1\r\nAuthorization: Bearer s3cret-toke\r\n\r\n", 401, "unauthorized"));
    CHECK(error("GET /healthz HTTP/1.1\r\nAuthorization: Bearer s3cret-tokenX\r\n\r\n", 401, "unauthorized"));
    CHECK(error("GET /healthz HTTP/1.1\r\nAuthorization: Basic s3cret-token\r\n\r\n", 401, "unauthorized"));
    CHECK(error("GET /nope HTTP/1.1\r\n\r\n", 401, "unauthorized")); /* the token before the path */
}

static void test_framing(void) {
    CHECK(error("POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", 400,
                "bad_request"));
    CHECK(error("POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 1x\r\n\r\n", 400, "bad_request"));
    CHECK(error("POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 8388609\r\n\r\n", 413, "body_too_large"));
    CHECK(error("POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 99999999999999999999\r\n\r\n", 413,
                "body_too_large"));
    CHECK(error("POST /chat HTTP/1.1\r\n" AUTH "Transfer-Encoding: gzip\r\n\r\n", 400, "bad_request"));
    CHECK(error("POST /chat HTTP/1.1\r\n" AUTH "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", 400,
                "bad_request"));
    route_t r;
    CHECK(route("POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 8388608\r\n\r\n", &r) == 0 &&
          r.kind == ROUTE_CHAT && r.content_length == ROUTE_BODY_MAX);
}

static void test_incomplete_and_bounds(void) {
    const char *h = "POST /chat HTTP/1.1\r\n" AUTH "Content-Length: 2\r\n\r\n{}";
    size_t head = strlen(h) - 2;
    for (size_t k = 0; k <= strlen(h); k++) {
        char part[256];
        memcpy(part, h, k);
        part[k] = '\0';
        route_t r;
        int rc = route(part, &r);
        CHECK(k < head ? rc == -2 : (rc == 0 && r.kind == ROUTE_CHAT && r.head_len == head));
    }
    CHECK(error("\x01\x02 nonsense\r\n\r\n", 400, "bad_request"));
    char *big = malloc(ROUTE_HEAD_MAX + 64);
    strcpy(big, "GET /healthz HTTP/1.1\r\nX: ");
    size_t n = strlen(big);
    memset(big + n, 'a', ROUTE_HEAD_MAX);
    big[n + ROUTE_HEAD_MAX] = '\0';
    CHECK(error(big, 431, "head_too_large")); /* no end in sight */
    strcpy(big + ROUTE_HEAD_MAX, "\r\n\r\n");
    CHECK(error(big, 431, "head_too_large")); /* complete, but too large */
    free(big);
}

int main(void) {
    test_endpoints();
    test_token();
    test_framing();
    test_incomplete_and_bounds();
    return t_finish("test_route");
}
