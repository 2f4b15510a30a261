/**
 * @file services.c
 * UDP echo (RFC 862) and UDP discard (RFC 863) on the raw API, organised
 * as a service table that later protocols extend. Portable: no stdio, no
 * allocation; all state in the caller's struct wisp_services.
 */
#include "services.h"

/* Source ports of services that answer every datagram: echoing to one of
 * them would make two servers bounce a datagram forever. */
static bool reflector_port(uint16_t port)
{
    return port == 7u || port == 9u || port == 13u || port == 17u || port == 19u || port == 37u;
}

/* ---------------------------------------------------------------- echo */

/* RFC 862 "UDP Based Echo Service": "When a datagram is received, the data
 * from it is sent back in an answering datagram." */
static void udp_echo_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                          uint16_t port, const struct wisp_ip4_info *ip)
{
    struct wisp_services *svc = (struct wisp_services *)arg;
    struct wisp_stack *s = pcb->stack;
    uint16_t len = p->tot_len;
    uint8_t tos = pcb->tos;
    wisp_ipaddr_t bound = pcb->local_ip;
    wisp_err_t err;

    /* RFC 768: source port 0 means the sender expects no reply; broadcast
     * and multicast requests are not answered (no amplification); nor are
     * other reflecting services (loop). */
    if (port == 0 || ip->bcast || ip->mcast || reflector_port(port)) {
        svc->udp_echo_st.dropped++;
        wisp_pbuf_free(p);
        return;
    }

    /* Answer from the address the request was sent to, with its DSCP. */
    pcb->local_ip = wisp_ipaddr4(ip->dst);
    pcb->tos = (uint8_t)(ip->tos & 0xFCu);
    /* Zero-copy: the received buffer goes back out; UDP writes its header
     * into the headroom left by the headers that were stripped. */
    err = wisp_udp_sendto(pcb, p, src, port);
    if (err == WISP_ERR_BUF) {
        /* Not writable in place after all: send a copy. */
        struct wisp_pbuf *q = wisp_pbuf_clone(s, WISP_LAYER_TRANSPORT, p);
        err = (q != NULL) ? wisp_udp_sendto(pcb, q, src, port) : WISP_ERR_MEM;
        wisp_pbuf_free(q);
    }
    pcb->local_ip = bound;
    pcb->tos = tos;
    wisp_pbuf_free(p);

    if (err == WISP_OK) {
        svc->udp_echo_st.datagrams++;
        svc->udp_echo_st.bytes += len;
    } else {
        svc->udp_echo_st.dropped++;
        svc->udp_echo_st.send_err++;
    }
}

/* ------------------------------------------------------------- discard */

/* RFC 863 "UDP Based Discard Service": "When a datagram is received, it is
 * thrown away. No response is sent." */
static void udp_discard_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                             uint16_t port, const struct wisp_ip4_info *ip)
{
    struct wisp_services *svc = (struct wisp_services *)arg;
    WISP_UNUSED(pcb);
    WISP_UNUSED(src);
    WISP_UNUSED(port);
    WISP_UNUSED(ip);
    svc->udp_discard_st.datagrams++;
    svc->udp_discard_st.bytes += p->tot_len;
    wisp_pbuf_free(p);
}

/* --------------------------------------------------------------- table */

static wisp_err_t udp_open(struct wisp_services *svc, struct wisp_udp_pcb **slot, uint16_t port,
                           wisp_udp_recv_fn fn)
{
    struct wisp_udp_pcb *pcb;
    wisp_err_t err;
    if (*slot != NULL) {
        return WISP_ERR_ALREADY;
    }
    pcb = wisp_udp_new(svc->stack);
    if (pcb == NULL) {
        return WISP_ERR_MEM;
    }
    err = wisp_udp_bind(pcb, NULL, port);
    if (err != WISP_OK) {
        wisp_udp_remove(pcb);
        return err;
    }
    wisp_udp_recv(pcb, fn, svc);
    *slot = pcb;
    return WISP_OK;
}

static void udp_close(struct wisp_udp_pcb **slot)
{
    if (*slot != NULL) {
        wisp_udp_remove(*slot);
        *slot = NULL;
    }
}

static wisp_err_t udp_echo_start(struct wisp_services *svc)
{
    return udp_open(svc, &svc->udp_echo, WISP_PORT_ECHO, udp_echo_recv);
}

static void udp_echo_stop(struct wisp_services *svc)
{
    udp_close(&svc->udp_echo);
}

static wisp_err_t udp_discard_start(struct wisp_services *svc)
{
    return udp_open(svc, &svc->udp_discard, WISP_PORT_DISCARD, udp_discard_recv);
}

static void udp_discard_stop(struct wisp_services *svc)
{
    udp_close(&svc->udp_discard);
}

static const struct wisp_service_desc service_table[] = {
    { "echo", WISP_IP4_PROTO_UDP, WISP_PORT_ECHO, udp_echo_start, udp_echo_stop },
    { "discard", WISP_IP4_PROTO_UDP, WISP_PORT_DISCARD, udp_discard_start, udp_discard_stop },
};

const struct wisp_service_desc *wisp_services_table(unsigned *n)
{
    if (n != NULL) {
        *n = (unsigned)WISP_ARRAY_SIZE(service_table);
    }
    return service_table;
}

wisp_err_t wisp_services_udp_start(struct wisp_stack *s, struct wisp_services *svc)
{
    unsigned i;
    if (s == NULL || svc == NULL) {
        return WISP_ERR_ARG;
    }
    memset(svc, 0, sizeof(*svc));
    svc->stack = s;
    for (i = 0; i < WISP_ARRAY_SIZE(service_table); i++) {
        wisp_err_t err;
        if (service_table[i].proto != WISP_IP4_PROTO_UDP) {
            continue;
        }
        err = service_table[i].start(svc);
        if (err != WISP_OK) {
            wisp_services_udp_stop(svc);
            return err;
        }
    }
    return WISP_OK;
}

void wisp_services_udp_stop(struct wisp_services *svc)
{
    unsigned i;
    if (svc == NULL || svc->stack == NULL) {
        return;
    }
    for (i = 0; i < WISP_ARRAY_SIZE(service_table); i++) {
        if (service_table[i].proto == WISP_IP4_PROTO_UDP) {
            service_table[i].stop(svc);
        }
    }
}
