/**
 * @file demo_http.c
 * wisp-demo, HTTP part: node A fetches pages from node B's HTTP server
 * (apps/lib/httpd.h, wisp_httpd) over the simulated wire, in virtual time,
 * with a small HTTP/1.1 GET client written on the raw TCP API (core
 * context: the simulator's loop): connect, send the request, read the
 * status line and the header fields (RFC 9112 §4, §5), count the body
 * (Content-Length, RFC 9110 §8.6, or up to the server's close, RFC 9112
 * §6.3; a chunked body, RFC 9112 §7.1, is decoded), and time it.
 *
 * The server is another module. The build defines WISP_DEMO_HTTPD when
 * apps/lib/httpd.h exists (CMakeLists.txt); without it the client still
 * runs once, to port 80 of a B that has no server, and shows the refusal.
 */
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#ifdef WISP_DEMO_HTTPD
#include "httpd.h"
#endif

#define HTTP_HEAD_MAX 4096u     /**< status line + header fields we keep */
#define HTTP_TIMEOUT_US 60000000u

/** Chunked decoding state (RFC 9112 §7.1). */
enum chunk_state { CH_SIZE = 0, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF, CH_TRAILER, CH_DONE };

/** One GET. */
struct http_get {
    struct sim_world *w;
    struct wisp_tcp_pcb *pcb;
    char req[256];
    uint16_t req_len, req_sent;
    char head[HTTP_HEAD_MAX + 1];
    unsigned head_len;
    bool head_done;
    /* parsed */
    unsigned status;             /**< 0 = no valid status line */
    char status_line[80];
    unsigned nfields;
    long long content_length;    /**< -1: none */
    bool chunked;
    char ctype[48];
    /* body */
    uint64_t body;               /**< body bytes (chunked: decoded data bytes) */
    uint64_t wire_body;          /**< bytes after the header */
    /** Optional: the expected body (bytes [off, off + n) into dst), to
     *  check it byte for byte; bad_at = first wrong body byte. */
    void (*gen)(uint32_t off, uint8_t *dst, uint32_t n);
    uint64_t bad_at;
    enum chunk_state ch;
    uint64_t ch_left;
    /* timing, virtual us */
    uint64_t t0, t_conn, t_end;
    bool done, fin, refused, failed, complete;
};

static bool lower_eq(const char *a, const char *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') {
            x = (char)(x - 'A' + 'a');
        }
        if (x != y) {
            return false;
        }
    }
    return true;
}

/** Copy src into dst (size bytes), cut short if needed. */
static void copy_cut(char *dst, size_t size, const char *src)
{
    size_t n = strlen(src);
    if (n >= size) {
        n = size - 1u;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The header block is complete (head[0..head_len), ends in CRLF CRLF):
 * status line and fields. Malformed input just leaves status 0. */
static void http_parse_head(struct http_get *g)
{
    char *line = g->head, *end = g->head + g->head_len, *eol;
    bool first = true;

    g->content_length = -1;
    while (line < end && (eol = strstr(line, "\r\n")) != NULL && eol != line) {
        size_t len = (size_t)(eol - line);
        *eol = '\0';
        if (first) {
            /* RFC 9112 §4: HTTP-version SP status-code SP [ reason-phrase ] */
            if (len >= 12 && memcmp(line, "HTTP/1.", 7) == 0 && line[8] == ' ' && line[9] >= '1' && line[9] <= '5' &&
                line[10] >= '0' && line[10] <= '9' && line[11] >= '0' && line[11] <= '9') {
                g->status = (unsigned)(line[9] - '0') * 100u + (unsigned)(line[10] - '0') * 10u +
                            (unsigned)(line[11] - '0');
            }
            copy_cut(g->status_line, sizeof g->status_line, line);
            first = false;
        } else {
            char *v = strchr(line, ':');
            g->nfields++;
            if (v != NULL) {
                size_t nlen = (size_t)(v - line);
                v++;
                while (*v == ' ' || *v == '\t') {
                    v++;
                }
                if (nlen == 14 && lower_eq(line, "content-length", 14)) {
                    char *e;
                    long long n = strtoll(v, &e, 10);
                    if (e != v && n >= 0) {
                        g->content_length = n;
                    }
                } else if (nlen == 12 && lower_eq(line, "content-type", 12)) {
                    copy_cut(g->ctype, sizeof g->ctype, v);
                } else if (nlen == 17 && lower_eq(line, "transfer-encoding", 17) && strlen(v) >= 7 &&
                           lower_eq(v + strlen(v) - 7, "chunked", 7)) {
                    g->chunked = true;
                }
            }
        }
        line = eol + 2;
    }
    if (g->chunked) {
        g->content_length = -1; /* RFC 9112 §6.3: chunked wins over Content-Length */
    }
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Compare body bytes [g->body, g->body + n) with the generator. */
static void http_verify(struct http_get *g, const uint8_t *b, size_t n)
{
    uint8_t ref[256];
    uint64_t off = g->body;
    while (g->gen != NULL && g->bad_at == UINT64_MAX && n > 0) {
        size_t k = n < sizeof ref ? n : sizeof ref;
        if (off + k > UINT32_MAX) {
            g->bad_at = off; /* longer than any generated file */
            return;
        }
        g->gen((uint32_t)off, ref, (uint32_t)k);
        if (memcmp(ref, b, k) != 0) {
            g->bad_at = off;
        }
        off += k;
        b += k;
        n -= k;
    }
}

/* Body bytes: count them (decoding chunked framing). */
static void http_body(struct http_get *g, const uint8_t *b, size_t n)
{
    g->wire_body += n;
    if (!g->chunked) {
        http_verify(g, b, n);
        g->body += n;
        return;
    }
    while (n > 0 && g->ch != CH_DONE) {
        uint8_t c = *b;
        switch (g->ch) {
        case CH_SIZE: {
            int h = hexval(c);
            if (h >= 0) {
                g->ch_left = g->ch_left * 16u + (unsigned)h;
            } else if (c == ';' || c == ' ') {
                g->ch = CH_EXT;
            } else if (c == '\r') {
                g->ch = CH_SIZE_LF;
            } else {
                g->failed = true;
                g->ch = CH_DONE;
            }
            b++;
            n--;
            break;
        }
        case CH_EXT:
            if (c == '\r') {
                g->ch = CH_SIZE_LF;
            }
            b++;
            n--;
            break;
        case CH_SIZE_LF:
            g->ch = g->ch_left == 0 ? CH_TRAILER : CH_DATA;
            b++;
            n--;
            break;
        case CH_DATA: {
            size_t k = g->ch_left < n ? (size_t)g->ch_left : n;
            http_verify(g, b, k);
            g->body += k;
            g->ch_left -= k;
            b += k;
            n -= k;
            if (g->ch_left == 0) {
                g->ch = CH_DATA_CR;
            }
            break;
        }
        case CH_DATA_CR:
            g->ch = CH_DATA_LF;
            b++;
            n--;
            break;
        case CH_DATA_LF:
            g->ch = CH_SIZE;
            b++;
            n--;
            break;
        case CH_TRAILER:
            /* last-chunk seen; the (empty) trailer's CRLF ends the body */
            if (c == '\n') {
                g->ch = CH_DONE;
            }
            b++;
            n--;
            break;
        case CH_DONE:
            break;
        }
    }
}

static void http_bytes(struct http_get *g, const uint8_t *b, size_t n)
{
    while (n > 0 && !g->head_done) {
        if (g->head_len >= HTTP_HEAD_MAX) {
            g->failed = true; /* header too long for us */
            return;
        }
        g->head[g->head_len++] = (char)*b++;
        n--;
        if (g->head_len >= 4 && memcmp(g->head + g->head_len - 4, "\r\n\r\n", 4) == 0) {
            g->head[g->head_len] = '\0';
            g->head_done = true;
            http_parse_head(g);
        }
    }
    if (n > 0) {
        http_body(g, b, n);
    }
}

/** The response is complete by its own framing (not only by the close). */
static bool http_framed_done(const struct http_get *g)
{
    if (!g->head_done) {
        return false;
    }
    if (g->chunked) {
        return g->ch == CH_DONE;
    }
    return g->content_length >= 0 && g->body >= (uint64_t)g->content_length;
}

static void http_finish(struct http_get *g)
{
    if (!g->done) {
        g->done = true;
        g->t_end = sim_now_us(g->w);
    }
}

static wisp_err_t http_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct http_get *g = (struct http_get *)arg;
    const struct wisp_pbuf *q;

    (void)err;
    if (p == NULL) {
        g->fin = true;
        g->pcb = NULL;
        http_finish(g);
        if (wisp_tcp_close(pcb) != WISP_OK) {
            wisp_tcp_abort(pcb);
            return WISP_ERR_ABRT;
        }
        return WISP_OK;
    }
    for (q = p; q != NULL; q = q->next) {
        http_bytes(g, q->payload, q->len);
    }
    wisp_tcp_recved(pcb, p->tot_len);
    wisp_pbuf_free(p);
    if (!g->done && (http_framed_done(g) || g->failed)) {
        http_finish(g);
        g->pcb = NULL;
        if (wisp_tcp_close(pcb) != WISP_OK) {
            wisp_tcp_abort(pcb);
            return WISP_ERR_ABRT;
        }
    }
    return WISP_OK;
}

static void http_send_req(struct http_get *g)
{
    uint16_t n;
    if (g->pcb == NULL || g->req_sent >= g->req_len) {
        return;
    }
    n = (uint16_t)(g->req_len - g->req_sent);
    if (wisp_tcp_write(g->pcb, g->req + g->req_sent, n, WISP_TCP_WRITE_COPY) == WISP_OK) {
        g->req_sent = g->req_len;
    } /* else WISP_ERR_MEM: the poll callback tries again */
}

static wisp_err_t http_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct http_get *g = (struct http_get *)arg;
    (void)pcb;
    (void)err;
    g->t_conn = sim_now_us(g->w);
    http_send_req(g);
    return WISP_OK;
}

static wisp_err_t http_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    (void)pcb;
    http_send_req((struct http_get *)arg);
    return WISP_OK;
}

static void http_err(void *arg, wisp_err_t err)
{
    struct http_get *g = (struct http_get *)arg;
    g->pcb = NULL;
    if (err == WISP_ERR_RST && g->t_conn == 0) {
        g->refused = true;
    } else if (!g->done) {
        g->failed = true;
    }
    http_finish(g);
}

static bool http_is_done(void *arg)
{
    return ((const struct http_get *)arg)->done;
}

/** GET path from B; *g holds the outcome. gen (may be NULL) produces the
 *  expected body. */
static void http_get(struct demo *d, const char *path, void (*gen)(uint32_t, uint8_t *, uint32_t), struct http_get *g)
{
    wisp_ipaddr_t dst = wisp_ipaddr4(sim_ip(d->b));
    char host[16];
    int n;

    memset(g, 0, sizeof(*g));
    g->gen = gen;
    g->bad_at = UINT64_MAX;
    g->w = d->w;
    g->content_length = -1;
    n = snprintf(g->req, sizeof g->req,
                 "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: wisp-demo\r\nAccept: */*\r\nConnection: close\r\n\r\n",
                 path, wisp_ip4_ntoa(sim_ip(d->b), host));
    g->req_len = (uint16_t)(n > 0 && (size_t)n < sizeof g->req ? n : 0);
    g->t0 = sim_now_us(d->w);
    g->pcb = wisp_tcp_new(sim_stack(d->a));
    if (g->pcb == NULL || g->req_len == 0) {
        g->failed = true;
        return;
    }
    wisp_tcp_arg(g->pcb, g);
    wisp_tcp_recv(g->pcb, http_recv);
    wisp_tcp_err(g->pcb, http_err);
    wisp_tcp_poll(g->pcb, http_poll, 1);
    if (wisp_tcp_connect(g->pcb, &dst, DEMO_HTTP_PORT, http_connected) != WISP_OK) {
        wisp_tcp_err(g->pcb, NULL);
        wisp_tcp_abort(g->pcb);
        g->pcb = NULL;
        g->failed = true;
        return;
    }
    if (!sim_run_until(d->w, http_is_done, g, HTTP_TIMEOUT_US) && g->pcb != NULL) {
        wisp_tcp_err(g->pcb, NULL);
        wisp_tcp_abort(g->pcb); /* timed out */
        g->pcb = NULL;
        g->failed = true;
    }
    /* let both sides finish their closing handshake before the next GET */
    (void)sim_run_for(d->w, 20000u);
    g->complete = g->status == 200 && !g->failed && g->bad_at == UINT64_MAX &&
                  ((g->content_length >= 0 && g->body == (uint64_t)g->content_length) ||
                   (g->chunked && g->ch == CH_DONE) || (g->content_length < 0 && !g->chunked && g->fin));
}

#ifdef WISP_DEMO_HTTPD

static const char *const http_paths[] = { "/index.html", "/status", "/big.bin" };
#define N_PATHS (sizeof(http_paths) / sizeof(http_paths[0]))

/** The media type of a Content-Type value, without parameters. */
static void media_type(const char *ct, char *out, size_t size)
{
    size_t n = strcspn(ct, "; ");
    if (n >= size) {
        n = size - 1u;
    }
    memcpy(out, ct, n);
    out[n] = '\0';
    if (n == 0) {
        (void)snprintf(out, size, "-");
    }
}

void demo_part_http(struct demo *d, unsigned num)
{
    struct wisp_httpd *h = calloc(1, sizeof(*h));
    struct http_get *g = calloc(1, sizeof(*g));
    const struct wisp_httpd_stats *st;
    unsigned i;
    char what[96], mt[32], len[24];

    printf("\n%u. HTTP  (B runs wisp_httpd on port %u; A's raw-API client: GET, HTTP/1.1, Connection: close)\n", num,
           DEMO_HTTP_PORT);
    d->sum.http_built = true;
    if (h == NULL || g == NULL || wisp_httpd_start(h, sim_stack(d->b), DEMO_HTTP_PORT) != WISP_OK) {
        demo_check(d, false, "B's HTTP server started");
        free(h);
        free(g);
        return;
    }
    printf("   %-11s  %-15s  %6s  %-24s  %9s  %9s  %7s  %6s\n", "path", "status line", "fields", "type", "length",
           "body B", "ms", "Mbit/s");
    for (i = 0; i < N_PATHS; i++) {
        bool big = strcmp(http_paths[i], "/big.bin") == 0;
        double t_ms;
        http_get(d, http_paths[i], big ? wisp_httpd_big_gen : NULL, g);
        t_ms = (double)(g->t_end - g->t0) / 1000.0;
        media_type(g->ctype, mt, sizeof mt);
        if (g->content_length >= 0) {
            (void)snprintf(len, sizeof len, "%lld", g->content_length);
        } else {
            (void)snprintf(len, sizeof len, "%s", g->chunked ? "chunked" : "-");
        }
        printf("   %-11s  %-15.15s  %6u  %-24s  %9s  %9llu  %7.2f  %6.2f%s\n", http_paths[i],
               g->status_line[0] != '\0' ? g->status_line : (g->refused ? "(refused)" : "(no answer)"), g->nfields, mt,
               len, (unsigned long long)g->body, t_ms, t_ms > 0 ? (double)g->body * 8.0 / (t_ms * 1000.0) : 0.0,
               g->failed ? "  (failed)" : "");
        d->sum.http_total++;
        if (g->complete) {
            d->sum.http_ok++;
        }
        (void)snprintf(what, sizeof what, "HTTP GET %s: 200 and the whole body", http_paths[i]);
        demo_check(d, g->complete, what);
        if (big) {
            d->sum.http_big_bytes = g->body;
            d->sum.http_big_ms = t_ms;
            printf("   %-11s  body checked against the server's generator: %s\n", "",
                   g->bad_at == UINT64_MAX ? "byte-exact" : "MISMATCH");
            demo_check(d, g->body == WISP_HTTPD_BIG_LEN && g->bad_at == UINT64_MAX, "/big.bin: 1 MiB, byte-exact");
        }
    }
    st = wisp_httpd_stats(h);
    printf("   server: %u connections, %u requests, %u answered 2xx, %llu body bytes queued\n",
           (unsigned)st->connections, (unsigned)st->requests, (unsigned)st->responses[2],
           (unsigned long long)st->body_tx);
    printf("   time = connect call to last body byte, virtual ms, over the demo's wire\n");
    wisp_httpd_stop(h);
    (void)sim_run_for(d->w, 100000u);
    free(h);
    free(g);
}

#else /* !WISP_DEMO_HTTPD */

void demo_part_http(struct demo *d, unsigned num)
{
    struct http_get *g = calloc(1, sizeof(*g));

    printf("\n%u. HTTP  (A's raw-API GET client -> B port %u)\n", num, DEMO_HTTP_PORT);
    printf("   HTTP server not in this build (apps/lib/httpd.h absent): B has no listener on port %u\n",
           DEMO_HTTP_PORT);
    d->sum.http_built = false;
    if (g == NULL) {
        demo_check(d, false, "HTTP part: memory");
        return;
    }
    http_get(d, "/index.html", NULL, g);
    printf("   GET /index.html -> %s after %.2f virtual ms\n",
           g->refused ? "connection refused (RST), as expected without a server" : "no refusal (unexpected)",
           (double)(g->t_end - g->t0) / 1000.0);
    demo_check(d, g->refused, "HTTP client: a connect to a closed port is refused");
    free(g);
}

#endif /* WISP_DEMO_HTTPD */
