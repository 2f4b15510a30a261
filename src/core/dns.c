/**
 * @file dns.c
 * DNS stub resolver (RFC 1035) for A records: query construction, strict
 * response validation with bounded name decompression, CNAME chains within
 * one answer, server rotation with retransmission timers, a TTL-honouring
 * LRU cache and coalescing of requests for the same name. See wisp/dns.h
 * for the behaviour and the API.
 *
 * Parsing follows "parse, then act": a response is first validated as a
 * whole (header, question, every answer record and every name in it) and
 * only then used. All reads go through msg_u8() or msg_get(), which check
 * the offsets against the datagram length, so no read can leave the datagram whatever
 * the counts and lengths in it claim. These are the defences RFC 9267
 * (DNS RR processing anti-patterns) asks for, against the class of bugs of
 * the AMNESIA:33 report on embedded stacks (CVE-2020-17437 and
 * CVE-2020-17438 in uIP, CVE-2020-24336 in Contiki, CVE-2020-24338 in
 * picoTCP, CVE-2020-25111 in Nut/Net, and their relatives):
 *  - RFC 9267 §2, compression pointers (CVE-2020-25111, CVE-2020-24338
 *    class): a pointer must point into the message after the header and
 *    strictly before everything read of that name so far, so every jump
 *    goes further back and no loop is possible; a hop limit is a second
 *    guard. Both pointer octets are checked to be inside the datagram.
 *  - RFC 9267 §3, label and name lengths: labels <= 63, names <= 255
 *    octets; names are never copied into a buffer, only compared in place
 *    (so an over-long name cannot overflow anything, CVE-2020-25111).
 *  - RFC 9267 §4/§5, data lengths (CVE-2020-24336 class): every RDLENGTH
 *    is checked against the datagram before the record is used, an A
 *    record must have RDLENGTH 4, a CNAME's name must end exactly at the
 *    end of its RDATA.
 *  - RFC 9267 §6, record counts: QDCOUNT must be 1; ANCOUNT only drives a
 *    loop whose every step is bounds-checked, so a lying count ends in a
 *    counted drop.
 *
 * Choices where the RFCs leave room:
 *  - Every transmission (retransmissions too) gets a fresh random ID and a
 *    fresh random source port (RFC 5452 §9.2 / §10): a late answer to an
 *    earlier transmission is therefore not accepted; after the port
 *    changed it is answered by an ICMP port unreachable like any stray
 *    datagram.
 *  - The question is sent with the caller's letter case and matched
 *    case-insensitively (RFC 4343 §3).
 *  - Responses above 512 bytes are dropped: we send no EDNS (RFC 6891)
 *    option, so a server must not send more (RFC 1035 §4.2.1).
 *  - A response that is malformed, but carries our ID and question, is
 *    dropped and the query keeps waiting (a spoofer cannot end it early);
 *    the server is then given up by the timeout.
 *  - TC (truncated): failure for that server, the next one is asked at
 *    once. There is no TCP fallback (RFC 7766 is not implemented): a name
 *    whose A records do not fit 512 bytes cannot be resolved.
 *  - Negative answers (NXDOMAIN, NODATA) are not cached (RFC 2308 allows
 *    it, but it costs cache entries).
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/prot/dns.h"

#if WISP_DNS

#define DNS_MAX_HOPS 64u        /* pointers followed in one name (second guard) */

/* query states */
#define Q_FREE 0u
#define Q_RESOLVING 1u
#define Q_COMPLETING 2u

/* waiter states */
#define W_FREE 0u
#define W_WAITING 1u
#define W_COMPLETING 2u

/* query->fail bits: what went wrong so far */
#define FAIL_TEMP 0x01u  /* a timeout or SERVFAIL */
#define FAIL_PERM 0x02u  /* REFUSED, NOTIMP, FORMERR, truncated, CNAME limit */

/* ---------------------------------------------------- message access */

/* A received message: a pbuf chain, with a flat view when contiguous. */
struct dns_msg {
    const struct wisp_pbuf *p;
    const uint8_t *flat;
    uint32_t len;
};

/* Byte at off, or -1 past the end of the message. */
static int msg_u8(const struct dns_msg *m, uint32_t off)
{
    if (off >= m->len) {
        return -1;
    }
    if (m->flat != NULL) {
        return m->flat[off];
    }
    return wisp_pbuf_get_u8(m->p, (uint16_t)off);
}

/* The n <= 12 bytes at off of a received message into b; false when they
 * do not all lie inside it. */
static bool msg_get(const struct dns_msg *m, uint32_t off, uint8_t *b, uint32_t n)
{
    if (off + n > m->len) {
        return false;
    }
    (void)wisp_pbuf_copy_out(m->p, b, (uint16_t)n, (uint16_t)off);
    return true;
}

static WISP_NOINLINE uint8_t lc(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* ------------------------------------------------------ name walking */

/* Iterator over the labels of a (possibly compressed) name. */
struct name_it {
    uint32_t pos;    /* next length byte */
    uint32_t seg;    /* start of the current run of labels: pointers must go below it */
    uint32_t end;    /* offset just after the name where it is stored */
    uint32_t total;  /* wire length so far (length bytes + labels) */
    uint32_t hops;
    bool jumped;
};

static WISP_NOINLINE void it_init(struct name_it *it, uint32_t off)
{
    it->pos = off;
    it->seg = off;
    it->end = 0;
    it->total = 0;
    it->hops = 0;
    it->jumped = false;
}

/* Next label of the name: returns its length (1..63) with *lab = offset of
 * its first byte, 0 at the root label (end of name), -1 when malformed. */
static int it_next(const struct dns_msg *m, struct name_it *it, uint32_t *lab)
{
    for (;;) {
        int b = msg_u8(m, it->pos);
        if (b < 0) {
            return -1; /* truncated inside the name */
        }
        if ((b & WISP_DNS_LABEL_PTR) == WISP_DNS_LABEL_PTR) {
            /* RFC 1035 §4.1.4 compression pointer. Bounded (CVE-2020-25111,
             * CVE-2020-17438 class): it must point into the message after
             * the header and strictly before the run of labels it ends, so
             * every jump goes further back and no loop is possible; the hop
             * count is a second guard. */
            int b2 = msg_u8(m, it->pos + 1u);
            uint32_t ptr;
            if (b2 < 0) {
                return -1;
            }
            ptr = ((uint32_t)(b & 0x3F) << 8) | (uint32_t)b2; /* 14-bit offset */
            if (!it->jumped) {
                it->end = it->pos + 2u;
                it->jumped = true;
            }
            if (ptr < WISP_DNS_HLEN || ptr >= it->seg || ++it->hops > DNS_MAX_HOPS) {
                return -1;
            }
            it->pos = ptr;
            it->seg = ptr;
            continue;
        }
        if ((b & WISP_DNS_LABEL_PTR) != 0) {
            /* 01 and 10: extended / reserved label types (RFC 6891 §5,
             * RFC 1035 §4.1.4) -- not in a response to our query. */
            return -1;
        }
        /* b <= 63 here: RFC 1035 §2.3.4 label length. */
        it->total += (uint32_t)b + 1u;
        if (it->total > WISP_DNS_NAME_WIRE_MAX) {
            return -1; /* RFC 1035 §2.3.4: names are 255 octets or less */
        }
        if (b == 0) {
            if (!it->jumped) {
                it->end = it->pos + 1u;
            }
            return 0;
        }
        if (it->pos + 1u + (uint32_t)b > m->len) {
            return -1;
        }
        *lab = it->pos + 1u;
        it->pos += 1u + (uint32_t)b;
        return b;
    }
}

/* Validate the name at off; *end = offset after it. */
static bool name_skip(const struct dns_msg *m, uint32_t off, uint32_t *end)
{
    struct name_it it;
    uint32_t lab;
    int n;
    it_init(&it, off);
    while ((n = it_next(m, &it, &lab)) > 0) {
    }
    if (n < 0) {
        return false;
    }
    *end = it.end;
    return true;
}

/* The name at a in message ma equals the name at b in mb (case-insensitive,
 * RFC 4343): 1, differ: 0, malformed: -1. */
static int name_eq_msg(const struct dns_msg *ma, uint32_t a, const struct dns_msg *mb, uint32_t b)
{
    struct name_it ia, ib;
    it_init(&ia, a);
    it_init(&ib, b);
    for (;;) {
        uint32_t la = 0, lb = 0, i;
        int na = it_next(ma, &ia, &la);
        int nb = it_next(mb, &ib, &lb);
        if (na < 0 || nb < 0) {
            return -1;
        }
        if (na != nb) {
            return 0;
        }
        if (na == 0) {
            return 1;
        }
        for (i = 0; i < (uint32_t)na; i++) {
            int ca = msg_u8(ma, la + i), cb = msg_u8(mb, lb + i);
            if (ca < 0 || cb < 0) {
                return -1;
            }
            if (lc((uint8_t)ca) != lc((uint8_t)cb)) {
                return 0;
            }
        }
    }
}

/* RFC 1035 §4.1.2 / §3.1: the wire form of a dotted name (checked by
 * name_check, no trailing dot): labels with their length octets, then the
 * root label. Returns the octets written (strlen + 2). */
static size_t name_encode(const char *t, uint8_t *b)
{
    size_t o = 0;
    while (*t != '\0') {
        size_t l = 0;
        while (t[l] != '\0' && t[l] != '.') {
            l++;
        }
        b[o++] = (uint8_t)l;
        memcpy(&b[o], t, l);
        o += l;
        t += l;
        if (*t == '.') {
            t++;
        }
    }
    b[o++] = 0;
    return o;
}

/* ------------------------------------------------------ request names */

static bool name_char_ok(char c)
{
    /* RFC 952 / RFC 1123 §2.1 host names: letters, digits, hyphen; '_'
     * for service-style labels (RFC 2782). */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Length of name without one trailing dot when it is a valid host name
 * that fits WISP_DNS_NAME_MAX, else 0. */
static size_t name_check(const char *name)
{
    size_t n = 0, label = 0;
    while (name[n] != '\0') {
        char c = name[n];
        if (n > WISP_DNS_NAME_MAX) {
            return 0;
        }
        if (c == '.') {
            if (label == 0) {
                return 0; /* empty label */
            }
            if (name[n + 1] == '\0') {
                return n; /* one trailing dot: the root */
            }
            label = 0;
        } else if (!name_char_ok(c) || ++label > WISP_DNS_LABEL_MAX) {
            return 0;
        }
        n++;
    }
    return n <= WISP_DNS_NAME_MAX && label > 0 ? n : 0;
}

/* Case-insensitive equality of two names of n and strlen(b) chars. */
static bool name_eq_n(const char *a, size_t n, const char *b)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (b[i] == '\0' || lc((uint8_t)a[i]) != lc((uint8_t)b[i])) {
            return false;
        }
    }
    return b[n] == '\0';
}

/* -------------------------------------------------------------- cache */

#if WISP_DNS_CACHE_SIZE > 0
static struct wisp_dns_cache_entry *cache_find(struct wisp_stack *s, const char *name, size_t n)
{
    unsigned i;
    uint32_t now = wisp_now(s);
    for (i = 0; i < WISP_DNS_CACHE_SIZE; i++) {
        struct wisp_dns_cache_entry *c = &s->dns.cache[i];
        if (!c->valid) {
            continue;
        }
        if (!wisp_time_before(now, c->expires)) {
            c->valid = 0; /* RFC 1035 §3.2.1: TTL ran out */
            continue;
        }
        if (name_eq_n(name, n, c->name)) {
            return c;
        }
    }
    return NULL;
}

static void cache_put(struct wisp_stack *s, const char *name, wisp_ip4_t addr, uint32_t ttl_s)
{
    struct wisp_dns_cache_entry *c, *victim = NULL;
    size_t n = strlen(name), i;
    uint32_t now = wisp_now(s);

    if (ttl_s == 0) {
        return; /* RFC 1035 §3.2.1: TTL 0 = use for this transaction only */
    }
    c = cache_find(s, name, n);
    if (c == NULL) {
        for (i = 0; i < WISP_DNS_CACHE_SIZE; i++) {
            struct wisp_dns_cache_entry *e = &s->dns.cache[i];
            if (!e->valid) {
                victim = e;
                break;
            }
            if (victim == NULL || wisp_time_before(e->used, victim->used)) {
                victim = e;
            }
        }
        if (victim->valid) {
            WISP_CTR_INC(s, DNS_CACHE_EVICT); /* least recently used */
        }
        c = victim;
        for (i = 0; i <= n; i++) {
            c->name[i] = (char)lc((uint8_t)name[i]);
        }
    }
    c->addr = addr;
    c->expires = now + ttl_s * 1000u;
    c->used = now;
    c->valid = 1;
}
#endif

bool wisp_dns_cache_lookup(struct wisp_stack *s, const char *name, wisp_ip4_t *addr, uint32_t *ttl_s)
{
#if WISP_DNS_CACHE_SIZE > 0
    struct wisp_dns_cache_entry *c;
    size_t n;
    WISP_CORE_ASSERT_OWNER(s);
    if (name == NULL || (n = name_check(name)) == 0 || (c = cache_find(s, name, n)) == NULL) {
        return false;
    }
    if (addr != NULL) {
        *addr = c->addr;
    }
    if (ttl_s != NULL) {
        *ttl_s = (c->expires - s->now + 999u) / 1000u;
    }
    return true;
#else
    WISP_UNUSED(s);
    WISP_UNUSED(name);
    WISP_UNUSED(addr);
    WISP_UNUSED(ttl_s);
    return false;
#endif
}

void wisp_dns_cache_flush(struct wisp_stack *s)
{
#if WISP_DNS_CACHE_SIZE > 0
    WISP_CORE_ASSERT_OWNER(s);
    memset(s->dns.cache, 0, sizeof(s->dns.cache));
#else
    WISP_UNUSED(s);
#endif
}

/* ------------------------------------------------------------ queries */

static void q_timeout(struct wisp_stack *s, struct wisp_timer *t);
static void q_retry(struct wisp_stack *s, struct wisp_timer *t);

static WISP_NOINLINE unsigned servers_configured(const struct wisp_stack *s)
{
    unsigned i, n = 0;
    for (i = 0; i < WISP_DNS_MAX_SERVERS; i++) {
        n += !wisp_ipaddr_is_any(&s->dns.server[i]);
    }
    return n;
}

/* Stop the network side of q: timer, PCB. */
static WISP_NOINLINE void q_release(struct wisp_stack *s, struct wisp_dns_query *q)
{
    wisp_timer_cancel(s, &q->timer);
    if (q->pcb != NULL) {
        wisp_udp_remove(q->pcb);
        q->pcb = NULL;
    }
    q->asked = wisp_ipaddr_any4();
}

/* End q with err and call everybody waiting for it (addr and ttl are 0
 * unless err is WISP_OK: every caller passes them so). */
static void q_finish(struct wisp_stack *s, struct wisp_dns_query *q, wisp_err_t err, wisp_ip4_t addr, uint32_t ttl)
{
    uint8_t qn = (uint8_t)(q - s->dns.q + 1);
    wisp_ipaddr_t a = wisp_ipaddr4(addr);
    unsigned i;

    q_release(s, q);
    q->state = Q_COMPLETING; /* keeps the name valid, not joinable */
#if WISP_DNS_CACHE_SIZE > 0
    if (err == WISP_OK) {
        cache_put(s, q->name, addr, ttl);
    }
#endif
    /* Mark first: a callback may start new requests, which must not be
     * completed by this loop. */
    for (i = 0; i < WISP_DNS_MAX_WAITERS; i++) {
        if (s->dns.w[i].state == W_WAITING && s->dns.w[i].query == qn) {
            s->dns.w[i].state = W_COMPLETING;
        }
    }
    for (i = 0; i < WISP_DNS_MAX_WAITERS; i++) {
        struct wisp_dns_waiter *w = &s->dns.w[i];
        if (w->state == W_COMPLETING && w->query == qn) {
            wisp_dns_found_fn fn = w->fn;
            void *arg = w->arg;
            memset(w, 0, sizeof(*w));
            fn(arg, q->name, err, err == WISP_OK ? &a : NULL, ttl);
        }
    }
    q->state = Q_FREE;
}

/* Index of the server for the next transmission: the first configured one
 * for the first transmission, then the next configured one (rotation).
 * -1 when none is configured. */
static int q_pick_server(const struct wisp_stack *s, const struct wisp_dns_query *q)
{
    unsigned i, start = q->tx == 0 ? 0u : (unsigned)q->srv + 1u;
    for (i = 0; i < WISP_DNS_MAX_SERVERS; i++) {
        unsigned k = (start + i) % WISP_DNS_MAX_SERVERS;
        if (!wisp_ipaddr_is_any(&s->dns.server[k])) {
            return (int)k;
        }
    }
    return -1;
}

/* Send the next transmission of q to server srv and arm its timeout.
 * Never completes q (a send error counts like a lost datagram). */
static void q_send(struct wisp_stack *s, struct wisp_dns_query *q, unsigned srv)
{
    size_t n = strlen(q->name);
    uint16_t len = (uint16_t)(WISP_DNS_HLEN + n + 2u + 4u); /* name: n + 2 octets on the wire */
    unsigned nsrv = servers_configured(s), round;
    struct wisp_pbuf *p;
    uint32_t timeout;

    q->srv = (uint8_t)srv;
    q->asked = s->dns.server[srv];
    q->id = (uint16_t)wisp_random_id(s, WISP_RID_DNS_ID); /* RFC 5452 §9.2: random ID per query */
    if (q->tx > 0) {
        WISP_CTR_INC(s, DNS_RETRANSMIT);
    }
    q->tx++;
    /* RFC 5452 §9.2 / RFC 6056: a new random source port each time. */
    if (wisp_udp_bind(q->pcb, NULL, 0) != WISP_OK) {
        WISP_CTR_INC(s, DNS_NOMEM);
        q->asked = wisp_ipaddr_any4();
    } else if ((p = wisp_pbuf_alloc(s, WISP_LAYER_TRANSPORT, len, WISP_PBUF_RAM)) == NULL) {
        WISP_CTR_INC(s, DNS_NOMEM);
    } else {
        uint8_t *b = p->payload;
        size_t o = WISP_DNS_HLEN;
        wisp_ipaddr_t dst = q->asked;
        /* RFC 1035 §4.1.1: ID, RD (recursion desired: we are a stub,
         * RFC 1123 §6.1.3.1), QDCOUNT 1. */
        memset(b, 0, WISP_DNS_HLEN);
        wisp_wr16(&b[WISP_DNS_OFF_ID], q->id);
        wisp_wr16(&b[WISP_DNS_OFF_FLAGS], WISP_DNS_F_RD);
        b[WISP_DNS_OFF_QDCOUNT + 1] = 1;
        /* RFC 1035 §4.1.2 QNAME: labels (checked by name_check), root. */
        o += name_encode(q->name, &b[o]);
        wisp_wr16(&b[o], WISP_DNS_TYPE_A);
        wisp_wr16(&b[o + 2u], WISP_DNS_CLASS_IN);
        if (wisp_udp_sendto(q->pcb, p, &dst, WISP_DNS_PORT) == WISP_OK) {
            WISP_CTR_INC(s, DNS_TX);
        } else {
            WISP_CTR_INC(s, DNS_NOMEM);
        }
        wisp_pbuf_free(p);
    }
    /* The wait doubles after each round over all servers, up to 8x. */
    round = nsrv > 0 ? (unsigned)(q->tx - 1u) / nsrv : 0u;
    timeout = (uint32_t)WISP_DNS_TIMEOUT_MS << (round < 3u ? round : 3u);
    wisp_timer_arm(s, &q->timer, timeout, q_timeout);
}

/* The current transmission failed: send the next one, or give up. */
static void q_next(struct wisp_stack *s, struct wisp_dns_query *q)
{
    int srv;
    if (q->tx > WISP_DNS_MAX_RETRIES) {
        WISP_CTR_INC(s, DNS_FAIL);
        /* Temporary (timeouts, SERVFAIL) beats permanent refusals. */
        q_finish(s, q, (q->fail & FAIL_TEMP) || q->fail == 0 ? WISP_ERR_TIMEOUT : WISP_ERR_CONN, 0, 0);
        return;
    }
    srv = q_pick_server(s, q);
    if (srv < 0) {
        WISP_CTR_INC(s, DNS_FAIL);
        q_finish(s, q, WISP_ERR_VAL, 0, 0); /* the servers were removed meanwhile */
        return;
    }
    q_send(s, q, (unsigned)srv);
}

static void q_timeout(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_dns_query *q = (struct wisp_dns_query *)(void *)t; /* timer is the first member */
    if (q->state != Q_RESOLVING) {
        return;
    }
    WISP_CTR_INC(s, DNS_TIMEOUT);
    q->fail |= FAIL_TEMP;
    q_next(s, q);
}

static void q_retry(struct wisp_stack *s, struct wisp_timer *t)
{
    struct wisp_dns_query *q = (struct wisp_dns_query *)(void *)t;
    if (q->state == Q_RESOLVING) {
        q_next(s, q);
    }
}

/* The server answered, but not usefully: the next transmission goes out
 * at once (from the timer, outside the receive path). */
static void q_server_failed(struct wisp_stack *s, struct wisp_dns_query *q, uint8_t why)
{
    q->fail |= why;
    q->asked = wisp_ipaddr_any4(); /* nothing more is taken from this transmission */
    wisp_timer_arm(s, &q->timer, 0, q_retry);
}

/* -------------------------------------------------- response handling */

/* One resource record (RFC 1035 §4.1.3) at off. */
struct dns_rr {
    uint32_t name, rdata, next;
    uint16_t type, cls, rdlen;
    uint32_t ttl;
};

static bool rr_parse(const struct dns_msg *m, uint32_t off, struct dns_rr *rr)
{
    uint8_t f[WISP_DNS_RR_FIXED];
    uint32_t e;
    rr->name = off;
    /* TYPE, CLASS, TTL, RDLENGTH after the name */
    if (!name_skip(m, off, &e) || !msg_get(m, e, f, WISP_DNS_RR_FIXED)) {
        return false;
    }
    rr->type = wisp_rd16(&f[0]);
    rr->cls = wisp_rd16(&f[2]);
    rr->ttl = wisp_rd32(&f[4]);
    rr->rdlen = wisp_rd16(&f[8]);
    rr->rdata = e + WISP_DNS_RR_FIXED;
    rr->next = rr->rdata + rr->rdlen;
    /* CVE-2020-17437 / CVE-2020-24336 class: RDLENGTH within the datagram. */
    return rr->next <= m->len;
}

/* Validate the answer section (ancount records from off): every record
 * inside the message, every name well-formed, A records of 4 octets,
 * CNAME data exactly one name. */
static bool answers_valid(const struct dns_msg *m, uint32_t off, uint16_t ancount)
{
    unsigned i;
    for (i = 0; i < ancount; i++) {
        struct dns_rr rr;
        if (!rr_parse(m, off, &rr)) {
            return false;
        }
        if (rr.cls == WISP_DNS_CLASS_IN && rr.type == WISP_DNS_TYPE_A && rr.rdlen != 4u) {
            return false; /* RFC 1035 §3.4.1: A RDATA is a 32-bit address */
        }
        if (rr.cls == WISP_DNS_CLASS_IN && rr.type == WISP_DNS_TYPE_CNAME) {
            uint32_t e;
            /* RFC 1035 §3.3.1: CNAME RDATA is one domain name. */
            if (!name_skip(m, rr.rdata, &e) || e != rr.next) {
                return false;
            }
        }
        off = rr.next;
    }
    return true;
}

/* TTL as a cache time: RFC 2181 §8 (top bit set = 0), capped. */
static uint32_t ttl_clamp(uint32_t ttl)
{
    if (ttl & 0x80000000u) {
        return 0;
    }
    return ttl > WISP_DNS_MAX_TTL_S ? WISP_DNS_MAX_TTL_S : ttl;
}

/* Act on a validated NOERROR response: follow CNAMEs from the question
 * name to an A record. */
static void answers_use(struct wisp_stack *s, struct wisp_dns_query *q, const struct dns_msg *m, uint32_t an_off,
                        uint16_t ancount)
{
    uint32_t target = WISP_DNS_HLEN; /* the question name */
    uint32_t ttl = WISP_DNS_MAX_TTL_S;
    unsigned links = 0;

    for (;;) {
        uint32_t off = an_off;
        bool cname = false;
        unsigned i;
        for (i = 0; i < ancount; i++) {
            struct dns_rr rr;
            if (!rr_parse(m, off, &rr)) {
                return; /* cannot happen: validated */
            }
            off = rr.next;
            if (rr.cls != WISP_DNS_CLASS_IN || (rr.type != WISP_DNS_TYPE_A && rr.type != WISP_DNS_TYPE_CNAME) ||
                name_eq_msg(m, rr.name, m, target) != 1) {
                continue;
            }
            ttl = WISP_MIN(ttl, ttl_clamp(rr.ttl));
            if (rr.type == WISP_DNS_TYPE_A) {
                uint8_t a[4] = { 0 };
                (void)msg_get(m, rr.rdata, a, 4u); /* validated: 4 octets inside */
                WISP_CTR_INC(s, DNS_ANSWER);
                q_finish(s, q, WISP_OK, wisp_ip4_rd(a), ttl);
                return;
            }
            /* RFC 1034 §3.6.2: an alias; look for the canonical name. */
            target = rr.rdata;
            cname = true;
            break;
        }
        if (!cname) {
            /* NOERROR without an address for the name: NODATA (RFC 2308 §2.2). */
            WISP_CTR_INC(s, DNS_NODATA);
            q_finish(s, q, WISP_DNS_ERR_NOTFOUND, 0, 0);
            return;
        }
        if (++links > WISP_DNS_MAX_CNAME) {
            WISP_CTR_INC(s, DNS_CNAME_LIMIT); /* too long, or a loop */
            q_server_failed(s, q, FAIL_PERM);
            return;
        }
    }
}

static void dns_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                     uint16_t port, const struct wisp_ip_info *ip)
{
    struct wisp_dns_query *q = arg;
    struct wisp_stack *s = pcb->stack;
    struct dns_msg m, qm;
    uint8_t qwire[WISP_DNS_NAME_MAX + 2], hdr[WISP_DNS_HLEN];
    uint16_t id, flags, qdcount, ancount, qtype, qclass, rcode;
    uint32_t qend;
    int eq;
    WISP_UNUSED(ip);

    WISP_CTR_INC(s, DNS_RX);
    /* Only from the server asked, from its DNS port (RFC 5452 §9.1). */
    if (q->state != Q_RESOLVING || q->pcb != pcb || wisp_ipaddr_is_any(&q->asked) ||
        !wisp_ipaddr_eq(src, &q->asked) || port != WISP_DNS_PORT) {
        WISP_CTR_INC(s, DNS_DROP_SRC);
        wisp_pbuf_free(p);
        return;
    }
    m.p = p;
    m.len = p->tot_len;
    m.flat = (const uint8_t *)wisp_pbuf_contig(p, 0, p->tot_len);
    if (m.len > WISP_DNS_UDP_MAX) {
        WISP_CTR_INC(s, DNS_DROP_LEN); /* RFC 1035 §4.2.1, no EDNS sent */
        wisp_pbuf_free(p);
        return;
    }
    /* RFC 1035 §4.1.1: the 12-byte header. */
    if (!msg_get(&m, 0, hdr, WISP_DNS_HLEN)) {
        WISP_CTR_INC(s, DNS_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    id = wisp_rd16(&hdr[WISP_DNS_OFF_ID]);
    flags = wisp_rd16(&hdr[WISP_DNS_OFF_FLAGS]);
    qdcount = wisp_rd16(&hdr[WISP_DNS_OFF_QDCOUNT]);
    ancount = wisp_rd16(&hdr[WISP_DNS_OFF_ANCOUNT]);
    if (id != q->id) {
        WISP_CTR_INC(s, DNS_DROP_ID); /* RFC 5452 §9.1 */
        wisp_pbuf_free(p);
        return;
    }
    /* RFC 1035 §4.1.1: a response (QR) to a standard query (opcode 0). */
    if ((flags & WISP_DNS_F_QR) == 0 || (flags & WISP_DNS_F_OPCODE) != 0) {
        WISP_CTR_INC(s, DNS_DROP_HDR);
        wisp_pbuf_free(p);
        return;
    }
    /* RFC 5452 §9.1: the question must be ours (RFC 1035 §4.1.2;
     * case-insensitive, RFC 4343 §3). */
    if (qdcount != 1u) {
        WISP_CTR_INC(s, DNS_DROP_QUESTION);
        wisp_pbuf_free(p);
        return;
    }
    if (!name_skip(&m, WISP_DNS_HLEN, &qend) || !msg_get(&m, qend, hdr, 4u)) {
        WISP_CTR_INC(s, DNS_DROP_MALFORMED);
        wisp_pbuf_free(p);
        return;
    }
    qtype = wisp_rd16(&hdr[0]); /* QTYPE, QCLASS (the header's fields are read) */
    qclass = wisp_rd16(&hdr[2]);
    /* the question against q's name in wire form (no pointers in it) */
    qm.p = NULL;
    qm.flat = qwire;
    qm.len = (uint32_t)name_encode(q->name, qwire);
    eq = name_eq_msg(&m, WISP_DNS_HLEN, &qm, 0);
    if (eq != 1 || qtype != WISP_DNS_TYPE_A || qclass != WISP_DNS_CLASS_IN) {
        if (eq < 0) {
            WISP_CTR_INC(s, DNS_DROP_MALFORMED);
        } else {
            WISP_CTR_INC(s, DNS_DROP_QUESTION);
        }
        wisp_pbuf_free(p);
        return;
    }
    if (flags & WISP_DNS_F_TC) {
        /* RFC 1035 §4.1.1 TC; RFC 7766 would retry over TCP, which we do
         * not have: a failure of this server. */
        WISP_CTR_INC(s, DNS_TRUNCATED);
        wisp_pbuf_free(p);
        q_server_failed(s, q, FAIL_PERM);
        return;
    }
    rcode = flags & WISP_DNS_F_RCODE;
    if (rcode == WISP_DNS_RCODE_NXDOMAIN) {
        /* RFC 1035 §4.1.1 name error; RFC 2308 §2.1. */
        WISP_CTR_INC(s, DNS_NXDOMAIN);
        wisp_pbuf_free(p);
        q_finish(s, q, WISP_DNS_ERR_NOTFOUND, 0, 0);
        return;
    }
    if (rcode == WISP_DNS_RCODE_SERVFAIL) {
        WISP_CTR_INC(s, DNS_SERVFAIL); /* RFC 1035 §7.3: try another server */
        wisp_pbuf_free(p);
        q_server_failed(s, q, FAIL_TEMP);
        return;
    }
    if (rcode != WISP_DNS_RCODE_NOERROR) {
        WISP_CTR_INC(s, DNS_RCODE_ERR); /* FORMERR, NOTIMP, REFUSED, ... */
        wisp_pbuf_free(p);
        q_server_failed(s, q, FAIL_PERM);
        return;
    }
    /* Parse the whole answer section, then act. */
    if (!answers_valid(&m, qend + 4u, ancount)) {
        WISP_CTR_INC(s, DNS_DROP_MALFORMED);
        wisp_pbuf_free(p);
        return;
    }
    answers_use(s, q, &m, qend + 4u, ancount);
    wisp_pbuf_free(p);
}

/* ---------------------------------------------------------------- API */

wisp_err_t wisp_dns_set_server(struct wisp_stack *s, unsigned idx, wisp_ip4_t ip)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (idx >= WISP_DNS_MAX_SERVERS || ip == WISP_IP4_BCAST || wisp_ip4_is_multicast(ip)) {
        return WISP_ERR_ARG;
    }
    s->dns.server[idx] = wisp_ipaddr4(ip);
    return WISP_OK;
}

wisp_ip4_t wisp_dns_get_server(struct wisp_stack *s, unsigned idx)
{
    WISP_CORE_ASSERT_OWNER(s);
    return idx < WISP_DNS_MAX_SERVERS ? wisp_ipaddr_ip4(&s->dns.server[idx]) : 0;
}

wisp_err_t wisp_dns_set_server_addr(struct wisp_stack *s, unsigned idx, const wisp_ipaddr_t *ip)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (idx >= WISP_DNS_MAX_SERVERS || ip == NULL) {
        return WISP_ERR_ARG;
    }
    if (wisp_ipaddr_is_any(ip)) {
        s->dns.server[idx] = wisp_ipaddr_any4();
        return WISP_OK;
    }
    if (!wisp_ip_family_built(ip) || !wisp_ip_is_unicast(ip)) {
        return WISP_ERR_ARG;
    }
    s->dns.server[idx] = *ip;
    return WISP_OK;
}

wisp_err_t wisp_dns_get_server_addr(struct wisp_stack *s, unsigned idx, wisp_ipaddr_t *ip)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (idx >= WISP_DNS_MAX_SERVERS || ip == NULL) {
        return WISP_ERR_ARG;
    }
    *ip = s->dns.server[idx];
    return WISP_OK;
}

wisp_err_t wisp_dns_gethostbyname(struct wisp_stack *s, const char *name, wisp_ipaddr_t *addr_out,
                                  wisp_dns_found_fn fn, void *arg)
{
    struct wisp_dns_query *q = NULL;
    struct wisp_dns_waiter *w = NULL;
    wisp_ip4_t a;
    size_t n;
    unsigned i;
    WISP_CORE_ASSERT_OWNER(s);

    if (s == NULL || name == NULL || addr_out == NULL || fn == NULL) {
        return WISP_ERR_ARG;
    }
    if (wisp_ip4_aton(name, &a)) {
        *addr_out = wisp_ipaddr4(a);
        return WISP_OK;
    }
    n = name_check(name);
    if (n == 0) {
        return WISP_ERR_ARG;
    }
    if (n == 9 && name_eq_n(name, 9, "localhost")) {
        *addr_out = wisp_ipaddr4(wisp_ip4(127, 0, 0, 1)); /* RFC 6761 §6.3 */
        return WISP_OK;
    }
#if WISP_DNS_CACHE_SIZE > 0
    {
        struct wisp_dns_cache_entry *c = cache_find(s, name, n);
        if (c != NULL) {
            WISP_CTR_INC(s, DNS_CACHE_HIT);
            c->used = s->now;
            *addr_out = wisp_ipaddr4(c->addr);
            return WISP_OK;
        }
    }
#endif
    if (servers_configured(s) == 0) {
        return WISP_ERR_VAL;
    }
    for (i = 0; i < WISP_DNS_MAX_WAITERS && w == NULL; i++) {
        if (s->dns.w[i].state == W_FREE) {
            w = &s->dns.w[i];
        }
    }
    if (w == NULL) {
        goto nomem;
    }
    /* Join a query for the same name, else start one. */
    for (i = 0; i < WISP_DNS_MAX_QUERIES && q == NULL; i++) {
        if (s->dns.q[i].state == Q_RESOLVING && name_eq_n(name, n, s->dns.q[i].name)) {
            q = &s->dns.q[i];
        }
    }
    if (q == NULL) {
        for (i = 0; i < WISP_DNS_MAX_QUERIES && q == NULL; i++) {
            if (s->dns.q[i].state == Q_FREE) {
                q = &s->dns.q[i];
            }
        }
        if (q == NULL) {
            goto nomem;
        }
        memset(q, 0, sizeof(*q));
        q->pcb = wisp_udp_new(s);
        if (q->pcb == NULL) {
            goto nomem;
        }
        wisp_udp_recv(q->pcb, dns_recv, q);
        memcpy(q->name, name, n);
        q->name[n] = '\0';
    }
    w->fn = fn;
    w->arg = arg;
    w->query = (uint8_t)(q - s->dns.q + 1);
    w->state = W_WAITING;
    if (q->state == Q_FREE) { /* a new query (zeroed above): its first transmission */
        q->state = Q_RESOLVING;
        q_send(s, q, (unsigned)q_pick_server(s, q)); /* >= 0: a server is configured */
    }
    return WISP_ERR_INPROGRESS;
nomem:
    WISP_CTR_INC(s, DNS_NOMEM);
    return WISP_ERR_MEM;
}

unsigned wisp_dns_cancel(struct wisp_stack *s, wisp_dns_found_fn fn, void *arg)
{
    unsigned i, j, n = 0;
    WISP_CORE_ASSERT_OWNER(s);
    for (i = 0; i < WISP_DNS_MAX_WAITERS; i++) {
        struct wisp_dns_waiter *w = &s->dns.w[i];
        if (w->state != W_FREE && w->fn == fn && w->arg == arg) {
            memset(w, 0, sizeof(*w));
            n++;
        }
    }
    /* Stop queries nobody waits for any more. */
    for (i = 0; i < WISP_DNS_MAX_QUERIES; i++) {
        bool used = false;
        if (s->dns.q[i].state != Q_RESOLVING) {
            continue;
        }
        for (j = 0; j < WISP_DNS_MAX_WAITERS; j++) {
            used = used || (s->dns.w[j].state != W_FREE && s->dns.w[j].query == i + 1u);
        }
        if (!used) {
            q_release(s, &s->dns.q[i]);
            s->dns.q[i].state = Q_FREE;
        }
    }
    return n;
}

unsigned wisp_dns_pending(const struct wisp_stack *s)
{
    unsigned i, n = 0;
    WISP_CORE_ASSERT_OWNER(s);
    for (i = 0; i < WISP_DNS_MAX_QUERIES; i++) {
        n += s->dns.q[i].state == Q_RESOLVING;
    }
    return n;
}

void wisp_dns_deinit(struct wisp_stack *s)
{
    unsigned i;
    WISP_CORE_ASSERT_OWNER(s);
    for (i = 0; i < WISP_DNS_MAX_QUERIES; i++) {
        if (s->dns.q[i].state == Q_RESOLVING) {
            q_finish(s, &s->dns.q[i], WISP_ERR_ABRT, 0, 0);
        }
    }
#if WISP_DNS_CACHE_SIZE > 0
    memset(s->dns.cache, 0, sizeof(s->dns.cache));
#endif
}

#else
typedef int wisp_dns_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_DNS */
