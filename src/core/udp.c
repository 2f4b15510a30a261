/**
 * @file udp.c
 * UDP (RFC 768, RFC 1122 §4.1): protocol control blocks from a fixed pool,
 * binding with random ephemeral ports (RFC 6056 §3.3.1), checksummed send
 * (header pushed into the caller's headroom, or a header buffer chained in
 * front), validated zero-copy receive and demultiplexing.
 *
 * Choices where the RFCs leave room:
 *  - Demultiplexing picks ONE PCB, the most specific match: a connected PCB
 *    whose peer matches the source beats a PCB bound to the specific
 *    destination address, which beats a wildcard PCB; ties go to the PCB
 *    created last. A broadcast/multicast datagram also goes to that single
 *    PCB (like lwIP without SO_REUSE); there is no fan-out to several PCBs.
 *  - A PCB bound to a specific unicast address does not receive datagrams
 *    sent to a broadcast address (as on Linux); bind to any for those.
 *  - Sending to a broadcast address is allowed without WISP_UDP_F_BCAST
 *    (like lwIP's default, LWIP_IP_SOF_BROADCAST=0); the flag is reserved for
 *    a socket layer that wants SO_BROADCAST semantics.
 *  - Datagrams without a PCB get a port unreachable through
 *    wisp_icmp_dest_unreach(), which applies the RFC 1122 §3.2.2 suppression
 *    rules (no error about broadcasts etc.) and the rate limit.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/chksum.h"

#if WISP_UDP

/* Largest UDP payload: 65535 - 20 (IP header) - 8 (UDP header). */
#define UDP_MAX_PAYLOAD (WISP_IP4_MAX_LEN - WISP_IP4_HLEN - WISP_UDP_HLEN)

/* ----------------------------------------------------------------- helpers */

/* Two local bindings overlap: either is the wildcard, or both name the
 * same address. */
static bool udp_addr_overlap(const wisp_ipaddr_t *a, const wisp_ipaddr_t *b)
{
    return wisp_ipaddr_is_any(a) || wisp_ipaddr_is_any(b) || wisp_ipaddr_eq(a, b);
}

static bool udp_port_taken(const struct wisp_stack *s, const struct wisp_udp_pcb *self, const wisp_ipaddr_t *ip,
                           uint16_t port)
{
    const struct wisp_udp_pcb *q;

    for (q = s->udp_pcbs; q != NULL; q = q->next) {
        if (q != self && q->local_port == port && udp_addr_overlap(&q->local_ip, ip)) {
            return true;
        }
    }
    return false;
}

/* RFC 6056 §3.3.1 (Algorithm 1, "simple port randomization"): start at a
 * random offset in the ephemeral range and probe linearly, wrapping, until a
 * free port is found; at most one pass over the range. 0 when all are used. */
static uint16_t udp_ephemeral_port(struct wisp_stack *s, const struct wisp_udp_pcb *self, const wisp_ipaddr_t *ip)
{
    const uint32_t num = (uint32_t)WISP_EPHEMERAL_MAX - (uint32_t)WISP_EPHEMERAL_MIN + 1u;
    uint32_t offset = wisp_random_id(s, WISP_RID_PORT) % num; /* keyed, not a state generator's output */
    uint32_t count;

    for (count = 0; count < num; count++) {
        uint16_t port = (uint16_t)(WISP_EPHEMERAL_MIN + (offset + count) % num);
        if (!udp_port_taken(s, self, ip, port)) {
            return port;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------- PCBs */

struct wisp_udp_pcb *wisp_udp_new(struct wisp_stack *s)
{
    struct wisp_udp_pcb *pcb;
    WISP_CORE_ASSERT_OWNER(s); /* before touching the pool */
    pcb = (struct wisp_udp_pcb *)wisp_pool_alloc(&s->pool[WISP_POOL_UDP_PCB]);
    if (pcb == NULL) {
        return NULL;
    }
    memset(pcb, 0, sizeof(*pcb));
    pcb->stack = s;
    /* Linked from creation so teardown can find every PCB; a PCB with local
     * port 0 (not bound yet) never matches in demultiplexing. */
    pcb->next = s->udp_pcbs;
    s->udp_pcbs = pcb;
    return pcb;
}

void wisp_udp_remove(struct wisp_udp_pcb *pcb)
{
    struct wisp_stack *s;
    struct wisp_udp_pcb **pp;
    WISP_CORE_ASSERT_OWNER(pcb != NULL ? pcb->stack : NULL);

    if (pcb == NULL) {
        return;
    }
    s = pcb->stack;
    for (pp = &s->udp_pcbs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == pcb) {
            *pp = pcb->next;
            break;
        }
    }
    wisp_pool_free(&s->pool[WISP_POOL_UDP_PCB], pcb);
}

wisp_err_t wisp_udp_bind(struct wisp_udp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port)
{
    struct wisp_stack *s = pcb->stack;
    wisp_ipaddr_t a = wisp_ipaddr_any4();
    WISP_CORE_ASSERT_OWNER(pcb->stack);

    if (!wisp_ipaddr_is_any(ip)) {
        if (!wisp_ip_family_built(ip)) {
            return WISP_ERR_VAL;
        }
        a = *ip;
    }
    if (port == 0) {
        port = udp_ephemeral_port(s, pcb, &a);
        if (port == 0) {
            return WISP_ERR_USE; /* the whole ephemeral range is taken */
        }
    } else if (udp_port_taken(s, pcb, &a, port)) {
        return WISP_ERR_USE;
    }
    pcb->local_ip = a;
    pcb->local_port = port;
    return WISP_OK;
}

wisp_err_t wisp_udp_connect(struct wisp_udp_pcb *pcb, const wisp_ipaddr_t *ip, uint16_t port)
{
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(pcb->stack);

    if (!wisp_ip_family_built(ip) || wisp_ipaddr_is_any(ip) || port == 0) {
        return WISP_ERR_VAL;
    }
    if (pcb->local_port == 0) {
        err = wisp_udp_bind(pcb, &pcb->local_ip, 0);
        if (err != WISP_OK) {
            return err;
        }
    }
    pcb->remote_ip = *ip;
    pcb->remote_port = port;
    pcb->flags |= WISP_UDP_F_CONNECTED;
    return WISP_OK;
}

void wisp_udp_disconnect(struct wisp_udp_pcb *pcb)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    memset(&pcb->remote_ip, 0, sizeof(pcb->remote_ip));
    pcb->remote_port = 0;
    pcb->flags &= (uint8_t)~WISP_UDP_F_CONNECTED;
}

void wisp_udp_recv(struct wisp_udp_pcb *pcb, wisp_udp_recv_fn fn, void *arg)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    pcb->recv = fn;
    pcb->recv_arg = arg;
}

/* ------------------------------------------------------------------ output */

/* Send p to ip:port, from src when it is a unicast address (else the
 * PCB's bound address, else the outgoing interface's). */
static wisp_err_t udp_send(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *from,
                           const wisp_ipaddr_t *ip, uint16_t port)
{
    struct wisp_stack *s = pcb->stack;
    struct wisp_netif *nif = NULL;
    struct wisp_pbuf *q;
    wisp_ipaddr_t src;
    uint16_t ulen, sum, ck, ref_before;
    uint8_t *u;
    wisp_err_t err;

    if (!wisp_ip_family_built(ip) || wisp_ipaddr_is_any(ip) || port == 0) {
        return WISP_ERR_VAL; /* RFC 768: port 0 is no valid destination */
    }
    if (p->tot_len > UDP_MAX_PAYLOAD) {
        return WISP_ERR_VAL; /* would not fit one IP datagram (RFC 791) */
    }

    if (pcb->local_port == 0) {
        err = wisp_udp_bind(pcb, &pcb->local_ip, 0);
        if (err != WISP_OK) {
            return err;
        }
    }

    /* Source address selection (RFC 1122 §3.3.4.3, §4.1.3.5): the bound
     * address when it is a specific unicast one, else the address of the
     * interface the route leaves by. Needed here for the pseudo header. */
    if (pcb->bound_if != 0) {
        nif = wisp_netif_by_index(s, pcb->bound_if);
    } else {
        nif = wisp_ip_route(s, ip);
    }
    if (nif == NULL) {
        return WISP_ERR_RTE;
    }
    if (from != NULL && wisp_ip_is_unicast(from)) {
        src = *from;
    } else if (wisp_ip_is_unicast(&pcb->local_ip)) {
        src = pcb->local_ip;
    } else {
        src = wisp_ip_netif_addr(nif, ip);
    }

    /* The header goes into the caller's headroom when the buffer is ours
     * to write (RAM/POOL, not shared); otherwise into a header buffer
     * chained in front of the caller's data. */
    ref_before = p->ref;
    q = wisp_ip_hdr_attach(s, p, WISP_UDP_HLEN, true);
    if (q == NULL) {
        WISP_CTR_INC(s, UDP_DROP_NOMEM);
        return WISP_ERR_MEM;
    }

    /* RFC 768 header: source port, destination port, length, checksum. */
    ulen = q->tot_len;
    u = q->payload;
    wisp_wr16(&u[WISP_UDP_OFF_SPORT], pcb->local_port);
    wisp_wr16(&u[WISP_UDP_OFF_DPORT], port);
    wisp_wr16(&u[WISP_UDP_OFF_LEN], ulen);
    wisp_wr16(&u[WISP_UDP_OFF_CSUM], 0);
    /* RFC 768: checksum over pseudo header, header and data; RFC 1122
     * §4.1.3.4: always generated. A computed 0 is sent as all ones. */
    sum = wisp_chksum_add(wisp_ip_chksum_pseudo(&src, ip, WISP_IP4_PROTO_UDP, ulen), wisp_pbuf_chksum(q, 0, ulen));
    ck = (uint16_t)~sum;
    if (ck == 0) {
        ck = 0xFFFFu;
    }
    wisp_wr16(&u[WISP_UDP_OFF_CSUM], ck);

    if (pcb->bound_if != 0) {
        err = wisp_ip_output_if(nif, q, &src, ip, pcb->ttl, pcb->tos, WISP_IP4_PROTO_UDP, false);
    } else {
        err = wisp_ip_output(s, q, &src, ip, pcb->ttl, pcb->tos, WISP_IP4_PROTO_UDP, false);
    }
    if (err == WISP_OK) {
        WISP_CTR_INC(s, UDP_TX);
    }

    /* Give the caller its buffer back as it was. When a transmit or ARP
     * queue holds a reference to p itself, the headers stay visible for
     * that holder and the caller has to treat p as shared (the rule of
     * wisp_ip4_output and wisp_eth_output). */
    wisp_ip_hdr_detach(p, q, WISP_UDP_HLEN, ref_before);
    return err;
}

wisp_err_t wisp_udp_sendto(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *ip, uint16_t port)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    return udp_send(pcb, p, NULL, ip, port);
}

wisp_err_t wisp_udp_sendto_from(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                                const wisp_ipaddr_t *ip, uint16_t port)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    return udp_send(pcb, p, src, ip, port);
}

void wisp_udp_set_tos(struct wisp_udp_pcb *pcb, uint8_t tos)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    pcb->tos = tos;
}

uint8_t wisp_udp_get_tos(const struct wisp_udp_pcb *pcb)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    return pcb->tos;
}

void wisp_udp_local(const struct wisp_udp_pcb *pcb, wisp_ipaddr_t *ip, uint16_t *port)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    if (ip != NULL) {
        *ip = pcb->local_ip;
    }
    if (port != NULL) {
        *port = pcb->local_port;
    }
}

wisp_err_t wisp_udp_send(struct wisp_udp_pcb *pcb, struct wisp_pbuf *p)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    if ((pcb->flags & WISP_UDP_F_CONNECTED) == 0) {
        return WISP_ERR_CONN;
    }
    return wisp_udp_sendto(pcb, p, &pcb->remote_ip, pcb->remote_port);
}

/* ------------------------------------------------------------------- input */

void wisp_udp_input(struct wisp_stack *s, struct wisp_pbuf *p, const struct wisp_ip_info *ip)
{
    uint8_t hdr[WISP_UDP_HLEN];
    uint16_t sport, dport, ulen, ck;
    struct wisp_udp_pcb *pcb, *best = NULL;
    int best_score = 0;
    WISP_CORE_ASSERT_OWNER(s);

    WISP_CTR_INC(s, UDP_RX);

    if (p->tot_len < WISP_UDP_HLEN) {
        WISP_CTR_INC(s, UDP_DROP_SHORT);
        wisp_pbuf_free(p);
        return;
    }
    (void)wisp_pbuf_copy_out(p, hdr, WISP_UDP_HLEN, 0);
    sport = wisp_rd16(&hdr[WISP_UDP_OFF_SPORT]);
    dport = wisp_rd16(&hdr[WISP_UDP_OFF_DPORT]);
    ulen = wisp_rd16(&hdr[WISP_UDP_OFF_LEN]);
    ck = wisp_rd16(&hdr[WISP_UDP_OFF_CSUM]);

    /* RFC 768: the length field (header + data) governs; it may not claim
     * more than arrived, and bytes beyond it are not part of the datagram. */
    if (ulen < WISP_UDP_HLEN || ulen > p->tot_len) {
        WISP_CTR_INC(s, UDP_DROP_LEN);
        wisp_pbuf_free(p);
        return;
    }
    if (ulen < p->tot_len) {
        wisp_pbuf_trim(p, ulen);
    }

    /* RFC 768: a transmitted checksum of 0 means none was computed;
     * RFC 1122 §4.1.3.4: otherwise a bad checksum is discarded silently. */
    if (ck != 0) {
        uint16_t sum = wisp_chksum_add(wisp_ip_chksum_pseudo(&ip->src, &ip->dst, WISP_IP4_PROTO_UDP, ulen),
                                       wisp_pbuf_chksum(p, 0, ulen));
        if (sum != 0xFFFFu) {
            WISP_CTR_INC(s, UDP_DROP_CHKSUM);
            wisp_pbuf_free(p);
            return;
        }
    }

    /* Demultiplex: the most specific matching PCB (see the file comment). */
    for (pcb = s->udp_pcbs; pcb != NULL; pcb = pcb->next) {
        int score = 1;

        if (pcb->local_port == 0 || pcb->local_port != dport) {
            continue;
        }
        if (pcb->bound_if != 0 && (ip->nif == NULL || ip->nif->index != pcb->bound_if)) {
            continue;
        }
        if (!wisp_ipaddr_is_any(&pcb->local_ip)) {
            if (!wisp_ipaddr_eq(&pcb->local_ip, &ip->dst)) {
                continue;
            }
            score += 2;
        }
        if ((pcb->flags & WISP_UDP_F_CONNECTED) != 0) {
            /* RFC 1122 §4.1.3.4 / BSD semantics: a connected PCB only
             * receives from its peer. */
            if (!wisp_ipaddr_eq(&pcb->remote_ip, &ip->src) || pcb->remote_port != sport) {
                continue;
            }
            score += 4;
        }
        if (score > best_score) {
            best = pcb;
            best_score = score;
        }
    }

    if (best != NULL) {
        (void)wisp_pbuf_pop(p, WISP_UDP_HLEN);
        if (best->recv != NULL) {
            best->recv(best->recv_arg, best, p, &ip->src, sport, ip); /* callee owns p */
        } else {
            wisp_pbuf_free(p);
        }
        return;
    }

    /* RFC 1122 §4.1.3.1: no listener -> port unreachable. The UDP header is
     * still visible and the IP header still in front of it, as
     * wisp_icmp_dest_unreach() expects; it suppresses the error for
     * broadcasts and the other RFC 1122 §3.2.2 cases. */
    WISP_CTR_INC(s, UDP_DROP_NOPORT);
    wisp_icmp_dest_unreach(s, p, ip, WISP_ICMP_UNREACH_PORT);
    wisp_pbuf_free(p);
}

void wisp_udp_err(struct wisp_udp_pcb *pcb, wisp_udp_err_fn fn, void *arg)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    pcb->errf = fn;
    pcb->err_arg = arg;
}

/* A validated ICMP error about a datagram we sent (icmp.c). RFC 1122
 * §4.1.3.3: UDP MUST pass ICMP errors to the application. Only a connected
 * PCB whose peer the quoted datagram went to is told (as BSD sockets
 * without IP_RECVERR: an unconnected socket has no call that could report
 * an error about one of its many peers). */
void wisp_udp_icmp_err(struct wisp_stack *s, const struct wisp_icmp_err *e)
{
    struct wisp_udp_pcb *pcb;
    wisp_ipaddr_t esrc = wisp_ipaddr4(e->src), edst = wisp_ipaddr4(e->dst); /* ICMP for IPv4 */
    wisp_err_t err;
    WISP_CORE_ASSERT_OWNER(s);

    for (pcb = s->udp_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->local_port == e->sport && (pcb->flags & WISP_UDP_F_CONNECTED) != 0 &&
            (wisp_ipaddr_is_any(&pcb->local_ip) || wisp_ipaddr_eq(&pcb->local_ip, &esrc)) &&
            wisp_ipaddr_eq(&pcb->remote_ip, &edst) && pcb->remote_port == e->dport) {
            break;
        }
    }
    if (pcb == NULL) {
        WISP_CTR_INC(s, ICMP_ERR_DROP_NOPCB);
        return;
    }
    /* RFC 1122 §3.2.2.1: protocol and port unreachable say the peer host
     * refuses (hard); the other codes, time exceeded and parameter problem
     * are transient (soft). */
    if (e->type == WISP_ICMP_DEST_UNREACH &&
        (e->code == WISP_ICMP_UNREACH_PORT || e->code == WISP_ICMP_UNREACH_PROTO)) {
        err = WISP_ERR_REFUSED;
        WISP_CTR_INC(s, ICMP_ERR_HARD);
    } else if (e->type == WISP_ICMP_DEST_UNREACH &&
               (e->code == WISP_ICMP_UNREACH_NET || e->code == 6u || e->code == 11u)) {
        err = WISP_ERR_NETUNREACH;
        WISP_CTR_INC(s, ICMP_ERR_SOFT);
    } else {
        err = WISP_ERR_HOSTUNREACH;
        WISP_CTR_INC(s, ICMP_ERR_SOFT);
    }
    WISP_CTR_INC(s, ICMP_ERR_UDP);
    if (pcb->errf != NULL) {
        pcb->errf(pcb->err_arg, pcb, err, e);
    }
}

struct wisp_stack *wisp_udp_stack(const struct wisp_udp_pcb *pcb)
{
    WISP_CORE_ASSERT_OWNER(pcb->stack);
    return pcb->stack;
}


#else
typedef int wisp_udp_disabled_t; /* ISO C forbids an empty translation unit */
#endif /* WISP_UDP */
