/**
 * @file fuzz_http.c
 * Fuzz harness: request bytes into the HTTP server (apps/lib/httpd.h).
 *
 * Input: [ctrl][request bytes...].
 *  1. The parser (wisp_http_parse) alone: the bytes whole, then again
 *     split at points taken from the bytes themselves and byte by byte;
 *     httpd.h promises that any split gives the same result, so result,
 *     bytes used, status and the parsed request must all agree.
 *  2. The server on port 80 over one connection (scripted handshake from
 *     the peer's port 40000): the bytes are sent as segments of a size
 *     from ctrl bits 0-2 (1, 7, 64, 200, 536, 1000, 1460, 1460), by a
 *     go-back-N sender that follows the stack's window; ctrl bit 3 sends a
 *     FIN after them; bit 4 makes the peer acknowledge what the server
 *     sends (at most 64 rounds), else the peer never acknowledges; bit 5
 *     lets 3 s pass between segments (idle timeout). Afterwards 60 s pass
 *     (linger, idle timeout), the server is stopped, 20 minutes pass and
 *     every pool must be back at zero use; then deinit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"
#include "httpd.h"

struct http_fx {
    struct fz_env e;
    struct wisp_httpd h;
    uint32_t stack_nxt;     /* highest sequence number + length the stack sent */
    uint32_t stack_ack;     /* the stack's last ACK */
    uint16_t stack_wnd;     /* ... and window (unscaled: no window scale offered) */
    uint8_t have_ack;
};

static struct http_fx hfx;

static void http_parser_check(const uint8_t *d, uint32_t len)
{
    static struct wisp_http_parser a, b;
    enum wisp_http_pres ra, rb = WISP_HTTP_MORE;
    uint32_t ua, ub = 0, used, pos = 0, k = 0;

    wisp_http_parser_init(&a);
    ra = wisp_http_parse(&a, d, len, &ua);
    wisp_http_parser_init(&b);
    while (pos < len) {
        /* chunk sizes 1..16 from the data (byte by byte when k is odd) */
        uint32_t n = (k++ & 1u) ? 1u : 1u + (d[pos] & 15u);
        if (n > len - pos) {
            n = len - pos;
        }
        rb = wisp_http_parse(&b, d + pos, n, &used);
        if (used > n) {
            fz_fail("http parser: used %u of %u", (unsigned)used, (unsigned)n);
        }
        ub += used;
        pos += n;
        if (rb != WISP_HTTP_MORE) {
            break;
        }
        if (used != n) {
            fz_fail("http parser: MORE but used %u of %u", (unsigned)used, (unsigned)n);
        }
    }
    if (len == 0) {
        ua = 0;
    }
    if (ra != rb || ua != ub || a.status != b.status) {
        fz_fail("http parser: split changes the result: whole %d used %u status %u, split %d used %u status %u", (int)ra,
                (unsigned)ua, (unsigned)a.status, (int)rb, (unsigned)ub, (unsigned)b.status);
    }
    if (ra == WISP_HTTP_DONE) {
        if (a.req.method != b.req.method || a.req.ver_major != b.req.ver_major || a.req.ver_minor != b.req.ver_minor ||
            a.req.conn_close != b.req.conn_close || a.req.conn_keepalive != b.req.conn_keepalive ||
            a.req.hosts != b.req.hosts || a.req.has_cl != b.req.has_cl || a.req.content_length != b.req.content_length ||
            a.req.target_len != b.req.target_len || strcmp(a.req.target, b.req.target) != 0) {
            fz_fail("http parser: split changes the parsed request");
        }
        if (a.req.target_len > WISP_HTTPD_PATH_MAX || strlen(a.req.target) != a.req.target_len) {
            fz_fail("http parser: target length %u", (unsigned)a.req.target_len);
        }
    }
}

/* Read the stack's segments; with ack, acknowledge new data. */
static void http_observe(int ack)
{
    static uint8_t f[FZ_FRAME_MAX], out[128];
    struct fz_seg sg;
    int n, fresh = 0;
    while ((n = fz_pop(&hfx.e, f, sizeof(f))) >= 0) {
        uint32_t end;
        if (!fz_parse_tcp(f, n, &sg) || sg.dport != 40000 || (sg.flags & FZ_RST)) {
            continue;
        }
        end = sg.seq + sg.len + ((sg.flags & FZ_FIN) ? 1u : 0u);
        if ((int32_t)(end - hfx.stack_nxt) > 0) {
            hfx.stack_nxt = end;
            fresh = 1;
        }
        if (sg.flags & FZ_ACK) {
            hfx.stack_ack = sg.ack;
            hfx.stack_wnd = sg.wnd;
            hfx.have_ack = 1;
        }
    }
    if (ack && fresh) {
        size_t k = fz_tcp_frame(out, 40000, 80, hfx.stack_ack, hfx.stack_nxt, FZ_ACK, 65535, NULL, 0, NULL, 0);
        fz_inject(&hfx.e, out, k);
    }
}

int fuzz_http_one(const uint8_t *data, size_t size);

int fuzz_http_one(const uint8_t *data, size_t size)
{
    static uint8_t frame[2048];
    static const uint16_t segsz[8] = { 1, 7, 64, 200, 536, 1000, 1460, 1460 };
    struct fz_env *e = &hfx.e;
    uint8_t ctrl = size > 0 ? data[0] : 0;
    const uint8_t *req = data + (size > 0 ? 1 : 0);
    uint32_t len = size > 0 ? (uint32_t)(size - 1) : 0, sent = 0, acked = 0, iss1, stack_nxt;
    unsigned rounds, idle = 0, acks = 0;
    int ack = (ctrl & 0x10u) != 0;
    size_t n;

    if (len > 65536) {
        len = 65536;
    }
    http_parser_check(req, len);

    fz_env_init(e, 5, 1);
    fz_arp_peer(e);
    if (wisp_httpd_start(&hfx.h, e->s, 80) != WISP_OK) {
        fz_fail("httpd start");
    }
    if (!fz_handshake(e, 80, 40000, 0x10000000u, &stack_nxt, &iss1)) {
        fz_fail("handshake");
    }
    hfx.stack_nxt = stack_nxt;
    hfx.stack_ack = iss1;
    hfx.stack_wnd = 65535;
    hfx.have_ack = 1;

    /* go-back-N sender of the request bytes */
    for (rounds = 0; acked < len && rounds < 400; rounds++) {
        uint32_t wnd_end = (hfx.stack_ack - iss1) + hfx.stack_wnd, seg = segsz[ctrl & 7u];
        if (sent < acked) {
            sent = acked;
        }
        if (seg > len - sent) {
            seg = len - sent;
        }
        if (sent + seg > wnd_end) {
            seg = wnd_end > sent ? wnd_end - sent : 0;
        }
        if (seg > 0) {
            n = fz_tcp_frame(frame, 40000, 80, iss1 + sent, hfx.stack_nxt, FZ_ACK | FZ_PSH, 65535, NULL, 0, req + sent,
                             (uint16_t)seg);
            fz_inject(e, frame, n);
            sent += seg;
            fz_advance(e, (ctrl & 0x20u) ? 3000 : 1);
        } else {
            fz_advance(e, 250); /* window closed or data lost: let the stack catch up */
        }
        http_observe(ack && acks++ < 64);
        if ((int32_t)(hfx.stack_ack - iss1 - acked) > 0) {
            acked = hfx.stack_ack - iss1;
            idle = 0;
        } else if (++idle >= 4) {
            sent = acked; /* resend from the stack's ACK */
            idle = 0;
        }
        if (wisp_httpd_stats(&hfx.h)->active == 0) {
            break; /* the server gave up on the connection */
        }
    }
    if (ctrl & 0x08u) {
        n = fz_tcp_frame(frame, 40000, 80, iss1 + sent, hfx.stack_nxt, FZ_ACK | FZ_FIN, 65535, NULL, 0, NULL, 0);
        fz_inject(e, frame, n);
    }
    for (rounds = 0; rounds < 64; rounds++) {
        fz_advance(e, 100);
        http_observe(ack && acks++ < 64);
    }
    fz_advance(e, 60000);
    http_observe(0);
    if (getenv("FUZZ_VERBOSE") != NULL) {
        const struct wisp_httpd_stats *st = wisp_httpd_stats(&hfx.h);
        fprintf(stderr, "http: conns %u requests %u 2xx %u 4xx %u 5xx %u closed %u resets %u timeouts %u body %lu\n",
                (unsigned)st->connections, (unsigned)st->requests, (unsigned)st->responses[2],
                (unsigned)st->responses[4], (unsigned)st->responses[5], (unsigned)st->closed, (unsigned)st->resets,
                (unsigned)st->timeouts, (unsigned long)st->body_tx);
    }
    wisp_httpd_stop(&hfx.h);
    fz_advance(e, 20u * 60u * 1000u);
    fz_clear(e);
    fz_check_pools(e, 0, "http: after stop and 20 min");
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_http_one(data, size);
}
#endif
