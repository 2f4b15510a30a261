/**
 * @file httpd.c
 * HTTP/1.1 origin server on the raw TCP API (see httpd.h): a strict,
 * bounded, incremental request parser (RFC 9112), persistent connections
 * with pipelining, GET/HEAD of a compiled-in file table (zero-copy for
 * constant files), generated bodies, and a live status page of the stack.
 * Portable: no stdio, no allocation.
 */
#include "httpd.h"
#include "reclaim.h"

/* ================================================================ parser */

enum {
    PS_START = 0,   /* before the request line (empty lines skipped) */
    PS_START_LF,    /* CR of an empty line seen */
    PS_METHOD,
    PS_TARGET,
    PS_VERSION,     /* "HTTP/" DIGIT "." DIGIT, sub = position */
    PS_RL_LF,       /* CR after the version seen */
    PS_FIELD_START, /* at the start of a field line (or the empty line) */
    PS_NAME,
    PS_OWS,         /* after the colon */
    PS_VALUE,
    PS_VALUE_LF,    /* CR after a field value seen */
    PS_END_LF,      /* CR of the empty line seen */
    PS_DONE,
    PS_ERROR
};

/* Fields the parser interprets (others are checked for syntax only). */
enum { F_OTHER = 0, F_HOST, F_CL, F_TE, F_CONN, F_EXPECT };

#define TOK_OVERFLOW 0xFFu /* tok_len: the token did not fit (unknown) */
#define HTTP_METHOD_MAX 16u /* longest method name taken (longer: 501) */

/* RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" /
 * "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
static void httpd_kick(struct wisp_stack *s, struct wisp_timer *t);
static bool is_tchar(uint8_t c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        return true;
    }
    switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
        return true;
    default:
        return false;
    }
}

/* RFC 9110 §5.5: field-vchar = VCHAR / obs-text */
static bool is_field_vchar(uint8_t c)
{
    return (c >= 0x21u && c <= 0x7Eu) || c >= 0x80u;
}

static uint8_t lower(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

static bool tok_is(const struct wisp_http_parser *p, const char *s)
{
    size_t n = strlen(s);
    return p->tok_len != TOK_OVERFLOW && p->tok_len == n && memcmp(p->tok, s, n) == 0;
}

void wisp_http_parser_init(struct wisp_http_parser *p)
{
    memset(p, 0, sizeof(*p));
    p->state = PS_START;
}

static enum wisp_http_pres perr(struct wisp_http_parser *p, uint16_t status)
{
    p->state = PS_ERROR;
    p->status = status;
    return WISP_HTTP_ERROR;
}

/* End of a token of the Connection field: RFC 9112 §9.3 / §9.6. */
static void conn_token_end(struct wisp_http_parser *p)
{
    if (tok_is(p, "close")) {
        p->req.conn_close = 1;
    } else if (tok_is(p, "keep-alive")) {
        p->req.conn_keepalive = 1;
    }
    p->tok_len = 0;
}

/* Host: RFC 9110 §7.2 / RFC 3986 §3.2.2 characters of uri-host [ ":" port ]. */
static bool is_host_char(uint8_t c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        return true;
    }
    return strchr("-._~!$&'()*+,;=:[]%", c) != NULL && c != '\0';
}

/* One character of a field value (OWS before it already skipped); returns
 * an error status or 0. */
static uint16_t value_char(struct wisp_http_parser *p, uint8_t c)
{
    bool ws = (c == ' ' || c == '\t');
    switch (p->field) {
    case F_CL:
        /* RFC 9110 §8.6: Content-Length = 1*DIGIT (trailing OWS is not part
         * of the value); a list or anything else is invalid: 400 (RFC 9112
         * §6.3 item 5). */
        if (c >= '0' && c <= '9') {
            if (p->sub == 2u) {
                return 400;
            }
            p->sub = 1;
            if (p->cl_cur > (UINT32_MAX - 9u) / 10u) {
                p->cl_cur = UINT32_MAX;   /* saturate: far above any limit */
            } else {
                p->cl_cur = p->cl_cur * 10u + (uint32_t)(c - '0');
            }
            return 0;
        }
        if (ws && p->sub != 0u) {
            p->sub = 2;
            return 0;
        }
        return 400;
    case F_CONN:
        /* RFC 9110 §7.6.1: Connection = #connection-option; RFC 9110
         * §5.6.1.2: a recipient accepts empty list elements. */
        if (is_tchar(c)) {
            if (p->sub == 2u) {
                return 400;
            }
            p->sub = 1;
            if (p->tok_len < sizeof(p->tok)) {
                p->tok[p->tok_len++] = (char)lower(c);
            } else {
                p->tok_len = TOK_OVERFLOW;
            }
            return 0;
        }
        if (c == ',') {
            if (p->sub == 1u) {
                conn_token_end(p);
            }
            p->sub = 0;
            return 0;
        }
        if (ws) {
            if (p->sub == 1u) {
                conn_token_end(p);
                p->sub = 2;
            }
            return 0;
        }
        return 400;
    case F_HOST:
        /* RFC 9112 §3.2: a Host field with an invalid value gets 400. */
        if (ws) {
            p->sub = 1;
            return 0;
        }
        if (p->sub != 0u || !is_host_char(c)) {
            return 400;
        }
        return 0;
    default:
        return 0;
    }
}

/* End of a field line's value. */
static uint16_t value_end(struct wisp_http_parser *p)
{
    switch (p->field) {
    case F_CL:
        if (p->sub == 0u) {
            return 400;   /* empty Content-Length */
        }
        /* RFC 9110 §8.6: several Content-Length lines with one value may be
         * taken as that value; differing ones are an error. */
        if (p->req.has_cl && p->req.content_length != p->cl_cur) {
            return 400;
        }
        p->req.has_cl = 1;
        p->req.content_length = p->cl_cur;
        break;
    case F_CONN:
        if (p->sub == 1u) {
            conn_token_end(p);
        }
        break;
    case F_HOST:
        if (p->req.hosts < 255u) {
            p->req.hosts++;
        }
        break;
    default:
        break;
    }
    return 0;
}

/* The field name in tok is complete (lowercase): which field is it. */
static void field_begin(struct wisp_http_parser *p)
{
    p->field = F_OTHER;
    if (tok_is(p, "host")) {
        p->field = F_HOST;
    } else if (tok_is(p, "content-length")) {
        p->field = F_CL;
        p->cl_cur = 0;
    } else if (tok_is(p, "transfer-encoding")) {
        p->field = F_TE;
        p->req.has_te = 1;
    } else if (tok_is(p, "connection")) {
        p->field = F_CONN;
    } else if (tok_is(p, "expect")) {
        p->field = F_EXPECT;
        p->req.expect = 1;
    }
    p->sub = 0;
    p->tok_len = 0;
}

/* The empty line ended the head: the checks on the head as a whole. */
static enum wisp_http_pres head_done(struct wisp_http_parser *p)
{
    struct wisp_http_req *r = &p->req;
    /* RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status
     * code to any HTTP/1.1 request message that lacks a Host header field
     * and to any request message that contains more than one Host header
     * field line". */
    if ((r->ver_minor >= 1u && r->hosts == 0u) || r->hosts > 1u) {
        return perr(p, 400);
    }
    /* RFC 9112 §6.1: a request with both Transfer-Encoding and
     * Content-Length "ought to be handled as an error"; §6.3 item 3. */
    if (r->has_te && r->has_cl) {
        return perr(p, 400);
    }
    /* RFC 9112 §6.1: a server that receives a transfer coding it does not
     * understand SHOULD respond 501; we take request bodies only with a
     * Content-Length. */
    if (r->has_te) {
        return perr(p, 501);
    }
    /* RFC 9110 §15.5.14: 413 Content Too Large. */
    if (r->has_cl && r->content_length > WISP_HTTPD_BODY_MAX) {
        return perr(p, 413);
    }
    p->state = PS_DONE;
    return WISP_HTTP_DONE;
}

/* One byte of the head. */
static enum wisp_http_pres parse_byte(struct wisp_http_parser *p, uint8_t c)
{
    struct wisp_http_req *r = &p->req;
    uint16_t st;

    if (++p->head_bytes > WISP_HTTPD_HDR_MAX) {
        /* RFC 6585 §5: 431 Request Header Fields Too Large (a request line
         * that long has its target over WISP_HTTPD_PATH_MAX: 414 first). */
        return perr(p, 431);
    }
    switch (p->state) {
    case PS_START:
        /* RFC 9112 §2.2: a server SHOULD ignore at least one empty line
         * (CRLF) received prior to the request-line. */
        if (c == '\r') {
            p->state = PS_START_LF;
            return WISP_HTTP_MORE;
        }
        if (!is_tchar(c)) {
            return perr(p, 400);
        }
        p->state = PS_METHOD;
        p->tok[0] = (char)c;
        p->tok_len = 1;
        return WISP_HTTP_MORE;
    case PS_START_LF:
        if (c != '\n') {
            return perr(p, 400);
        }
        p->state = PS_START;
        return WISP_HTTP_MORE;
    case PS_METHOD:
        /* RFC 9112 §3: request-line = method SP request-target SP
         * HTTP-version; method = token (case-sensitive, RFC 9110 §9.1). */
        if (is_tchar(c)) {
            if (p->tok_len >= HTTP_METHOD_MAX) {
                /* RFC 9112 §3: a method longer than any implemented: 501 */
                return perr(p, 501);
            }
            p->tok[p->tok_len++] = (char)c;
            return WISP_HTTP_MORE;
        }
        if (c != ' ') {
            return perr(p, 400);
        }
        if (tok_is(p, "GET")) {
            r->method = WISP_HTTP_M_GET;
        } else if (tok_is(p, "HEAD")) {
            r->method = WISP_HTTP_M_HEAD;
        } else {
            r->method = WISP_HTTP_M_OTHER;
        }
        p->tok_len = 0;
        p->state = PS_TARGET;
        return WISP_HTTP_MORE;
    case PS_TARGET:
        if (c == ' ') {
            if (r->target_len == 0u) {
                return perr(p, 400);   /* two spaces: no target */
            }
            r->target[r->target_len] = '\0';
            p->state = PS_VERSION;
            p->sub = 0;
            return WISP_HTTP_MORE;
        }
        /* RFC 9112 §3.2: the target holds no whitespace or controls. */
        if (c < 0x21u || c > 0x7Eu) {
            return perr(p, 400);
        }
        if (r->target_len >= WISP_HTTPD_PATH_MAX) {
            return perr(p, 414);   /* RFC 9110 §15.5.15 URI Too Long */
        }
        r->target[r->target_len++] = (char)c;
        return WISP_HTTP_MORE;
    case PS_VERSION:
        /* RFC 9112 §2.3: HTTP-version = HTTP-name "/" DIGIT "." DIGIT,
         * HTTP-name = %s"HTTP" (case-sensitive). */
        if (p->sub < 5u) {
            if (c != (uint8_t)"HTTP/"[p->sub]) {
                return perr(p, 400);
            }
        } else if (p->sub == 5u || p->sub == 7u) {
            if (c < '0' || c > '9') {
                return perr(p, 400);
            }
            if (p->sub == 5u) {
                r->ver_major = (uint8_t)(c - '0');
            } else {
                r->ver_minor = (uint8_t)(c - '0');
            }
        } else if (p->sub == 6u) {
            if (c != '.') {
                return perr(p, 400);
            }
        } else {
            if (c != '\r') {
                return perr(p, 400);
            }
            /* RFC 9110 §6.2 / §15.6.6: only major version 1 is served. */
            if (r->ver_major != 1u) {
                return perr(p, 505);
            }
            p->state = PS_RL_LF;
            return WISP_HTTP_MORE;
        }
        p->sub++;
        return WISP_HTTP_MORE;
    case PS_RL_LF:
    case PS_VALUE_LF:
        /* RFC 9112 §2.2: a bare CR is invalid (we take no bare LF either:
         * lines end with CRLF). */
        if (c != '\n') {
            return perr(p, 400);
        }
        if (p->state == PS_VALUE_LF) {
            st = value_end(p);
            if (st != 0u) {
                return perr(p, st);
            }
        }
        p->state = PS_FIELD_START;
        return WISP_HTTP_MORE;
    case PS_FIELD_START:
        if (c == '\r') {
            p->state = PS_END_LF;
            return WISP_HTTP_MORE;
        }
        /* RFC 9112 §5.2: a server MUST reject obs-fold (a line starting with
         * whitespace) with 400 (or replace it; we reject); RFC 9112 §2.2:
         * whitespace before the first field likewise. */
        if (!is_tchar(c)) {
            return perr(p, 400);
        }
        if (++p->fields > WISP_HTTPD_MAX_FIELDS) {
            return perr(p, 431);
        }
        p->state = PS_NAME;
        p->tok[0] = (char)lower(c);
        p->tok_len = 1;
        return WISP_HTTP_MORE;
    case PS_NAME:
        if (is_tchar(c)) {
            if (p->tok_len == TOK_OVERFLOW || p->tok_len >= sizeof(p->tok)) {
                p->tok_len = TOK_OVERFLOW;   /* longer than any field we know */
            } else {
                p->tok[p->tok_len++] = (char)lower(c);
            }
            return WISP_HTTP_MORE;
        }
        /* RFC 9112 §5.1: "No whitespace is allowed between the field name
         * and colon"; a server MUST reject such a message with 400. */
        if (c != ':') {
            return perr(p, 400);
        }
        field_begin(p);
        p->state = PS_OWS;
        return WISP_HTTP_MORE;
    case PS_OWS:
        if (c == ' ' || c == '\t') {
            return WISP_HTTP_MORE;
        }
        if (c == '\r') {
            p->state = PS_VALUE_LF;
            return WISP_HTTP_MORE;
        }
        if (!is_field_vchar(c)) {
            return perr(p, 400);
        }
        p->state = PS_VALUE;
        st = value_char(p, c);
        return st != 0u ? perr(p, st) : WISP_HTTP_MORE;
    case PS_VALUE:
        if (c == '\r') {
            p->state = PS_VALUE_LF;
            return WISP_HTTP_MORE;
        }
        /* RFC 9110 §5.5: field-value = *field-content; CR, LF and NUL (and
         * other controls) are invalid: rejected. */
        if (!is_field_vchar(c) && c != ' ' && c != '\t') {
            return perr(p, 400);
        }
        st = value_char(p, c);
        return st != 0u ? perr(p, st) : WISP_HTTP_MORE;
    case PS_END_LF:
        if (c != '\n') {
            return perr(p, 400);
        }
        return head_done(p);
    case PS_DONE:
        return WISP_HTTP_DONE;
    default:
        return WISP_HTTP_ERROR;
    }
}

enum wisp_http_pres wisp_http_parse(struct wisp_http_parser *p, const uint8_t *data, uint32_t len, uint32_t *used)
{
    uint32_t i;
    *used = 0;
    if (p->state == PS_DONE) {
        return WISP_HTTP_DONE;
    }
    if (p->state == PS_ERROR) {
        return WISP_HTTP_ERROR;
    }
    for (i = 0; i < len; i++) {
        enum wisp_http_pres r = parse_byte(p, data[i]);
        if (r != WISP_HTTP_MORE) {
            *used = i + 1u;
            return r;
        }
    }
    *used = len;
    return WISP_HTTP_MORE;
}

const char *wisp_http_reason(unsigned status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "";
    }
}

/* ============================================================ text output */

/* A bounded text writer (no stdio): what does not fit sets full. */
struct wbuf {
    char *b;
    uint32_t cap, len;
    bool full;
};

static void w_ch(struct wbuf *w, char c)
{
    if (w->len < w->cap) {
        w->b[w->len++] = c;
    } else {
        w->full = true;
    }
}

static void w_str(struct wbuf *w, const char *s)
{
    while (*s != '\0') {
        w_ch(w, *s++);
    }
}

static void w_u64(struct wbuf *w, uint64_t v)
{
    char t[21];
    unsigned i = 0;
    do {
        t[i++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (i > 0u) {
        w_ch(w, t[--i]);
    }
}

static void w_ip(struct wbuf *w, wisp_ip4_t a)
{
    char t[16];
    w_str(w, wisp_ip4_ntoa(a, t));
}

/* A string escaped for HTML text or a JSON string. */
static void w_esc(struct wbuf *w, const char *s, bool html)
{
    static const char hex[] = "0123456789abcdef";
    for (; *s != '\0'; s++) {
        uint8_t c = (uint8_t)*s;
        if (html) {
            switch (c) {
            case '<': w_str(w, "&lt;"); break;
            case '>': w_str(w, "&gt;"); break;
            case '&': w_str(w, "&amp;"); break;
            case '"': w_str(w, "&quot;"); break;
            default: w_ch(w, (char)c); break;
            }
        } else if (c == '"' || c == '\\') {
            w_ch(w, '\\');
            w_ch(w, (char)c);
        } else if (c < 0x20u || c >= 0x7Fu) {
            /* RFC 8259 §7 (non-ASCII shown as escapes of its bytes) */
            w_str(w, "\\u00");
            w_ch(w, hex[c >> 4]);
            w_ch(w, hex[c & 15u]);
        } else {
            w_ch(w, (char)c);
        }
    }
}

/* ============================================================ status page */

/* Room kept for the end of the page while rows are added. */
#define STATUS_TAIL 128u

/* Render ctx: rows are added while they fit below cap - STATUS_TAIL. */
struct srender {
    struct wbuf w;
    bool html;
    bool truncated;
    unsigned nrow;    /* rows of the current JSON array / object */
};

/* Start a row: remember where it began. */
static uint32_t row_begin(struct srender *r)
{
    return r->w.len;
}

/* End a row: when it did not fit, take it back and stop adding rows. */
static bool row_end(struct srender *r, uint32_t mark)
{
    if (r->w.full) {
        r->w.len = mark;
        r->w.full = false;
        r->truncated = true;
        return false;
    }
    r->nrow++;
    return true;
}

static void cell_u(struct srender *r, const char *name, uint64_t v)
{
    if (r->html) {
        w_str(&r->w, "<td>");
        w_u64(&r->w, v);
        w_str(&r->w, "</td>");
    } else {
        w_str(&r->w, ",\"");
        w_str(&r->w, name);
        w_str(&r->w, "\":");
        w_u64(&r->w, v);
    }
}

static void json_sep(struct srender *r)
{
    if (r->nrow > 0u) {
        w_ch(&r->w, ',');
    }
}

static bool name_has_drop(const char *n)
{
    for (; *n != '\0'; n++) {
        if (strncmp(n, "drop", 4) == 0) {
            return true;
        }
    }
    return false;
}

static void render_http(struct srender *r, const struct wisp_httpd *h)
{
    const struct wisp_httpd_stats *st = &h->st;
    static const char *const names[] = { "connections", "active", "active_high", "refused", "requests",
                                         "reused", "2xx", "3xx", "4xx", "5xx", "timeouts", "bytes_rx",
                                         "bytes_tx", "head_timeouts", "reclaimed", "capped" };
    uint64_t v[16];
    unsigned i;

    v[0] = st->connections;
    v[1] = st->active;
    v[2] = st->active_high;
    v[3] = st->refused;
    v[4] = st->requests;
    v[5] = st->reused;
    v[6] = st->responses[2];
    v[7] = st->responses[3];
    v[8] = st->responses[4];
    v[9] = st->responses[5];
    v[10] = st->timeouts;
    v[11] = st->bytes_rx;
    v[12] = st->bytes_tx;
    v[13] = st->head_timeouts;
    v[14] = st->reclaimed;
    v[15] = st->capped;
    if (r->html) {
        /* sixteen counters: a wrapping list (fits a phone), not a table row */
        w_str(&r->w, "<section id=\"s-http\"><h2>HTTP server (port ");
        w_u64(&r->w, h->port);
        w_str(&r->w, ")</h2>\n<div class=\"kv\">");
        for (i = 0; i < 16u; i++) {
            w_str(&r->w, "<span><b>");
            w_str(&r->w, names[i]);
            w_str(&r->w, "</b> ");
            w_u64(&r->w, v[i]);
            w_str(&r->w, "</span>");
        }
        w_str(&r->w, "</div></section>\n");
    } else {
        w_str(&r->w, ",\"http\":{\"port\":");
        w_u64(&r->w, h->port);
        for (i = 0; i < 16u; i++) {
            cell_u(r, names[i], v[i]);
        }
        w_ch(&r->w, '}');
    }
}

static void render_netifs(struct srender *r, struct wisp_stack *s)
{
    const struct wisp_netif *nif;
    w_str(&r->w, r->html ? "<section id=\"s-if\"><h2>Interfaces</h2>\n<div class=\"tw\"><table><tr><th>name</th><th>address</th><th>mtu</th>"
                           "<th>up</th><th>link</th><th>rx frames</th><th>rx bytes</th><th>rx drops</th>"
                           "<th>tx frames</th><th>tx bytes</th><th>tx drops</th></tr>\n"
                         : ",\"interfaces\":[");
    r->nrow = 0;
    for (nif = wisp_stack_netif_next(s, NULL); nif != NULL && !r->truncated; nif = wisp_stack_netif_next(s, nif)) {
        uint32_t mark = row_begin(r);
        const struct wisp_netif_stats *st = wisp_netif_get_stats(nif);
        unsigned prefix = 0;
        wisp_ip4_t m = wisp_ntohl(wisp_netif_ip4_mask(nif));
        while (prefix < 32u && (m & (0x80000000u >> prefix)) != 0u) {
            prefix++;
        }
        if (r->html) {
            w_str(&r->w, "<tr><td>");
            w_esc(&r->w, wisp_netif_name(nif), true);
            w_str(&r->w, "</td><td>");
            w_ip(&r->w, wisp_netif_ip4_addr(nif));
            w_ch(&r->w, '/');
            w_u64(&r->w, prefix);
            w_str(&r->w, "</td>");
            cell_u(r, "mtu", wisp_netif_mtu(nif));
            w_str(&r->w, (wisp_netif_flags(nif) & WISP_NETIF_F_UP) ? "<td>yes</td>" : "<td>no</td>");
            w_str(&r->w, (wisp_netif_flags(nif) & WISP_NETIF_F_LINK_UP) ? "<td>yes</td>" : "<td>no</td>");
        } else {
            json_sep(r);
            w_str(&r->w, "{\"name\":\"");
            w_esc(&r->w, wisp_netif_name(nif), false);
            w_str(&r->w, "\",\"addr\":\"");
            w_ip(&r->w, wisp_netif_ip4_addr(nif));
            w_str(&r->w, "\",\"prefix\":");
            w_u64(&r->w, prefix);
            w_str(&r->w, ",\"gateway\":\"");
            w_ip(&r->w, wisp_netif_ip4_gw(nif));
            w_ch(&r->w, '"');
            cell_u(r, "index", wisp_netif_index(nif));
            cell_u(r, "mtu", wisp_netif_mtu(nif));
            w_str(&r->w, (wisp_netif_flags(nif) & WISP_NETIF_F_UP) ? ",\"up\":true" : ",\"up\":false");
            w_str(&r->w, (wisp_netif_flags(nif) & WISP_NETIF_F_LINK_UP) ? ",\"link\":true" : ",\"link\":false");
        }
        cell_u(r, "rx_frames", st->rx_frames);
        cell_u(r, "rx_bytes", st->rx_bytes);
        cell_u(r, "rx_drops", st->rx_drops);
        cell_u(r, "tx_frames", st->tx_frames);
        cell_u(r, "tx_bytes", st->tx_bytes);
        cell_u(r, "tx_drops", st->tx_drops);
        w_str(&r->w, r->html ? "</tr>\n" : "}");
        (void)row_end(r, mark);
    }
    w_str(&r->w, r->html ? "</table></div></section>\n" : "]");
}

static void w_endpoint(struct wbuf *w, const wisp_ipaddr_t *ip, uint16_t port)
{
    w_ip(w, wisp_ipaddr_ip4(ip));
    w_ch(w, ':');
    w_u64(w, port);
}

static void render_tcp(struct srender *r, struct wisp_stack *s)
{
    const struct wisp_tcp_pcb *pcb;
    unsigned n = 0;
    w_str(&r->w, r->html ? "<section id=\"s-tcp\"><h2>TCP connections</h2>\n<div class=\"tw\"><table><tr><th>state</th><th>local</th><th>peer</th>"
                           "<th>bytes acked</th><th>bytes received</th><th>unacked</th><th>srtt ms</th>"
                           "<th>cwnd</th><th>retransmits</th></tr>\n"
                         : ",\"tcp\":[");
    r->nrow = 0;
    for (pcb = wisp_stack_tcp_next(s, NULL); pcb != NULL && !r->truncated && n < 100000u;
         pcb = wisp_stack_tcp_next(s, pcb), n++) {
        uint32_t mark = row_begin(r);
        struct wisp_tcp_info info;
        wisp_ipaddr_t lip, rip;
        uint16_t lport, rport;
        wisp_tcp_get_info(pcb, &info);
        wisp_tcp_local(pcb, &lip, &lport);
        wisp_tcp_remote(pcb, &rip, &rport);
        if (r->html) {
            w_str(&r->w, "<tr><td>");
            w_str(&r->w, wisp_tcp_state_str(wisp_tcp_state(pcb)));
            w_str(&r->w, "</td><td>");
            w_endpoint(&r->w, &lip, lport);
            w_str(&r->w, "</td><td>");
            w_endpoint(&r->w, &rip, rport);
            w_str(&r->w, "</td>");
        } else {
            json_sep(r);
            w_str(&r->w, "{\"state\":\"");
            w_str(&r->w, wisp_tcp_state_str(wisp_tcp_state(pcb)));
            w_str(&r->w, "\",\"local\":\"");
            w_endpoint(&r->w, &lip, lport);
            w_str(&r->w, "\",\"peer\":\"");
            w_endpoint(&r->w, &rip, rport);
            w_ch(&r->w, '"');
        }
        cell_u(r, "bytes_acked", info.bytes_acked);
        cell_u(r, "bytes_received", info.bytes_received);
        cell_u(r, "unacked", info.unacked);
        cell_u(r, "srtt_ms", info.srtt_ms);
        cell_u(r, "cwnd", info.cwnd);
        cell_u(r, "retransmits", info.retransmits);
        w_str(&r->w, r->html ? "</tr>\n" : "}");
        (void)row_end(r, mark);
    }
    w_str(&r->w, r->html ? "</table></div></section>\n" : "]");
}

static void render_pools(struct srender *r, struct wisp_stack *s)
{
    unsigned i;
    w_str(&r->w, r->html ? "<section id=\"s-pools\"><h2>Pools</h2>\n<div class=\"tw\"><table><tr><th>pool</th><th>used</th><th>high</th><th>failed</th>"
                           "<th>size</th></tr>\n"
                         : ",\"pools\":[");
    r->nrow = 0;
    for (i = 0; i < (unsigned)WISP_POOL_COUNT && !r->truncated; i++) {
        struct wisp_pool_stats ps, *pl = &ps;
        uint32_t mark = row_begin(r);
        const char *name;
        (void)wisp_stack_pool_stats(s, i, &ps);
        name = pl->name != NULL ? pl->name : "?";
        if (r->html) {
            w_str(&r->w, "<tr><td>");
            w_esc(&r->w, name, true);
            w_str(&r->w, "</td>");
        } else {
            json_sep(r);
            w_str(&r->w, "{\"name\":\"");
            w_esc(&r->w, name, false);
            w_ch(&r->w, '"');
        }
        cell_u(r, "used", pl->used);
        cell_u(r, "high", pl->high);
        cell_u(r, "failed", pl->failed);
        cell_u(r, "size", pl->count);
        w_str(&r->w, r->html ? "</tr>\n" : "}");
        (void)row_end(r, mark);
    }
    w_str(&r->w, r->html ? "</table></div></section>\n" : "]");
}

static void render_drops(struct srender *r, struct wisp_stack *s)
{
    unsigned i;
    w_str(&r->w, r->html ? "<section id=\"s-drops\"><h2>Drop counters (non-zero)</h2>\n<div class=\"tw\"><table><tr><th>counter</th><th>value</th></tr>\n"
                         : ",\"drops\":{");
    r->nrow = 0;
    for (i = 0; i < (unsigned)WISP_CTR_COUNT && !r->truncated; i++) {
        const char *name = wisp_counter_name(i);
        uint32_t mark;
        if (wisp_stack_counter(s, i) == 0u || name == NULL || !name_has_drop(name)) {
            continue;
        }
        mark = row_begin(r);
        if (r->html) {
            w_str(&r->w, "<tr><td>");
            w_esc(&r->w, name, true);
            w_str(&r->w, "</td><td>");
            w_u64(&r->w, wisp_stack_counter(s, i));
            w_str(&r->w, "</td></tr>\n");
        } else {
            json_sep(r);
            w_ch(&r->w, '"');
            w_esc(&r->w, name, false);
            w_str(&r->w, "\":");
            w_u64(&r->w, wisp_stack_counter(s, i));
        }
        (void)row_end(r, mark);
    }
    w_str(&r->w, r->html ? "</table></div></section>\n" : "}");
}

uint32_t wisp_httpd_render_status(struct wisp_stack *s, const struct wisp_httpd *h, bool html, char *buf,
                                  uint32_t cap)
{
    struct srender r;

    memset(&r, 0, sizeof(r));
    r.html = html;
    r.w.b = buf;
    if (cap < 2u * STATUS_TAIL) {
        return 0;
    }
    r.w.cap = cap - STATUS_TAIL;
    if (html) {
        /* The page works without scripts (these tables); status.js then
         * refreshes every section from /status.json once a second. */
        w_str(&r.w, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>wisp status</title>"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                    "<link rel=\"icon\" href=\"data:,\"><link rel=\"stylesheet\" href=\"/style.css\">"
                    "<script src=\"/status.js\" defer></script></head>\n<body>\n<h1>wisp status</h1>\n"
                    "<p>stack clock: <span id=\"now\">");
        w_u64(&r.w, wisp_now(s));
        w_str(&r.w, "</span> ms <span id=\"live\" class=\"stale\">static page</span></p>\n");
    } else {
        w_str(&r.w, "{\"now_ms\":");
        w_u64(&r.w, wisp_now(s));
    }
    if (h != NULL) {
        render_http(&r, h);
    }
    if (r.w.full) {
        r.truncated = true;   /* (cannot happen with cap >= 2 * STATUS_TAIL + the head) */
        r.w.full = false;
    }
    /* Sections while they fit; each section's own head and end are short
     * and covered by STATUS_TAIL with the page's end. */
    if (!r.truncated) {
        render_netifs(&r, s);
    }
    if (!r.truncated) {
        render_tcp(&r, s);
    }
    if (!r.truncated) {
        render_pools(&r, s);
    }
    if (!r.truncated) {
        render_drops(&r, s);
    }
    r.w.cap = cap;
    r.w.full = false;
    if (html) {
        w_str(&r.w, r.truncated ? "<p>(truncated)</p>\n</body></html>\n" : "</body></html>\n");
    } else {
        w_str(&r.w, r.truncated ? ",\"truncated\":true}\n" : ",\"truncated\":false}\n");
    }
    return r.w.len;
}

/* ================================================================= server */

enum { CONN_OPEN = 1, CONN_LINGER };

/* What became of a connection after a step. */
enum { C_ALIVE = 0, C_GONE, C_ABORTED };

/* Response kinds beyond the file-table kinds. */
#define R_ERROR 0x80u

/* Largest zero-copy write (bytes): bounded so a write never needs more
 * segments than the pool has. Copied writes take WISP_HTTPD_CHUNK. */
#define HTTPD_ROM_WRITE WISP_MIN(16384u, (uint32_t)WISP_TCP_SND_BUF)

/* Bound of steps per pump call (responses completed and buffers parsed). */
#define HTTPD_PUMP_STEPS 256u

/* Poll interval (WISP_TCP_POLL_UNIT_MS units). */
#define HTTPD_POLL 1u

static struct wisp_httpd_conn *conn_alloc(struct wisp_httpd *h)
{
    unsigned i, n = h->opt.max_conns;
    for (i = 0; i < n; i++) {
        struct wisp_httpd_conn *c = &h->conns[i];
        if (c->h == NULL) {
            memset(c, 0, sizeof(*c));
            c->h = h;
            return c;
        }
    }
    return NULL;
}

static void status_release(struct wisp_httpd_conn *c)
{
    struct wisp_httpd *h = c->h;
    unsigned i;
    if (h->status_owner != c) {
        return;
    }
    h->status_owner = NULL;
    if (!h->running) {
        return;
    }
    /* Responses that waited for the buffer resume from a timer, outside
     * of this connection's callbacks. */
    for (i = 0; i < h->opt.max_conns; i++) {
        if (h->conns[i].h != NULL && h->conns[i].wait_status) {
            wisp_timer_arm(h->s, &h->kick_tmr, 0, httpd_kick);
            break;
        }
    }
}

/* Return the record: free held input, count how it ended. The PCB is not
 * touched (closed, aborted or already freed). */
static void conn_release(struct wisp_httpd_conn *c, int how)
{
    struct wisp_httpd *h = c->h;
    wisp_pbuf_free(c->rxq);
    c->rxq = NULL;
    status_release(c);
    if (h->st.active > 0u) {
        h->st.active--;
    }
    if (how == C_GONE) {
        h->st.closed++;
    } else if (how == C_ABORTED) {
        h->st.aborted++;
    } else {
        h->st.resets++;
    }
    memset(c, 0, sizeof(*c));
}

static int conn_abort(struct wisp_httpd_conn *c)
{
    struct wisp_tcp_pcb *pcb = c->pcb;
    wisp_tcp_arg(pcb, NULL);
    wisp_tcp_abort(pcb);
    conn_release(c, C_ABORTED);
    return C_ABORTED;
}

/* Close now (FIN after queued data; the stack finishes the handshake). */
static int conn_close_now(struct wisp_httpd_conn *c)
{
    struct wisp_tcp_pcb *pcb = c->pcb;
    wisp_err_t err;
    wisp_tcp_arg(pcb, NULL);
    err = wisp_tcp_close(pcb);
    if (err == WISP_ERR_MEM) {
        wisp_tcp_arg(pcb, c);
        c->close_pending = 2;   /* retried from the poll callback */
        return C_ALIVE;
    }
    if (err != WISP_OK) {
        wisp_tcp_arg(pcb, c);
        return conn_abort(c);
    }
    conn_release(c, C_GONE);
    return C_GONE;
}

/* Consume n bytes of the input queue (parsed or discarded) and reopen the
 * window by them. */
static void rx_consume(struct wisp_httpd_conn *c, uint32_t n)
{
    struct wisp_pbuf *b = c->rxq;
    c->rxq_off = (uint16_t)(c->rxq_off + n);
    if (n > 0u) {
        wisp_tcp_recved(c->pcb, n);
    }
    if (c->rxq_off >= b->len) {
        /* drop the first buffer; the chain behind it keeps a reference */
        struct wisp_pbuf *next = b->next;
        if (next != NULL) {
            wisp_pbuf_ref(next);
        }
        wisp_pbuf_free(b);
        c->rxq = next;
        c->rxq_off = 0;
    }
}

/* Drop everything received and not parsed. */
static void rx_discard(struct wisp_httpd_conn *c)
{
    unsigned guard = 0;
    while (c->rxq != NULL && guard++ < 100000u) {
        rx_consume(c, (uint32_t)c->rxq->len - c->rxq_off);
    }
}

/* The last response is queued and the connection is to end: our FIN after
 * it, then a lingering close (RFC 9112 §9.6: a server closes its sending
 * side first and keeps reading until the client closes, so that the
 * client's unread data does not reset the connection before it has read
 * the response). */
static int conn_finish(struct wisp_httpd_conn *c)
{
    wisp_err_t err;
    rx_discard(c);
    c->body_left = 0;
    if (c->peer_closed) {
        return conn_close_now(c);
    }
    err = wisp_tcp_shutdown(c->pcb, false, true);
    if (err == WISP_ERR_MEM) {
        c->close_pending = 1;
        return C_ALIVE;
    }
    if (err != WISP_OK) {
        return conn_abort(c);
    }
    c->close_pending = 0;
    c->phase = CONN_LINGER;
    c->linger_ms = wisp_now(c->h->s);
    return C_ALIVE;
}

/* ---------------------------------------------------------- responses */

static void resp_begin(struct wisp_httpd_conn *c, uint16_t status, uint8_t kind, const struct wisp_httpd_file *f,
                       bool close)
{
    c->r_active = 1;
    c->r_head_sent = 0;
    c->r_status = status;
    c->r_kind = kind;
    c->r_file = f;
    c->r_off = 0;
    c->r_len = (f != NULL && (kind == WISP_HTTPD_ROM || kind == WISP_HTTPD_GEN)) ? f->len : 0u;
    c->r_close = close ? 1u : 0u;
    c->r_head_only = (c->ps.req.method == WISP_HTTP_M_HEAD) ? 1u : 0u;
}

/* An error response: the head and a short text body in one write; the
 * connection closes after it unless keep says otherwise. */
static void resp_error(struct wisp_httpd_conn *c, uint16_t status, bool keep)
{
    c->body_left = keep ? c->body_left : 0u;
    resp_begin(c, status, R_ERROR, NULL, !keep);
}

/* Case-insensitive prefix match. */
static bool prefix_ci(const char *s, const char *pre)
{
    for (; *pre != '\0'; s++, pre++) {
        if (lower((uint8_t)*s) != (uint8_t)*pre) {
            return false;
        }
    }
    return true;
}

/* A complete request head: choose the response. */
static void req_dispatch(struct wisp_httpd_conn *c)
{
    struct wisp_httpd *h = c->h;
    const struct wisp_http_req *r = &c->ps.req;
    const struct wisp_httpd_file *files;
    const char *path = r->target;
    unsigned i, n, plen;
    bool keep;

    h->st.requests++;
    if (c->nreq > 0u) {
        h->st.reused++;
    }
    c->nreq++;
    /* RFC 9112 §9.3: HTTP/1.1 persists unless "close"; HTTP/1.0 only with
     * "keep-alive" (RFC 9112 Appendix C.2.2). */
    if (r->ver_minor >= 1u) {
        keep = !r->conn_close;
    } else {
        keep = r->conn_keepalive && !r->conn_close;
    }
    if (c->peer_closed) {
        keep = false;
    }
    c->body_left = r->has_cl ? r->content_length : 0u;
    if (r->expect && c->body_left > 0u) {
        /* RFC 9110 §10.1.1: we answer without asking for the content; the
         * client may or may not send it: close after the response, the
         * lingering close reads whatever comes. */
        keep = false;
        c->body_left = 0;
    }
    /* RFC 9110 §9.3.1/§9.3.2: GET and HEAD; RFC 9110 §15.5.6: 405 for the
     * others, with Allow. */
    if (r->method != WISP_HTTP_M_GET && r->method != WISP_HTTP_M_HEAD) {
        resp_error(c, 405, keep);
        return;
    }
    /* RFC 9112 §3.2.1 origin-form; §3.2.2: a server MUST accept the
     * absolute-form (the authority is ignored: one site). */
    if (path[0] != '/') {
        if (prefix_ci(path, "http://") || prefix_ci(path, "https://")) {
            const char *p = path + (lower((uint8_t)path[4]) == 's' ? 8 : 7);
            while (*p != '\0' && *p != '/' && *p != '?') {
                p++;
            }
            path = (*p == '/') ? p : "/";
        } else {
            resp_error(c, 400, false);
            return;
        }
    }
    plen = 0;
    while (path[plen] != '\0' && path[plen] != '?' && path[plen] != '#') {
        plen++;
    }
    if (plen == 1u) {
        path = "/index.html";
        plen = 11;
    }
    files = wisp_httpd_files(&n);
    for (i = 0; i < n; i++) {
        if (strlen(files[i].path) == plen && memcmp(files[i].path, path, plen) == 0) {
            resp_begin(c, 200, files[i].kind, &files[i], !keep);
            return;
        }
    }
    resp_error(c, 404, keep);
}

/* The response head (and for errors the body) into t; returns its length. */
static uint32_t resp_head(struct wisp_httpd_conn *c, char *t, uint32_t cap)
{
    struct wbuf w;
    const char *reason = wisp_http_reason(c->r_status);
    const struct wisp_http_req *r = &c->ps.req;
    bool err = (c->r_kind == R_ERROR);
    uint32_t body_len = c->r_len;

    w.b = t;
    w.cap = cap;
    w.len = 0;
    w.full = false;
    if (err) {
        body_len = 3u + 1u + (uint32_t)strlen(reason) + 1u;   /* "404 Not Found\n" */
    }
    /* RFC 9110 §6.2: a server sends its highest conformant version. */
    w_str(&w, "HTTP/1.1 ");
    w_u64(&w, c->r_status);
    w_ch(&w, ' ');
    w_str(&w, reason);
    w_str(&w, "\r\nServer: wisp\r\nContent-Type: ");
    w_str(&w, err ? "text/plain; charset=utf-8" : c->r_file->type);
    /* RFC 9110 §8.6: Content-Length of what GET would send, also for HEAD. */
    w_str(&w, "\r\nContent-Length: ");
    w_u64(&w, body_len);
    if (c->r_status == 405u) {
        w_str(&w, "\r\nAllow: GET, HEAD");   /* RFC 9110 §15.5.6: MUST */
    }
    if (c->r_kind == WISP_HTTPD_STATUS_HTML || c->r_kind == WISP_HTTPD_STATUS_JSON || err) {
        w_str(&w, "\r\nCache-Control: no-store");
    }
    /* RFC 9112 §9.6: "close" on the last response; a 1.0 client that asked
     * for keep-alive is told so (RFC 9112 Appendix C.2.2). */
    if (c->r_close) {
        w_str(&w, "\r\nConnection: close");
    } else if (r->ver_minor == 0u) {
        w_str(&w, "\r\nConnection: keep-alive");
    }
    w_str(&w, "\r\n\r\n");
    if (err && !c->r_head_only) {
        w_u64(&w, c->r_status);
        w_ch(&w, ' ');
        w_str(&w, reason);
        w_ch(&w, '\n');
    }
    return w.full ? 0u : w.len;
}

static void resp_log(struct wisp_httpd_conn *c)
{
    struct wisp_httpd *h = c->h;
    struct wisp_httpd_log e;
    unsigned cls = c->r_status / 100u;
    if (cls < WISP_ARRAY_SIZE(h->st.responses)) {
        h->st.responses[cls]++;
    }
    if (h->log == NULL) {
        return;
    }
    e.remote_ip = c->remote_ip;
    e.remote_port = c->remote_port;
    e.status = c->r_status;
    e.method = c->ps.req.method;
    e.keep = c->r_close ? 0u : 1u;
    e.body_bytes = c->r_head_only ? 0u : c->r_len;
    e.target = c->ps.req.target;
    h->log(h->log_ctx, &e);
}

/* Queue as much of the response as the send buffer takes. Returns 1 when
 * all of it is queued, 0 when it waits (sent / poll callback, or the
 * status buffer), -1 when the connection was aborted. */
static int resp_send(struct wisp_httpd_conn *c)
{
    struct wisp_httpd *h = c->h;
    unsigned guard = 0;
    wisp_err_t err;

    if (!c->r_head_sent) {
        char t[400];
        uint32_t n;
        uint8_t flags = WISP_TCP_WRITE_COPY;

        if ((c->r_kind == WISP_HTTPD_STATUS_HTML || c->r_kind == WISP_HTTPD_STATUS_JSON) &&
            h->status_owner != c) {
            if (h->status_owner != NULL) {
                c->wait_status = 1;   /* resumed by the kick timer */
                return 0;
            }
            h->status_owner = c;
            h->status_len = wisp_httpd_render_status(h->s, h, c->r_kind == WISP_HTTPD_STATUS_HTML,
                                                     h->status_buf, WISP_HTTPD_STATUS_MAX);
            c->r_len = h->status_len;
        }
        c->wait_status = 0;
        n = resp_head(c, t, sizeof t);
        if (n == 0u) {
            (void)conn_abort(c);   /* (cannot happen: the head is bounded) */
            return -1;
        }
        if (!c->r_head_only && c->r_kind != R_ERROR && c->r_len > 0u) {
            flags |= WISP_TCP_WRITE_MORE;
        }
        err = wisp_tcp_write(c->pcb, t, n, flags);
        if (err == WISP_ERR_MEM) {
            h->st.write_mem++;
            return 0;
        }
        if (err != WISP_OK) {
            (void)conn_abort(c);
            return -1;
        }
        c->r_head_sent = 1;
        h->st.bytes_tx += n;
        if (c->r_head_only || c->r_kind == R_ERROR) {
            c->r_off = c->r_len;   /* no body (HEAD), or it went with the head */
            if (c->r_kind == R_ERROR && !c->r_head_only) {
                h->st.body_tx += n;
            }
        }
        if (c->r_head_only) {
            status_release(c);
        }
    }
    while (c->r_off < c->r_len && guard++ < 4096u) {
        uint32_t room = wisp_tcp_sndbuf(c->pcb), n = c->r_len - c->r_off;
        uint8_t flags = 0;
        const void *src;

        if (room == 0u) {
            return 0;
        }
        if (c->r_kind == WISP_HTTPD_ROM) {
            n = WISP_MIN(n, WISP_MIN(room, HTTPD_ROM_WRITE));
            src = c->r_file->data + c->r_off;   /* zero-copy: the stack references it */
        } else {
            n = WISP_MIN(n, WISP_MIN(room, (uint32_t)WISP_HTTPD_CHUNK));
            flags = WISP_TCP_WRITE_COPY;
            if (c->r_kind == WISP_HTTPD_GEN) {
                c->r_file->gen(c->r_off, h->scratch, n);
                src = h->scratch;
            } else {
                src = h->status_buf + c->r_off;
            }
        }
        if (c->r_off + n < c->r_len) {
            flags |= WISP_TCP_WRITE_MORE;
        }
        err = wisp_tcp_write(c->pcb, src, n, flags);
        if (err == WISP_ERR_MEM) {
            h->st.write_mem++;
            return 0;
        }
        if (err != WISP_OK) {
            (void)conn_abort(c);
            return -1;
        }
        c->r_off += n;
        h->st.bytes_tx += n;
        h->st.body_tx += n;
    }
    if (c->r_off < c->r_len) {
        return 0;
    }
    status_release(c);
    return 1;
}

/* ---------------------------------------------------------------- pump */

/* Send what can be sent, parse what was received, one response at a time.
 * Returns C_ALIVE, C_GONE (closed, record freed) or C_ABORTED. */
static int conn_pump(struct wisp_httpd_conn *c)
{
    unsigned steps = 0;
    int rc;

    if (c->close_pending == 2u) {
        return conn_close_now(c);
    }
    if (c->close_pending == 1u) {
        return conn_finish(c);
    }
    while (c->phase == CONN_OPEN && steps++ < HTTPD_PUMP_STEPS) {
        if (c->r_active) {
            rc = resp_send(c);
            if (rc < 0) {
                return C_ABORTED;
            }
            if (rc == 0) {
                break;
            }
            resp_log(c);
            c->r_active = 0;
            c->wait_ms = wisp_now(c->h->s);
            c->req_ms = c->wait_ms;   /* a pipelined request already queued starts now */
            if (c->r_close) {
                rc = conn_finish(c);
                if (rc != C_ALIVE) {
                    return rc;
                }
                break;
            }
            wisp_http_parser_init(&c->ps);
            continue;
        }
        if (c->rxq == NULL) {
            break;
        }
        {
            struct wisp_pbuf *b = c->rxq;
            uint32_t avail = (uint32_t)b->len - c->rxq_off, used = 0;
            enum wisp_http_pres res;

            if (avail == 0u) {
                rx_consume(c, 0);
                continue;
            }
            if (c->body_left > 0u) {
                /* the body of the previous request: read and discarded */
                used = WISP_MIN(avail, c->body_left);
                c->body_left -= used;
                rx_consume(c, used);
                continue;
            }
            res = wisp_http_parse(&c->ps, b->payload + c->rxq_off, avail, &used);
            rx_consume(c, used);
            if (res == WISP_HTTP_DONE) {
                req_dispatch(c);
            } else if (res == WISP_HTTP_ERROR) {
                c->h->st.requests++;
                resp_error(c, c->ps.status, false);
            }
        }
    }
    if (c->phase == CONN_OPEN && !c->r_active && c->peer_closed && c->rxq == NULL) {
        /* The client closed its side and every complete request is
         * answered (an incomplete one never will be): close ours. */
        return conn_finish(c);
    }
    (void)wisp_tcp_output(c->pcb);
    return C_ALIVE;
}

/* ----------------------------------------------------------- callbacks */

static wisp_err_t rc_err(int rc)
{
    return rc == C_ABORTED ? WISP_ERR_ABRT : WISP_OK;
}

/* Part of a request is here (head bytes parsed or queued, or a body to
 * read). */
static bool req_started(const struct wisp_httpd_conn *c)
{
    return c->rxq != NULL || c->ps.head_bytes > 0u || c->body_left > 0u;
}

/* 408 for a request that did not complete (RFC 9110 §15.5.9), then close. */
static int req_timeout(struct wisp_httpd_conn *c, uint32_t now)
{
    c->last_ms = now;
    rx_discard(c);
    c->body_left = 0;
    resp_error(c, 408, false);
    return conn_pump(c);
}

static wisp_err_t httpd_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct wisp_httpd_conn *c = (struct wisp_httpd_conn *)arg;
    struct wisp_httpd *h;
    uint16_t len;

    WISP_UNUSED(pcb);
    if (c == NULL || (p != NULL && err != WISP_OK)) {
        wisp_pbuf_free(p);
        return WISP_OK;
    }
    h = c->h;
    if (p == NULL) {
        /* The client closed its direction (RFC 9293 §3.10.4). */
        c->peer_closed = 1;
        if (c->phase == CONN_LINGER) {
            return rc_err(conn_close_now(c));
        }
        return rc_err(conn_pump(c));
    }
    len = p->tot_len;
    if (c->phase == CONN_LINGER) {
        h->st.bytes_rx += len;
        wisp_pbuf_free(p);
        wisp_tcp_recved(c->pcb, len);
        return WISP_OK;
    }
    if (!c->r_active && !req_started(c)) {
        c->req_ms = wisp_now(h->s);   /* the first byte of a request */
    }
    if (c->rxq != NULL) {
        if ((uint32_t)c->rxq->tot_len + len > WISP_HTTPD_RXQ_MAX) {
            /* Enough queued (pipelined requests behind a response): the
             * stack keeps this and offers it again later. */
            return WISP_ERR_MEM;
        }
        wisp_pbuf_cat(c->rxq, p);
    } else {
        c->rxq = p;
        c->rxq_off = 0;
    }
    h->st.bytes_rx += len;
    c->last_ms = wisp_now(h->s);
    return rc_err(conn_pump(c));
}

static wisp_err_t httpd_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct wisp_httpd_conn *c = (struct wisp_httpd_conn *)arg;
    WISP_UNUSED(pcb);
    WISP_UNUSED(len);
    if (c == NULL) {
        return WISP_OK;
    }
    c->last_ms = wisp_now(c->h->s);
    if (c->phase == CONN_LINGER) {
        return WISP_OK;
    }
    return rc_err(conn_pump(c));
}

static wisp_err_t httpd_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct wisp_httpd_conn *c = (struct wisp_httpd_conn *)arg;
    struct wisp_httpd *h;
    uint32_t now;

    WISP_UNUSED(pcb);
    if (c == NULL) {
        return WISP_OK;
    }
    h = c->h;
    now = wisp_now(h->s);
    if (c->phase == CONN_LINGER) {
        if (c->close_pending == 2u || now - c->linger_ms >= h->opt.linger_ms) {
            return rc_err(conn_close_now(c));
        }
        return WISP_OK;
    }
    if (!c->r_active && c->close_pending == 0u && req_started(c) && now - c->req_ms >= h->opt.head_ms) {
        /* The request deadline: bytes that trickle in (slowloris) keep the
         * idle timer from firing, not this one. */
        h->st.timeouts++;
        h->st.head_timeouts++;
        return rc_err(req_timeout(c, now));
    }
    if (now - c->last_ms >= h->opt.idle_ms) {
        h->st.timeouts++;
        if (c->r_active) {
            /* A response that does not move (the client reads nothing). */
            (void)conn_abort(c);
            return WISP_ERR_ABRT;
        }
        if (req_started(c)) {
            /* RFC 9110 §15.5.9: 408 for a request that did not complete. */
            return rc_err(req_timeout(c, now));
        }
        /* RFC 9112 §9.5: an idle persistent connection is closed
         * gracefully. */
        return rc_err(conn_close_now(c));
    }
    return rc_err(conn_pump(c));
}

static void httpd_err(void *arg, wisp_err_t err)
{
    struct wisp_httpd_conn *c = (struct wisp_httpd_conn *)arg;
    if (c == NULL) {
        return;
    }
    c->pcb = NULL;
    /* WISP_ERR_CLSD: both directions closed while we still held the PCB
     * (after our shutdown): a normal end. */
    conn_release(c, err == WISP_ERR_CLSD ? C_GONE : -1);
}

/* A record for a new connection from ip (httpd.h, reclaim.h): reclaiming
 * one if need be -- one whose response is being sent only when that
 * response has not moved for reclaim_ms; the age of the others is the
 * time since they started waiting for a request. NULL: refused
 * (counted). */
static struct wisp_httpd_conn *conn_admit(struct wisp_httpd *h, const wisp_ipaddr_t *ip)
{
    struct wisp_reclaim_rec r[WISP_HTTPD_MAX_CONNS];
    struct wisp_httpd_conn *c = NULL;
    unsigned i, n = h->opt.max_conns;
    uint32_t now = wisp_now(h->s);
    bool capped;
    int v = -1;

    for (i = 0; i < n; i++) {
        const struct wisp_httpd_conn *x = &h->conns[i];
        r[i].used = x->h != NULL;
        r[i].ip = wisp_ipaddr_ip4(&x->remote_ip);
        r[i].idle_ms = now - (x->r_active ? x->last_ms : x->wait_ms);
        /* a response being sent only when it is stuck (the client reads
         * nothing) */
        r[i].takeable = x->h != NULL && x->pcb != NULL && (!x->r_active || r[i].idle_ms >= h->opt.reclaim_ms);
    }
    capped = wisp_reclaim_count(r, n, wisp_ipaddr_ip4(ip)) >= h->opt.per_source;
    if (!capped) {
        c = conn_alloc(h);
    }
    if (c == NULL) {
        v = wisp_reclaim_pick(r, n, wisp_ipaddr_ip4(ip), capped, h->opt.reclaim_ms);
    }
    if (v >= 0) {
        h->st.reclaimed++;
        (void)conn_abort(&h->conns[v]);
        c = conn_alloc(h);
    }
    if (c == NULL) {
        h->st.refused++;
        if (capped) {
            h->st.capped++;
        }
    }
    return c;
}

static wisp_err_t httpd_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct wisp_httpd *h = (struct wisp_httpd *)arg;
    struct wisp_httpd_conn *c;

    if (h == NULL || newpcb == NULL || err != WISP_OK) {
        return err != WISP_OK ? err : WISP_ERR_VAL;
    }
    {
        wisp_ipaddr_t rip;
        uint16_t rport = 0;
        memset(&rip, 0, sizeof rip);
        wisp_tcp_remote(newpcb, &rip, &rport);
        c = conn_admit(h, &rip);
        if (c == NULL) {
            return WISP_ERR_MEM;   /* declined: the stack resets it */
        }
        c->remote_ip = rip;
        c->remote_port = rport;
    }
    c->pcb = newpcb;
    c->phase = CONN_OPEN;
    c->last_ms = wisp_now(h->s);
    c->wait_ms = c->last_ms;
    c->req_ms = c->last_ms;
    wisp_http_parser_init(&c->ps);
    h->st.connections++;
    h->st.active++;
    if (h->st.active > h->st.active_high) {
        h->st.active_high = h->st.active;
    }
    wisp_tcp_arg(newpcb, c);
    wisp_tcp_recv(newpcb, httpd_recv);
    wisp_tcp_sent(newpcb, httpd_sent);
    wisp_tcp_err(newpcb, httpd_err);
    wisp_tcp_poll(newpcb, httpd_poll, HTTPD_POLL);
    /* Every response ends with a write without WISP_TCP_WRITE_MORE: send
     * it at once (pipelined and keep-alive responses are short). */
    wisp_tcp_nodelay(newpcb, true);
    return WISP_OK;
}

/* Resume responses that waited for the status buffer. */
static void httpd_kick(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_httpd *h = (struct wisp_httpd *)(void *)((char *)t - offsetof(struct wisp_httpd, kick_tmr));
    unsigned i;
    WISP_UNUSED(s);
    for (i = 0; i < h->opt.max_conns; i++) {
        struct wisp_httpd_conn *c = &h->conns[i];
        if (c->h != NULL && c->wait_status && h->status_owner == NULL) {
            c->wait_status = 0;
            (void)conn_pump(c);
        }
    }
}

/* ----------------------------------------------------------- start/stop */

wisp_err_t wisp_httpd_start_opts(struct wisp_httpd *h, struct wisp_stack *s, uint16_t port,
                                 const struct wisp_httpd_opts *o)
{
    struct wisp_tcp_pcb *pcb, *l;
    wisp_err_t err;

    memset(h, 0, sizeof(*h));
    h->s = s;
    h->port = port;
    if (o != NULL) {
        h->opt = *o;
    }
    if (h->opt.max_conns == 0u || h->opt.max_conns > WISP_HTTPD_MAX_CONNS) {
        h->opt.max_conns = WISP_HTTPD_MAX_CONNS;
    }
    if (h->opt.idle_ms == 0u) {
        h->opt.idle_ms = WISP_HTTPD_IDLE_MS;
    }
    if (h->opt.linger_ms == 0u) {
        h->opt.linger_ms = WISP_HTTPD_LINGER_MS;
    }
    if (h->opt.head_ms == 0u) {
        h->opt.head_ms = WISP_HTTPD_HEAD_MS;
    }
    if (h->opt.reclaim_ms == 0u) {
        h->opt.reclaim_ms = WISP_HTTPD_RECLAIM_MS;
    }
    if (h->opt.per_source == 0u) {
        h->opt.per_source = (uint16_t)(h->opt.max_conns / 2u > 0u ? h->opt.max_conns / 2u : 1u);
    }
    if (h->opt.per_source > h->opt.max_conns) {
        h->opt.per_source = h->opt.max_conns;
    }
    pcb = wisp_tcp_new(s);
    if (pcb == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_tcp_bind(pcb, NULL, port);
    if (err != WISP_OK) {
        (void)wisp_tcp_close(pcb);
        return err;
    }
    l = wisp_tcp_listen(pcb, (uint8_t)WISP_HTTPD_BACKLOG, &err);
    if (l == NULL) {
        (void)wisp_tcp_close(pcb);
        return err != WISP_OK ? err : WISP_ERR_MEM;
    }
    wisp_tcp_arg(l, h);
    wisp_tcp_accept(l, httpd_accept);
    h->listener = l;
    h->running = 1;
    return WISP_OK;
}

wisp_err_t wisp_httpd_start(struct wisp_httpd *h, struct wisp_stack *s, uint16_t port)
{
    return wisp_httpd_start_opts(h, s, port, NULL);
}

void wisp_httpd_stop(struct wisp_httpd *h)
{
    unsigned i;
    if (!h->running) {
        return;
    }
    h->running = 0;
    if (h->listener != NULL) {
        wisp_tcp_arg(h->listener, NULL);
        (void)wisp_tcp_close(h->listener);
        h->listener = NULL;
    }
    for (i = 0; i < WISP_HTTPD_MAX_CONNS; i++) {
        struct wisp_httpd_conn *c = &h->conns[i];
        if (c->h != NULL && c->pcb != NULL) {
            (void)conn_abort(c);
        }
    }
    h->status_owner = NULL;
    wisp_timer_cancel(h->s, &h->kick_tmr);
}

void wisp_httpd_set_log(struct wisp_httpd *h, wisp_httpd_log_fn fn, void *ctx)
{
    h->log = fn;
    h->log_ctx = ctx;
}

const struct wisp_httpd_stats *wisp_httpd_stats(const struct wisp_httpd *h)
{
    return &h->st;
}
