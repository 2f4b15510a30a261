/**
 * @file fuzz_dns.c
 * Fuzz harness: DNS responses to outstanding queries of the resolver
 * (include/wisp/dns.h, src/core/dns.c).
 *
 * The first input byte sets the scene: bit 0 a second server
 * (198.18.0.3), bit 1 a second outstanding query ("mail.example.org"
 * beside "www.example.com"). The harness reads every query the stack sends
 * (its server, source port, ID and question), so the fuzzed responses can
 * reach the answer parsing. Records [ctrl][len hi][len lo][len bytes]:
 *   bit 4 which query the record answers (0 or 1);
 *   bit 1 the bytes are [12-byte header][after the question]: the harness
 *     inserts the query's question and sets QDCOUNT = 1; clear: the bytes
 *     are the whole response;
 *   bit 0 patch the ID to the query's current one;
 *   bit 2 send from 198.18.0.9 (not the server asked), bit 3 from port
 *     5353 (not 53);
 *   bits 5-6 clock advance after the record (0, 100 ms, 1 s, 10 s);
 *   bit 7 then ask for the same name again (cache hit, or joins the query).
 * The completion callback asks again once after a success (cache path).
 * Afterwards the clock runs 5 minutes (every query ends), pool use must be
 * back at zero, then deinit (which must abort nothing left).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_env.h"
#include "wisp/dns.h"

struct dns_q {
    wisp_ip4_t server;      /* server of the last transmission */
    uint16_t sport, id;     /* its source port and ID */
    uint8_t question[300];  /* its question section (name, type, class) */
    uint16_t qlen;
    uint8_t seen;
};

struct dns_fx {
    struct fz_env e;
    struct dns_q q[2];
    unsigned done[2], ok[2], again;
};

static struct dns_fx nfx;
static const char *const dns_names[2] = { "www.example.com", "mail.example.org" };

static void dns_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    unsigned i = (unsigned)(uintptr_t)arg;
    wisp_ipaddr_t a;
    (void)ttl_s;
    nfx.done[i]++;
    if (err == WISP_OK) {
        if (addr == NULL) {
            fz_fail("dns: success without an address");
        }
        nfx.ok[i]++;
        if (nfx.again++ == 0) {
            (void)wisp_dns_gethostbyname(nfx.e.s, name, &a, dns_found, arg);
        }
    }
}

/* Record the queries the stack sent (UDP to port 53). */
static void dns_observe(void)
{
    static uint8_t f[FZ_FRAME_MAX];
    int n;
    while ((n = fz_pop(&nfx.e, f, sizeof(f))) >= 0) {
        const uint8_t *u = f + 34, *m = f + 42;
        unsigned ml, i, k;
        if (n < 42 + 12 || wisp_rd16(f + 12) != WISP_ETHTYPE_IP4 || f[23] != WISP_IP4_PROTO_UDP || (f[14] & 0xf) != 5 ||
            wisp_rd16(u + 2) != 53) {
            continue;
        }
        ml = (unsigned)n - 42u;
        /* the question's first label tells which name it is */
        for (i = 0; i < 2; i++) {
            size_t l1 = strcspn(dns_names[i], ".");
            if (ml > 13u + l1 && m[12] == l1 && memcmp(m + 13, dns_names[i], l1) == 0) {
                struct dns_q *q = &nfx.q[i];
                q->server = wisp_ip4_rd(f + 30);
                q->sport = wisp_rd16(u);
                q->id = wisp_rd16(m);
                k = ml - 12u;
                if (k > sizeof(q->question)) {
                    k = sizeof(q->question);
                }
                memcpy(q->question, m + 12, k);
                q->qlen = (uint16_t)k;
                q->seen = 1;
            }
        }
    }
}

int fuzz_dns_one(const uint8_t *data, size_t size);

int fuzz_dns_one(const uint8_t *data, size_t size)
{
    static uint8_t msg[2048], f[2100];
    static const uint32_t adv[4] = { 0, 100, 1000, 10000 };
    struct fz_env *e = &nfx.e;
    wisp_ipaddr_t a;
    uint8_t setup = size > 0 ? data[0] : 0;
    size_t off = 1, n, fl;
    unsigned i;

    memset(nfx.q, 0, sizeof(nfx.q));
    memset(nfx.done, 0, sizeof(nfx.done));
    memset(nfx.ok, 0, sizeof(nfx.ok));
    nfx.again = 0;
    fz_env_init(e, 4, 1);
    fz_arp_peer(e);
    if (wisp_dns_set_server(e->s, 0, fz_ip_peer()) != WISP_OK) {
        fz_fail("set server");
    }
    if (setup & 1u) {
        static const uint8_t mac3[6] = { 2, 0, 0, 0, 0, 3 };
        (void)wisp_dns_set_server(e->s, 1, wisp_ip4(198, 18, 0, 3));
        (void)wisp_arp_add_static(&e->nif, wisp_ip4(198, 18, 0, 3), mac3);
    }
    for (i = 0; i < ((setup & 2u) ? 2u : 1u); i++) {
        if (wisp_dns_gethostbyname(e->s, dns_names[i], &a, dns_found, (void *)(uintptr_t)i) != WISP_ERR_INPROGRESS) {
            fz_fail("gethostbyname");
        }
    }
    dns_observe();
    if (!nfx.q[0].seen) {
        fz_fail("no query sent");
    }

    while (off < size) {
        uint8_t ctrl = data[off++];
        struct dns_q *q = &nfx.q[(ctrl >> 4) & 1u];
        size_t len = 0;
        if (off + 2 <= size) {
            len = ((size_t)data[off] << 8) | data[off + 1];
            off += 2;
        }
        if (len > size - off) {
            len = size - off;
        }
        if (len > 1200) {
            len = 1200;
        }
        if ((ctrl & 2u) && len >= 12) {
            memcpy(msg, data + off, 12);
            wisp_wr16(msg + 4, 1);
            memcpy(msg + 12, q->question, q->qlen);
            memcpy(msg + 12 + q->qlen, data + off + 12, len - 12);
            n = len + q->qlen;
        } else {
            memcpy(msg, data + off, len);
            n = len;
        }
        off += len;
        if ((ctrl & 1u) && n >= 2) {
            wisp_wr16(msg, q->id);
        }
        if (q->seen) {
            fl = fz_udp_frame(f, fz_mac_self, (ctrl & 4u) ? wisp_ip4(198, 18, 0, 9) : q->server, fz_ip_self(),
                              (ctrl & 8u) ? 5353 : 53, q->sport, msg, (uint16_t)n);
            fz_inject(e, f, fl);
        }
        if (ctrl & 0x80u) {
            unsigned k = (ctrl >> 4) & 1u;
            (void)wisp_dns_gethostbyname(e->s, dns_names[k], &a, dns_found, (void *)(uintptr_t)k);
        }
        fz_advance(e, adv[(ctrl >> 5) & 3u]); /* 0: runs what is due now (a retry to the next server) */
        dns_observe();
    }
    fz_advance(e, 5u * 60u * 1000u);
    if (getenv("FUZZ_VERBOSE") != NULL) {
        fprintf(stderr, "dns: done %u/%u ok %u/%u pending %u\n", nfx.done[0], nfx.done[1], nfx.ok[0], nfx.ok[1],
                wisp_dns_pending(e->s));
    }
    if (wisp_dns_pending(e->s) != 0) {
        fz_fail("dns: %u queries still pending after 5 minutes", wisp_dns_pending(e->s));
    }
    fz_clear(e);
    fz_check_pools(e, 0, "dns: after 5 min");
    fz_env_fini(e);
    return 0;
}

#ifdef FUZZ_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_dns_one(data, size);
}
#endif
