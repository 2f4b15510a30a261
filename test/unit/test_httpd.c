/**
 * @file test_httpd.c
 * The HTTP server (apps/lib/httpd.c):
 *  - the request parser alone: valid heads (split at every byte gives the
 *    same result), the error statuses of malformed heads, every prefix of
 *    a valid head is incomplete, and random input (also byte by byte)
 *    never crashes and always gives the same verdict;
 *  - the server against a client stack on the simulated wire: 200 with
 *    the table's bytes, 404, 405 with Allow (body skipped, connection
 *    kept), 400 and 413 (connection closed), HEAD without body, keep-alive
 *    (two requests on one connection), pipelining (in order), HTTP/1.0,
 *    Connection: close, the 1 MiB generated file byte-exact, /status and
 *    /status.json (JSON validated), every prefix of a request and random
 *    bytes on connections, the connection limit, the idle timeout and 408;
 *    the request deadline against a head sent byte by byte, and slowloris
 *    from two addresses on every record with 10 legitimate GETs (10/10
 *    served; 0/10 with the defences off), the per-source cap.
 * Every test ends with the pools of both stacks back at zero.
 */
#include "testutil.h"
#include "simwire.h"
#include "httpd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================== parser */

static const char valid_req[] = "GET /index.html?x=1 HTTP/1.1\r\n"
                                "Host: 198.18.0.2:80\r\n"
                                "User-Agent: test/1.0\r\n"
                                "Accept: */*\r\n"
                                "Connection: foo, Keep-Alive ,close\r\n"
                                "Content-Length: 3\r\n"
                                "\r\n"
                                "abc";

static enum wisp_http_pres parse_all(struct wisp_http_parser *p, const char *s, size_t len, uint32_t *used)
{
    wisp_http_parser_init(p);
    return wisp_http_parse(p, (const uint8_t *)s, (uint32_t)len, used);
}

/* Byte by byte: the verdict, status and bytes used must be the same. */
static enum wisp_http_pres parse_bytewise(struct wisp_http_parser *p, const uint8_t *s, size_t len, uint32_t *used)
{
    size_t i;
    wisp_http_parser_init(p);
    for (i = 0; i < len; i++) {
        uint32_t u;
        enum wisp_http_pres r = wisp_http_parse(p, s + i, 1, &u);
        assert_int_equal(u, 1);
        if (r != WISP_HTTP_MORE) {
            *used = (uint32_t)i + 1u;
            return r;
        }
    }
    *used = (uint32_t)len;
    return WISP_HTTP_MORE;
}

static void test_parser_valid(void **state)
{
    struct wisp_http_parser p, q;
    size_t head = strlen(valid_req) - 3u, cut;
    uint32_t used;
    (void)state;
    assert_int_equal(parse_all(&p, valid_req, strlen(valid_req), &used), WISP_HTTP_DONE);
    assert_int_equal(used, head);   /* the body is not part of the head */
    assert_int_equal(p.req.method, WISP_HTTP_M_GET);
    assert_string_equal(p.req.target, "/index.html?x=1");
    assert_int_equal(p.req.ver_major, 1);
    assert_int_equal(p.req.ver_minor, 1);
    assert_int_equal(p.req.hosts, 1);
    assert_int_equal(p.req.conn_close, 1);
    assert_int_equal(p.req.conn_keepalive, 1);
    assert_int_equal(p.req.has_cl, 1);
    assert_int_equal(p.req.content_length, 3);
    assert_int_equal(p.fields, 5);
    /* after DONE the parser stays done */
    assert_int_equal(wisp_http_parse(&p, (const uint8_t *)"x", 1, &used), WISP_HTTP_DONE);
    assert_int_equal(used, 0);

    /* split in two at every position: the same request */
    for (cut = 0; cut <= head; cut++) {
        uint32_t u1, u2;
        wisp_http_parser_init(&q);
        assert_int_equal(wisp_http_parse(&q, (const uint8_t *)valid_req, (uint32_t)cut, &u1),
                         cut == head ? WISP_HTTP_DONE : WISP_HTTP_MORE);
        assert_int_equal(u1, cut);
        if (cut < head) {
            assert_int_equal(wisp_http_parse(&q, (const uint8_t *)valid_req + cut, (uint32_t)(head + 3u - cut), &u2),
                             WISP_HTTP_DONE);
            assert_int_equal(u1 + u2, head);
        }
        assert_memory_equal(&q.req, &p.req, sizeof(p.req));
    }
    /* every proper prefix is incomplete (never an error, never done) */
    for (cut = 0; cut < head; cut++) {
        assert_int_equal(parse_all(&q, valid_req, cut, &used), WISP_HTTP_MORE);
        assert_int_equal(used, cut);
    }

    /* HEAD, HTTP/1.0 without Host, leading empty lines, absolute-form */
    assert_int_equal(parse_all(&p, "\r\n\r\nHEAD / HTTP/1.0\r\n\r\n", 23, &used), WISP_HTTP_DONE);
    assert_int_equal(p.req.method, WISP_HTTP_M_HEAD);
    assert_int_equal(p.req.ver_minor, 0);
    assert_int_equal(p.req.hosts, 0);
    {
        static const char r2[] = "POST http://x/a HTTP/1.1\r\nhOsT:x\r\ncontent-length:   0  \r\nX-Empty:\r\n\r\n";
        assert_int_equal(parse_all(&p, r2, strlen(r2), &used), WISP_HTTP_DONE);
        assert_int_equal(p.req.method, WISP_HTTP_M_OTHER);
        assert_string_equal(p.req.target, "http://x/a");
        assert_int_equal(p.req.has_cl, 1);
        assert_int_equal(p.req.content_length, 0);
    }
}

struct bad_case {
    const char *req;
    unsigned status;
};

static void test_parser_errors(void **state)
{
    static const struct bad_case cases[] = {
        { "GET / HTTP/1.1\r\n\r\n", 400 },                                    /* 1.1 without Host */
        { "GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", 400 },              /* two Host */
        { "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400 },                       /* bad Host */
        { "GET  / HTTP/1.1\r\n", 400 },                                       /* empty target */
        { " GET / HTTP/1.1\r\n", 400 },
        { "GET / HTTP/1.1 \r\n", 400 },
        { "GET /\r\n", 400 },                                                 /* HTTP/0.9 */
        { "GET / http/1.1\r\n", 400 },                                        /* case-sensitive name */
        { "GET / HTTP/1.x\r\n", 400 },
        { "GET / HTTP/2.0\r\n", 505 },
        { "GET / HTTP/0.9\r\n", 505 },
        { "GET / HTTP/1.1\nHost: a\n\n", 400 },                               /* bare LF */
        { "GET / HTTP/1.1\rHost: a\r\n\r\n", 400 },                           /* bare CR */
        { "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400 },                        /* space before colon */
        { "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400 },              /* obs-fold */
        { "GET / HTTP/1.1\r\n Host: a\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nX: a\001b\r\n\r\n", 400 },            /* control in value */
        { "GET / HTTP/1.1\r\nHost: a\r\nX: a\000b\r\n\r\n", 400 },            /* NUL (cut at the NUL) */
        { "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\n: empty\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 4097\r\n\r\n", 413 },
        { "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413 },
        { "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501 },
        { "GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nConnection: close;x\r\n\r\n", 400 },
        { "GET / HTTP/1.1\r\nHost: a\r\nConnection: a b\r\n\r\n", 400 },
        { "VERYLONGMETHODNAMEXYZ / HTTP/1.1\r\n", 501 },
        { "G(T / HTTP/1.1\r\n", 400 },
        { "GET /a\x7f HTTP/1.1\r\n", 400 },
        { "\r\r\n", 400 },
        { "\x80GET", 400 },
    };
    struct wisp_http_parser p, q;
    unsigned i;
    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = strlen(cases[i].req);
        uint32_t used, used2;
        if (i == 17) {
            len = 30;   /* through the NUL */
        }
        enum wisp_http_pres r = parse_all(&p, cases[i].req, len, &used);
        if (r != WISP_HTTP_ERROR || p.status != cases[i].status) {
            fail_msg("case %u (%s): result %d status %u, want error %u", i, cases[i].req, (int)r,
                     (unsigned)p.status, cases[i].status);
        }
        assert_true(used >= 1 && used <= len);
        assert_int_equal(parse_bytewise(&q, (const uint8_t *)cases[i].req, len, &used2), WISP_HTTP_ERROR);
        assert_int_equal(q.status, p.status);
        assert_int_equal(used2, used);
        /* the parser stays in error */
        assert_int_equal(wisp_http_parse(&p, (const uint8_t *)"GET", 3, &used), WISP_HTTP_ERROR);
    }
    /* bounds: target, head size, field count */
    {
        static char big[8192];
        uint32_t used;
        size_t n;
        memset(big, 0, sizeof big);
        strcpy(big, "GET /");
        memset(big + 5, 'a', WISP_HTTPD_PATH_MAX);
        strcat(big, " HTTP/1.1\r\n");
        assert_int_equal(parse_all(&p, big, strlen(big), &used), WISP_HTTP_ERROR);
        assert_int_equal(p.status, 414);
        /* a target of exactly WISP_HTTPD_PATH_MAX is fine */
        memset(big, 0, sizeof big);
        strcpy(big, "GET /");
        memset(big + 5, 'a', WISP_HTTPD_PATH_MAX - 1);
        strcat(big, " HTTP/1.1\r\nHost: h\r\n\r\n");
        assert_int_equal(parse_all(&p, big, strlen(big), &used), WISP_HTTP_DONE);
        assert_int_equal(p.req.target_len, WISP_HTTPD_PATH_MAX);

        memset(big, 0, sizeof big);
        strcpy(big, "GET / HTTP/1.1\r\nHost: h\r\nX-Big: ");
        n = strlen(big);
        memset(big + n, 'v', WISP_HTTPD_HDR_MAX);
        strcat(big, "\r\n\r\n");
        assert_int_equal(parse_all(&p, big, strlen(big), &used), WISP_HTTP_ERROR);
        assert_int_equal(p.status, 431);
        assert_int_equal(used, WISP_HTTPD_HDR_MAX + 1u);

        memset(big, 0, sizeof big);
        strcpy(big, "GET / HTTP/1.1\r\nHost: h\r\n");
        for (i = 0; i < WISP_HTTPD_MAX_FIELDS; i++) {
            strcat(big, "A: b\r\n");
        }
        strcat(big, "\r\n");
        assert_int_equal(parse_all(&p, big, strlen(big), &used), WISP_HTTP_ERROR);
        assert_int_equal(p.status, 431);
    }
}

/* Random input: never a crash or a read past the input (ASan), and the
 * same verdict, status and length whole or byte by byte. Half of the
 * inputs are made of HTTP-like pieces so that the parser gets deep. */
static void test_parser_random(void **state)
{
    static const char *const pieces[] = { "GET ", "HEAD ", "POST ", "/", "/index.html", " HTTP/1.1", " HTTP/1.0",
                                          "\r\n", "\r", "\n", "Host: a", "Host:", "Content-Length: 12",
                                          "Connection: close", "Transfer-Encoding: x", ": ", " ", "\t", "x",
                                          ",", "\x80", "\0", "9999999999" };
    struct sim_rng rng;
    uint8_t buf[600];
    unsigned iter, done = 0, errors = 0;
    (void)state;
    sim_rng_seed(&rng, 7);
    for (iter = 0; iter < 60000u; iter++) {
        struct wisp_http_parser p, q;
        uint32_t len = 0, u1, u2;
        enum wisp_http_pres r1, r2;
        if (iter % 3u == 0u) {
            len = (uint32_t)sim_rng_below(&rng, sizeof buf);
            for (u1 = 0; u1 < len; u1++) {
                buf[u1] = (uint8_t)sim_rng_next(&rng);
            }
        } else if (iter % 3u == 1u) {
            while (len < sizeof buf - 20u) {
                const char *pc = pieces[sim_rng_below(&rng, sizeof pieces / sizeof pieces[0])];
                size_t n = (*pc == '\0') ? 1u : strlen(pc);
                memcpy(buf + len, pc, n);
                len += (uint32_t)n;
                if (sim_rng_below(&rng, 12) == 0) {
                    break;
                }
            }
        } else {
            /* a valid head with 0..3 mutations (a byte replaced, removed
             * or doubled) */
            unsigned m, nm = (unsigned)sim_rng_below(&rng, 4);
            len = (uint32_t)strlen(valid_req);
            memcpy(buf, valid_req, len);
            for (m = 0; m < nm && len > 1u; m++) {
                uint32_t at = (uint32_t)sim_rng_below(&rng, len);
                switch (sim_rng_below(&rng, 3)) {
                case 0:
                    buf[at] = (uint8_t)sim_rng_next(&rng);
                    break;
                case 1:
                    memmove(buf + at, buf + at + 1, len - at - 1u);
                    len--;
                    break;
                default:
                    memmove(buf + at + 1, buf + at, len - at);
                    len++;
                    break;
                }
            }
        }
        wisp_http_parser_init(&p);
        r1 = wisp_http_parse(&p, buf, len, &u1);
        r2 = parse_bytewise(&q, buf, len, &u2);
        assert_int_equal(r1, r2);
        assert_int_equal(u1, u2);
        assert_int_equal(p.status, q.status);
        assert_true(u1 <= len);
        if (r1 == WISP_HTTP_DONE) {
            done++;
            assert_true(p.req.target_len <= WISP_HTTPD_PATH_MAX);
            assert_int_equal(strlen(p.req.target), p.req.target_len);
        } else if (r1 == WISP_HTTP_ERROR) {
            errors++;
            assert_true(p.status >= 400 && p.status <= 505);
            assert_true(wisp_http_reason(p.status)[0] != '\0');
        }
    }
    print_message("  random heads: %u complete, %u errors of %u\n", done, errors, iter);
    /* the generator reaches all three outcomes */
    assert_true(done > 10);
    assert_true(errors > 1000);
}

/* ============================================================== server */

#define SRV_PORT 80

/* A raw-API client on the second stack that records every byte. */
struct hc {
    struct sim_world *w;
    struct wisp_tcp_pcb *pcb;
    uint8_t *rx;
    size_t rx_len, rx_cap;
    bool connected, fin, errd;
    wisp_err_t err;
    bool no_window;            /* do not reopen the window (a client that does not read) */
};

struct ht {
    struct sim_world *w;
    struct sim_node *cli, *srv;
    struct wisp_httpd *h;
};

static wisp_err_t hc_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct hc *c = (struct hc *)arg;
    (void)err;
    if (p == NULL) {
        c->fin = true;
        return WISP_OK;
    }
    if (c->rx_len + p->tot_len > c->rx_cap) {
        c->rx_cap = (c->rx_len + p->tot_len) * 2u;
        c->rx = (uint8_t *)realloc(c->rx, c->rx_cap);
        assert_non_null(c->rx);
    }
    c->rx_len += wisp_pbuf_copy_out(p, c->rx + c->rx_len, p->tot_len, 0);
    if (!c->no_window) {
        wisp_tcp_recved(pcb, p->tot_len);
    }
    wisp_pbuf_free(p);
    return WISP_OK;
}

static void hc_errf(void *arg, wisp_err_t err)
{
    struct hc *c = (struct hc *)arg;
    c->errd = true;
    c->err = err;
    c->pcb = NULL;
}

static wisp_err_t hc_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    (void)pcb;
    ((struct hc *)arg)->connected = (err == WISP_OK);
    return WISP_OK;
}

static bool hc_is_connected(void *arg)
{
    struct hc *c = (struct hc *)arg;
    return c->connected || c->errd;
}

static void hc_open(struct ht *t, struct hc *c)
{
    wisp_ipaddr_t ip = wisp_ipaddr4(sim_ip(t->srv));
    memset(c, 0, sizeof(*c));
    c->w = t->w;
    c->rx_cap = 4096;
    c->rx = (uint8_t *)malloc(c->rx_cap);
    c->pcb = wisp_tcp_new(sim_stack(t->cli));
    assert_non_null(c->pcb);
    wisp_tcp_arg(c->pcb, c);
    wisp_tcp_recv(c->pcb, hc_recv);
    wisp_tcp_err(c->pcb, hc_errf);
    assert_int_equal(wisp_tcp_connect(c->pcb, &ip, SRV_PORT, hc_connected), WISP_OK);
    assert_true(sim_run_until(t->w, hc_is_connected, c, 5000000));
}

static void hc_send(struct hc *c, const void *data, size_t len)
{
    assert_non_null(c->pcb);
    assert_int_equal(wisp_tcp_write(c->pcb, data, (uint32_t)len, WISP_TCP_WRITE_COPY), WISP_OK);
    assert_int_equal(wisp_tcp_output(c->pcb), WISP_OK);
}

static void hc_send_str(struct hc *c, const char *s)
{
    hc_send(c, s, strlen(s));
}

static void hc_shut(struct hc *c)
{
    assert_int_equal(wisp_tcp_shutdown(c->pcb, false, true), WISP_OK);
}

static void hc_close(struct hc *c)
{
    if (c->pcb != NULL) {
        wisp_tcp_arg(c->pcb, NULL);
        if (wisp_tcp_close(c->pcb) != WISP_OK) {
            wisp_tcp_abort(c->pcb);
        }
        c->pcb = NULL;
    }
    free(c->rx);
    c->rx = NULL;
}

/* A parsed response. */
struct resp {
    unsigned status;
    long clen;                 /* -1 = none */
    bool conn_close, conn_keepalive, allow;
    char ctype[64];
    const uint8_t *body;
    size_t body_len;
};

static int ci_ncmp(const char *a, const char *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        int x = (a[i] >= 'A' && a[i] <= 'Z') ? a[i] + 32 : a[i];
        int y = (b[i] >= 'A' && b[i] <= 'Z') ? b[i] + 32 : b[i];
        if (x != y || x == 0) {
            return x - y;
        }
    }
    return 0;
}

static bool hdr_is(const char *line, size_t n, const char *name, const char **val)
{
    size_t k = strlen(name);
    if (n < k || ci_ncmp(line, name, k) != 0) {
        return false;
    }
    *val = line + k;
    while (**val == ' ') {
        (*val)++;
    }
    return true;
}

/* Parse one response at buf; returns its length, 0 when incomplete; fails
 * the test when malformed. head_only: a response to HEAD (no body). */
static size_t resp_parse(const uint8_t *buf, size_t len, bool head_only, struct resp *r)
{
    const char *s = (const char *)buf;
    size_t i, end = 0, line;
    memset(r, 0, sizeof(*r));
    r->clen = -1;
    for (i = 0; i + 3 < len; i++) {
        if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
            end = i + 4;
            break;
        }
    }
    if (end == 0) {
        return 0;
    }
    assert_true(end > 12 && memcmp(buf, "HTTP/1.1 ", 9) == 0);
    r->status = (unsigned)atoi(s + 9);
    line = (size_t)(strstr(s, "\r\n") - s) + 2u;
    while (line < end - 2u) {
        const char *l = s + line, *v;
        size_t n = (size_t)(strstr(l, "\r\n") - l);
        if (hdr_is(l, n, "Content-Length:", &v)) {
            r->clen = atol(v);
        } else if (hdr_is(l, n, "Connection:", &v)) {
            r->conn_close = ci_ncmp(v, "close", 5) == 0;
            r->conn_keepalive = ci_ncmp(v, "keep-alive", 10) == 0;
        } else if (hdr_is(l, n, "Allow:", &v)) {
            r->allow = strncmp(v, "GET, HEAD\r\n", 11) == 0;
        } else if (hdr_is(l, n, "Content-Type:", &v)) {
            size_t k = (size_t)(strstr(v, "\r\n") - v);
            assert_true(k < sizeof r->ctype);
            memcpy(r->ctype, v, k);
            r->ctype[k] = '\0';
        }
        line += n + 2u;
    }
    assert_true(r->clen >= 0);
    r->body = buf + end;
    r->body_len = head_only ? 0u : (size_t)r->clen;
    if (len < end + r->body_len) {
        return 0;
    }
    return end + r->body_len;
}

/* Responses complete in the client's buffer (heads[i]: i-th is HEAD). */
struct want {
    struct hc *c;
    unsigned n;
    const bool *heads;
};

static unsigned resp_count(const struct hc *c, const bool *heads, unsigned max, struct resp *out)
{
    size_t off = 0;
    unsigned k = 0;
    while (k < max) {
        struct resp r;
        size_t n = resp_parse(c->rx + off, c->rx_len - off, heads != NULL && heads[k], &r);
        if (n == 0) {
            break;
        }
        if (out != NULL) {
            out[k] = r;
        }
        off += n;
        k++;
    }
    return k;
}

static bool want_done(void *arg)
{
    struct want *w = (struct want *)arg;
    return w->c->errd || resp_count(w->c, w->heads, w->n, NULL) >= w->n;
}

static bool fin_done(void *arg)
{
    struct hc *c = (struct hc *)arg;
    return c->fin || c->errd;
}

/* Wait for n responses; they go to out[]. */
static void hc_wait(struct ht *t, struct hc *c, unsigned n, const bool *heads, struct resp *out)
{
    struct want w;
    w.c = c;
    w.n = n;
    w.heads = heads;
    assert_true(sim_run_until(t->w, want_done, &w, 20000000));
    assert_false(c->errd);
    assert_int_equal(resp_count(c, heads, n, out), n);
}

static void hc_wait_fin(struct ht *t, struct hc *c, uint64_t max_us)
{
    assert_true(sim_run_until(t->w, fin_done, c, max_us));
}

static void ht_init(struct ht *t, uint64_t seed, const struct wisp_httpd_opts *o)
{
    memset(t, 0, sizeof(*t));
    t->w = sim_world_new(seed);
    assert_non_null(t->w);
    t->cli = sim_node_add(t->w, "client", "198.18.0.1/24", NULL);
    t->srv = sim_node_add(t->w, "server", "198.18.0.2/24", NULL);
    assert_non_null(t->cli);
    assert_non_null(t->srv);
    t->h = (struct wisp_httpd *)calloc(1, sizeof(*t->h));
    assert_non_null(t->h);
    assert_int_equal(wisp_httpd_start_opts(t->h, sim_stack(t->srv), SRV_PORT, o), WISP_OK);
    assert_true(sim_run_for(t->w, 10000));
}

static void ht_free(struct ht *t)
{
    /* everything closed: let the handshakes finish, then the leak check */
    assert_true(sim_run_for(t->w, 5000000));
    wisp_httpd_stop(t->h);
    wisp_httpd_stop(t->h);   /* twice is fine */
    assert_int_equal(sim_world_free(t->w), 0);
    free(t->h);
}

static const struct wisp_httpd_file *find_file(const char *path)
{
    unsigned n, i;
    const struct wisp_httpd_file *f = wisp_httpd_files(&n);
    for (i = 0; i < n; i++) {
        if (strcmp(f[i].path, path) == 0) {
            return &f[i];
        }
    }
    fail_msg("no file %s", path);
    return NULL;
}

/* 200 with the table's bytes; 404; both on one connection (keep-alive). */
static void test_http_get_404_keepalive(void **state)
{
    struct ht t;
    struct hc c;
    struct resp r[3];
    const struct wisp_httpd_file *idx = find_file("/index.html");
    const struct wisp_httpd_stats *st;
    (void)state;
    ht_init(&t, 11, NULL);
    hc_open(&t, &c);
    hc_send_str(&c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &c, 1, NULL, r);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[0].clen, idx->len);
    assert_memory_equal(r[0].body, idx->data, idx->len);
    assert_string_equal(r[0].ctype, "text/html; charset=utf-8");
    assert_false(r[0].conn_close);

    hc_send_str(&c, "GET /nope.html HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &c, 2, NULL, r);
    assert_int_equal(r[1].status, 404);
    assert_int_equal(r[1].body_len, strlen("404 Not Found\n"));
    assert_memory_equal(r[1].body, "404 Not Found\n", r[1].body_len);

    hc_send_str(&c, "GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &c, 3, NULL, r);
    assert_int_equal(r[2].status, 200);
    assert_string_equal(r[2].ctype, "text/css; charset=utf-8");
    assert_false(c.fin);

    st = wisp_httpd_stats(t.h);
    assert_int_equal(st->connections, 1);
    assert_int_equal(st->active, 1);
    assert_int_equal(st->requests, 3);
    assert_int_equal(st->reused, 2);
    assert_int_equal(st->responses[2], 2);
    assert_int_equal(st->responses[4], 1);
    hc_close(&c);
    assert_true(sim_run_for(t.w, 1000000));
    assert_int_equal(st->active, 0);
    assert_int_equal(st->closed, 1);
    ht_free(&t);
}

/* 405 with Allow for POST (the body is skipped, the connection serves the
 * next request) and DELETE; HEAD has no body; all pipelined in one write
 * and answered in order. */
static void test_http_405_head_pipelined(void **state)
{
    static const bool heads[5] = { false, true, false, false, true };
    struct ht t;
    struct hc c;
    struct resp r[5];
    const struct wisp_httpd_file *idx = find_file("/index.html");
    const struct wisp_httpd_file *css = find_file("/style.css");
    (void)state;
    ht_init(&t, 12, NULL);
    hc_open(&t, &c);
    hc_send_str(&c, "POST /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nGET /"
                    "HEAD /index.html HTTP/1.1\r\nHost: x\r\n\r\n"
                    "GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n"
                    "DELETE /x HTTP/1.1\r\nHost: x\r\n\r\n"
                    "HEAD /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &c, 5, heads, r);
    assert_int_equal(r[0].status, 405);
    assert_true(r[0].allow);
    assert_int_equal(r[1].status, 200);
    assert_int_equal(r[1].clen, idx->len);   /* what GET would send ... */
    assert_int_equal(r[1].body_len, 0);      /* ... but no body */
    assert_int_equal(r[2].status, 200);
    assert_memory_equal(r[2].body, css->data, css->len);
    assert_int_equal(r[3].status, 405);
    assert_true(r[3].allow);
    assert_int_equal(r[4].status, 404);
    /* nothing after the five responses: the HEADs carried no body */
    assert_true(sim_run_for(t.w, 200000));
    assert_int_equal(resp_count(&c, heads, 5, NULL), 5);
    {
        size_t off = 0;
        unsigned k;
        for (k = 0; k < 5; k++) {
            off += resp_parse(c.rx + off, c.rx_len - off, heads[k], &r[k]);
        }
        assert_int_equal(off, c.rx_len);
    }
    assert_false(c.fin);
    assert_int_equal(wisp_httpd_stats(t.h)->connections, 1);
    assert_int_equal(wisp_httpd_stats(t.h)->requests, 5);
    hc_close(&c);
    ht_free(&t);
}

/* 400 and 413: the response, then the server closes (lingering: the rest
 * the client sent is read, no reset). */
static void test_http_400_413_close(void **state)
{
    struct ht t;
    struct hc c;
    struct resp r[2];
    unsigned rst_before;
    (void)state;
    ht_init(&t, 13, NULL);
    rst_before = sim_stack(t.srv)->ctr[WISP_CTR_TCP_RST_TX];

    hc_open(&t, &c);
    hc_send_str(&c, "GARBAGE\r\n\r\nmore bytes the server will never parse");
    hc_wait(&t, &c, 1, NULL, r);
    assert_int_equal(r[0].status, 400);
    assert_true(r[0].conn_close);
    hc_wait_fin(&t, &c, 2000000);
    assert_true(c.fin);
    hc_close(&c);

    hc_open(&t, &c);
    hc_send_str(&c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
    hc_send(&c, valid_req, sizeof valid_req);   /* some of the body */
    hc_wait(&t, &c, 1, NULL, r);
    assert_int_equal(r[0].status, 413);
    assert_true(r[0].conn_close);
    hc_wait_fin(&t, &c, 2000000);
    hc_close(&c);

    /* 1.1 without Host */
    hc_open(&t, &c);
    hc_send_str(&c, "GET / HTTP/1.1\r\n\r\n");
    hc_wait(&t, &c, 1, NULL, r);
    assert_int_equal(r[0].status, 400);
    hc_wait_fin(&t, &c, 2000000);
    hc_close(&c);
    assert_true(sim_run_for(t.w, 1000000));
    assert_int_equal(sim_stack(t.srv)->ctr[WISP_CTR_TCP_RST_TX], rst_before);
    assert_int_equal(wisp_httpd_stats(t.h)->responses[4], 3);
    assert_int_equal(wisp_httpd_stats(t.h)->active, 0);
    ht_free(&t);
}

/* HTTP/1.0 closes unless keep-alive; 1.1 with Connection: close closes. */
static void test_http_versions_close(void **state)
{
    struct ht t;
    struct hc c;
    struct resp r[2];
    (void)state;
    ht_init(&t, 14, NULL);
    hc_open(&t, &c);
    hc_send_str(&c, "GET /style.css HTTP/1.0\r\n\r\n");
    hc_wait(&t, &c, 1, NULL, r);
    assert_true(r[0].conn_close);
    hc_wait_fin(&t, &c, 2000000);
    hc_close(&c);

    hc_open(&t, &c);
    hc_send_str(&c, "GET /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    hc_wait(&t, &c, 1, NULL, r);
    assert_true(r[0].conn_keepalive);
    hc_send_str(&c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    hc_wait(&t, &c, 2, NULL, r);
    assert_int_equal(r[1].status, 200);
    assert_true(r[1].conn_close);
    hc_wait_fin(&t, &c, 2000000);
    hc_close(&c);
    ht_free(&t);
}

/* The 1 MiB generated file, byte-exact, in order (every 4-byte word
 * differs); and HEAD of it. */
static void test_http_big_file(void **state)
{
    struct ht t;
    struct hc c;
    struct resp r[1];
    uint8_t *want;
    uint64_t t0;
    (void)state;
    ht_init(&t, 15, NULL);
    want = (uint8_t *)malloc(WISP_HTTPD_BIG_LEN);
    assert_non_null(want);
    wisp_httpd_big_gen(0, want, WISP_HTTPD_BIG_LEN);
    assert_int_equal(want[0], 0x7F);
    assert_int_equal(want[4], (uint8_t)((0x9E3779B1u + 0x7F4A7C15u) >> 24));
    hc_open(&t, &c);
    t0 = sim_now_us(t.w);
    hc_send_str(&c, "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &c, 1, NULL, r);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[0].clen, WISP_HTTPD_BIG_LEN);
    assert_memory_equal(r[0].body, want, WISP_HTTPD_BIG_LEN);
    print_message("  /big.bin: 1 MiB in %.1f ms of virtual time\n", (double)(sim_now_us(t.w) - t0) / 1000.0);
    /* a generated chunk at an odd offset matches too */
    {
        uint8_t part[13];
        wisp_httpd_big_gen(1000003, part, sizeof part);
        assert_memory_equal(part, want + 1000003, sizeof part);
    }
    free(want);
    hc_close(&c);
    ht_free(&t);
}

/* A small strict JSON validator (RFC 8259), for /status.json. */
struct jv {
    const char *s;
    size_t i, n;
    unsigned depth;
};

static void jv_ws(struct jv *j)
{
    while (j->i < j->n && strchr(" \t\r\n", j->s[j->i]) != NULL) {
        j->i++;
    }
}

static bool jv_value(struct jv *j);

static bool jv_string(struct jv *j)
{
    if (j->i >= j->n || j->s[j->i] != '"') {
        return false;
    }
    for (j->i++; j->i < j->n; j->i++) {
        unsigned char ch = (unsigned char)j->s[j->i];
        if (ch == '"') {
            j->i++;
            return true;
        }
        if (ch < 0x20u) {
            return false;
        }
        if (ch == '\\') {
            j->i++;
            if (j->i >= j->n || strchr("\"\\/bfnrtu", j->s[j->i]) == NULL) {
                return false;
            }
        }
    }
    return false;
}

static bool jv_value(struct jv *j)
{
    jv_ws(j);
    if (j->i >= j->n || ++j->depth > 32) {
        return false;
    }
    if (j->s[j->i] == '{' || j->s[j->i] == '[') {
        char close = j->s[j->i] == '{' ? '}' : ']';
        bool obj = close == '}';
        j->i++;
        jv_ws(j);
        if (j->i < j->n && j->s[j->i] == close) {
            j->i++;
            j->depth--;
            return true;
        }
        for (;;) {
            if (obj) {
                jv_ws(j);
                if (!jv_string(j)) {
                    return false;
                }
                jv_ws(j);
                if (j->i >= j->n || j->s[j->i++] != ':') {
                    return false;
                }
            }
            if (!jv_value(j)) {
                return false;
            }
            jv_ws(j);
            if (j->i >= j->n) {
                return false;
            }
            if (j->s[j->i] == ',') {
                j->i++;
                continue;
            }
            if (j->s[j->i] == close) {
                j->i++;
                j->depth--;
                return true;
            }
            return false;
        }
    }
    if (j->s[j->i] == '"') {
        j->depth--;
        return jv_string(j);
    }
    if (strncmp(j->s + j->i, "true", 4) == 0 || strncmp(j->s + j->i, "null", 4) == 0) {
        j->i += 4;
        j->depth--;
        return true;
    }
    if (strncmp(j->s + j->i, "false", 5) == 0) {
        j->i += 5;
        j->depth--;
        return true;
    }
    if (j->s[j->i] == '-' || (j->s[j->i] >= '0' && j->s[j->i] <= '9')) {
        size_t st = j->i;
        if (j->s[j->i] == '-') {
            j->i++;
        }
        while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') {
            j->i++;
        }
        j->depth--;
        return j->i > st;
    }
    return false;
}

static bool json_valid(const uint8_t *s, size_t n)
{
    struct jv j;
    j.s = (const char *)s;
    j.i = 0;
    j.n = n;
    j.depth = 0;
    if (!jv_value(&j)) {
        return false;
    }
    jv_ws(&j);
    return j.i == n;
}

static bool has(const struct resp *r, const char *needle)
{
    size_t k = strlen(needle), i;
    for (i = 0; i + k <= r->body_len; i++) {
        if (memcmp(r->body + i, needle, k) == 0) {
            return true;
        }
    }
    return false;
}

/* /status.json is valid JSON with the stack's interfaces, connections
 * (our own among them), pools and drop counters; /status is HTML. */
static void test_http_status(void **state)
{
    struct ht t;
    struct hc c;
    struct resp r[3];
    static const bool heads[3] = { false, false, true };
    (void)state;
    ht_init(&t, 16, NULL);
    /* a drop counter that is not zero: a datagram to a closed port */
    sim_stack(t.srv)->ctr[WISP_CTR_IP4_DROP_CHKSUM] = 3;
    hc_open(&t, &c);
    hc_send_str(&c, "GET /status.json HTTP/1.1\r\nHost: x\r\n\r\n"
                    "GET /status HTTP/1.1\r\nHost: x\r\n\r\n"
                    "HEAD /status.json HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &c, 3, heads, r);
    assert_int_equal(r[0].status, 200);
    assert_string_equal(r[0].ctype, "application/json");
    if (!json_valid(r[0].body, r[0].body_len)) {
        fail_msg("invalid JSON: %.*s", (int)r[0].body_len, (const char *)r[0].body);
    }
    if (!has(&r[0], "{\"name\":\"eth0\",\"addr\":\"198.18.0.2\"")) {
        fail_msg("no eth0 in %.*s", (int)r[0].body_len, (const char *)r[0].body);
    }
    assert_true(has(&r[0], "\"state\":\"ESTABLISHED\",\"local\":\"198.18.0.2:80\",\"peer\":\"198.18.0.1:"));
    assert_true(has(&r[0], "\"pools\":[{\"name\":"));
    assert_true(has(&r[0], "\"drops\":{"));
    assert_true(has(&r[0], "\"ip4.drop.chksum\":3"));
    assert_true(has(&r[0], "\"truncated\":false}"));
    assert_true(has(&r[0], "\"http\":{\"port\":80,\"connections\":1,\"active\":1"));
    assert_int_equal(r[1].status, 200);
    assert_true(has(&r[1], "<table>"));
    assert_true(has(&r[1], "ESTABLISHED"));
    assert_true(has(&r[1], "ip4.drop.chksum"));
    assert_true(r[1].body_len > 500);
    assert_int_equal(r[2].status, 200);
    assert_true(r[2].clen > 100);
    hc_close(&c);

    /* a buffer too small for the whole page: cut at a row, still valid */
    {
        char buf[700];
        uint32_t n = wisp_httpd_render_status(sim_stack(t.srv), t.h, false, buf, sizeof buf);
        assert_true(n > 0 && n <= sizeof buf);
        assert_true(json_valid((const uint8_t *)buf, n));
        assert_non_null(strstr(buf, "\"truncated\":true}"));
    }
    ht_free(&t);
}

/* Every prefix of a request on its own connection, then the client's
 * FIN: no response, the server closes; the whole request answers. Then
 * random bytes on 40 connections: the server answers at most with an
 * error and always closes; the pools come back. */
static void test_http_prefixes_and_random(void **state)
{
    static const char req[] = "GET /style.css HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n";
    struct ht t;
    struct hc c;
    struct sim_rng rng;
    size_t k;
    unsigned i;
    (void)state;
    ht_init(&t, 17, NULL);
    for (k = 0; k <= strlen(req); k += (k < 20 ? 1u : 3u)) {
        hc_open(&t, &c);
        if (k > 0) {
            hc_send(&c, req, k);
        }
        hc_shut(&c);
        hc_wait_fin(&t, &c, 3000000);
        assert_true(c.fin);
        if (k < strlen(req)) {
            assert_int_equal(c.rx_len, 0);
        } else {
            struct resp r;
            assert_true(resp_parse(c.rx, c.rx_len, false, &r) == c.rx_len);
            assert_int_equal(r.status, 200);
        }
        hc_close(&c);
    }
    sim_rng_seed(&rng, 99);
    for (i = 0; i < 40; i++) {
        uint8_t junk[1500];
        size_t n = 1 + (size_t)sim_rng_below(&rng, sizeof junk), j;
        for (j = 0; j < n; j++) {
            junk[j] = (uint8_t)sim_rng_next(&rng);
        }
        if (i % 4 == 0) {
            memcpy(junk, "GET / HTTP/1.1\r\nHost: a\r\n", 25 < n ? 25 : n);
        }
        hc_open(&t, &c);
        hc_send(&c, junk, n);
        hc_shut(&c);
        hc_wait_fin(&t, &c, 3000000);
        assert_true(c.fin || c.errd);
        if (c.rx_len > 0) {
            struct resp r;
            assert_true(resp_parse(c.rx, c.rx_len, false, &r) > 0);
            assert_true(r.status >= 400 && r.status <= 505);
        }
        hc_close(&c);
    }
    assert_true(sim_run_for(t.w, 3000000));
    assert_int_equal(wisp_httpd_stats(t.h)->active, 0);
    ht_free(&t);
}

/* The connection limit (max_conns 2: the third is refused), the idle
 * timeout (an idle keep-alive connection is closed; an incomplete request
 * gets 408), and a client that never reads a big response is reset. */
static void test_http_limits_and_timeouts(void **state)
{
    struct ht t;
    struct hc a, b, c;
    struct wisp_httpd_opts o;
    struct resp r[1];
    (void)state;
    memset(&o, 0, sizeof o);
    o.max_conns = 2;
    o.per_source = 2;
    o.idle_ms = 3000;
    ht_init(&t, 18, &o);
    hc_open(&t, &a);
    hc_open(&t, &b);
    hc_open(&t, &c);   /* accepted by TCP, declined by the server: reset */
    assert_true(sim_run_for(t.w, 200000));
    assert_true(c.errd);
    assert_int_equal(c.err, WISP_ERR_RST);
    assert_int_equal(wisp_httpd_stats(t.h)->refused, 1);
    hc_close(&c);

    /* a: idle, no request: closed gracefully after ~3 s (poll period 0.5 s) */
    hc_send_str(&b, "GET / HTTP/1.1\r\nHo");
    assert_true(sim_run_for(t.w, 2000000));
    assert_false(a.fin);
    hc_wait_fin(&t, &a, 2000000);
    assert_true(a.fin);
    assert_int_equal(a.rx_len, 0);
    /* b: the incomplete request gets 408, then the close */
    hc_wait_fin(&t, &b, 2000000);
    assert_true(resp_parse(b.rx, b.rx_len, false, r) == b.rx_len);
    assert_int_equal(r[0].status, 408);
    assert_int_equal(wisp_httpd_stats(t.h)->timeouts, 2);
    hc_close(&a);
    hc_close(&b);

    /* a client that reads nothing: the response stalls, reset at the idle timeout */
    hc_open(&t, &c);
    c.no_window = true;
    hc_send_str(&c, "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_true(sim_run_for(t.w, 8000000));
    assert_true(c.errd);
    assert_int_equal(wisp_httpd_stats(t.h)->aborted, 1);
    assert_int_equal(wisp_httpd_stats(t.h)->timeouts, 3);
    hc_close(&c);
    ht_free(&t);
}

/* Open a client connection from node n (else as hc_open). */
static void hc_open_from(struct ht *t, struct sim_node *n, struct hc *c)
{
    struct sim_node *keep = t->cli;
    t->cli = n;
    hc_open(t, c);
    t->cli = keep;
}

/* The request deadline (issue 11 #3): a head trickling in one byte every
 * 500 ms keeps the idle timer (10 s) from firing, but gets 408 and the
 * close at head_ms (3 s); a complete request in time is served. */
static void test_http_request_deadline(void **state)
{
    struct ht t;
    struct hc a, b;
    struct wisp_httpd_opts o;
    struct resp r[1];
    static const char head[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    unsigned i;
    (void)state;
    memset(&o, 0, sizeof o);
    o.head_ms = 3000;
    ht_init(&t, 31, &o);
    assert_int_equal(t.h->opt.idle_ms, WISP_HTTPD_IDLE_MS);
    hc_open(&t, &a);
    assert_true(sim_run_for(t.w, 1500000));   /* idle before the first byte: not counted */
    for (i = 0; i < 5; i++) {
        hc_send(&a, head + i, 1);
        assert_true(sim_run_for(t.w, 500000));
    }
    assert_false(a.fin);                      /* 2.5 s after the first byte */
    for (; i < 12 && !a.fin; i++) {
        hc_send(&a, head + i, 1);
        assert_true(sim_run_for(t.w, 500000));
    }
    assert_true(a.fin);
    assert_true(i <= 9);                      /* 3 s + the poll period (0.5 s) after the first byte */
    assert_true(resp_parse(a.rx, a.rx_len, false, r) == a.rx_len);
    assert_int_equal(r[0].status, 408);
    assert_int_equal(wisp_httpd_stats(t.h)->head_timeouts, 1);
    assert_int_equal(wisp_httpd_stats(t.h)->timeouts, 1);
    hc_close(&a);
    /* keep-alive: the deadline starts with each request's first byte */
    hc_open(&t, &b);
    hc_send_str(&b, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_wait(&t, &b, 1, NULL, r);
    assert_int_equal(r[0].status, 200);
    assert_true(sim_run_for(t.w, 2500000));
    hc_send_str(&b, "GET /style.css HTTP/1.1\r\nHo");
    assert_true(sim_run_for(t.w, 1000000));
    hc_send_str(&b, "st: x\r\n\r\n");
    hc_wait(&t, &b, 2, NULL, NULL);
    assert_int_equal(wisp_httpd_stats(t.h)->responses[2], 2);
    assert_int_equal(wisp_httpd_stats(t.h)->head_timeouts, 1);
    hc_close(&b);
    ht_free(&t);
}

/* Slowloris from two addresses holding every record (4; 2 per address,
 * reconnecting whenever they are reset), 10 legitimate GETs from a third:
 * all served; the per-source cap refuses a third connection from one
 * address while its two are fresh. With the defences off, every
 * legitimate GET is refused. Returns the GETs served. */
static unsigned slowloris_round(const struct wisp_httpd_opts *o, uint64_t seed, uint32_t *capped)
{
    struct ht t;
    struct sim_node *src[2];
    struct hc att[4], extra, legit;
    struct resp r[1];
    unsigned i, k, ok = 0, sent[4];
    static const char head[] = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";

    ht_init(&t, seed, o);
    src[0] = sim_node_add(t.w, "attacker-a", "198.18.0.3/24", NULL);
    src[1] = sim_node_add(t.w, "attacker-b", "198.18.0.4/24", NULL);
    assert_true(src[0] != NULL && src[1] != NULL);
    for (i = 0; i < 4; i++) {
        hc_open_from(&t, src[i / 2], &att[i]);
        hc_send(&att[i], head, 1);
        sent[i] = 1;
    }
    /* a third from address a: over its cap */
    hc_open_from(&t, src[0], &extra);
    assert_true(sim_run_for(t.w, 100000));
    *capped = wisp_httpd_stats(t.h)->capped;
    hc_close(&extra);
    for (k = 0; k < 3; k++) {   /* 1.5 s of trickling */
        for (i = 0; i < 4; i++) {
            if (att[i].pcb != NULL && !att[i].fin) {
                hc_send(&att[i], sent[i] < sizeof head - 1 ? head + sent[i] : "a", 1);
                sent[i]++;
            }
        }
        assert_true(sim_run_for(t.w, 500000));
    }
    for (k = 0; k < 10; k++) {
        hc_open(&t, &legit);
        if (!legit.errd) {
            hc_send_str(&legit, "GET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            (void)sim_run_until(t.w, fin_done, &legit, 2000000);
            if (resp_count(&legit, NULL, 1, r) == 1 && r[0].status == 200) {
                ok++;
            }
        }
        hc_close(&legit);
        /* the attackers trickle on and reconnect at once when reset */
        for (i = 0; i < 4; i++) {
            if (att[i].errd || att[i].fin) {
                hc_close(&att[i]);
                hc_open_from(&t, src[i / 2], &att[i]);
                sent[i] = 0;
            }
            if (att[i].pcb != NULL) {
                hc_send(&att[i], sent[i] < sizeof head - 1 ? head + sent[i] : "a", 1);
                sent[i]++;
            }
        }
        assert_true(sim_run_for(t.w, 300000));
    }
    for (i = 0; i < 4; i++) {
        hc_close(&att[i]);
    }
    ht_free(&t);
    return ok;
}

static void test_http_slowloris(void **state)
{
    struct wisp_httpd_opts o;
    uint32_t capped = 0;
    unsigned ok;
    (void)state;
    memset(&o, 0, sizeof o);
    o.max_conns = 4;   /* the embedded default: 2 per address */
    ok = slowloris_round(&o, 32, &capped);
    printf("slowloris, defaults (4 records): %u/10 legitimate GETs, capped %u\n", ok, (unsigned)capped);
    assert_int_equal(ok, 10);
    assert_int_equal(capped, 1);

    o.per_source = 4;
    o.reclaim_ms = 0x7FFFFFFFu;
    o.head_ms = 0x7FFFFFFFu;
    o.idle_ms = 0x7FFFFFFFu;
    ok = slowloris_round(&o, 33, &capped);
    printf("slowloris, defences off: %u/10 legitimate GETs\n", ok);
    assert_int_equal(ok, 0);
    assert_int_equal(capped, 0);
}

/* Stop with connections open: they are reset, the pools come back. */
static void test_http_stop_with_open_connections(void **state)
{
    struct ht t;
    struct hc a, b;
    (void)state;
    ht_init(&t, 19, NULL);
    hc_open(&t, &a);
    hc_open(&t, &b);
    hc_send_str(&a, "GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    hc_send_str(&b, "GET /st");
    assert_true(sim_run_for(t.w, 2000));
    wisp_httpd_stop(t.h);
    assert_true(sim_run_for(t.w, 100000));
    assert_true(a.errd && b.errd);
    assert_int_equal(wisp_httpd_stats(t.h)->aborted, 2);
    hc_close(&a);
    hc_close(&b);
    /* the port can be served again */
    assert_int_equal(wisp_httpd_start(t.h, sim_stack(t.srv), SRV_PORT), WISP_OK);
    ht_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parser_valid),
        cmocka_unit_test(test_parser_errors),
        cmocka_unit_test(test_parser_random),
        cmocka_unit_test(test_http_get_404_keepalive),
        cmocka_unit_test(test_http_405_head_pipelined),
        cmocka_unit_test(test_http_400_413_close),
        cmocka_unit_test(test_http_versions_close),
        cmocka_unit_test(test_http_big_file),
        cmocka_unit_test(test_http_status),
        cmocka_unit_test(test_http_prefixes_and_random),
        cmocka_unit_test(test_http_limits_and_timeouts),
        cmocka_unit_test(test_http_stop_with_open_connections),
        cmocka_unit_test(test_http_request_deadline),
        cmocka_unit_test(test_http_slowloris),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
