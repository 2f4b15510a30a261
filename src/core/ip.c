/**
 * @file ip.c
 * Address-family dispatch between the transports and the IP layers
 * (wisp/ip.h). IPv4 is the only family built today; IPv6 adds its cases
 * here and its own ip6*.c files.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/stack.h"
#include "wisp/chksum.h"

struct wisp_netif *wisp_ip_route(struct wisp_stack *s, const wisp_ipaddr_t *dst)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (dst != NULL && wisp_ipaddr_is4(dst)) {
        return wisp_ip4_route(s, wisp_ipaddr_ip4(dst));
    }
    return NULL;
}

wisp_err_t wisp_ip_output(struct wisp_stack *s, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                          const wisp_ipaddr_t *dst, uint8_t ttl, uint8_t tos, uint8_t proto, bool df)
{
    WISP_CORE_ASSERT_OWNER(s);
    if (dst != NULL && wisp_ipaddr_is4(dst) && (src == NULL || wisp_ipaddr_is_any(src) || wisp_ipaddr_is4(src))) {
        return wisp_ip4_output(s, p, src != NULL ? wisp_ipaddr_ip4(src) : WISP_IP4_ANY, wisp_ipaddr_ip4(dst), ttl,
                               tos, proto, df);
    }
    return WISP_ERR_VAL;
}

wisp_err_t wisp_ip_output_if(struct wisp_netif *nif, struct wisp_pbuf *p, const wisp_ipaddr_t *src,
                             const wisp_ipaddr_t *dst, uint8_t ttl, uint8_t tos, uint8_t proto, bool df)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    if (dst != NULL && wisp_ipaddr_is4(dst) && (src == NULL || wisp_ipaddr_is_any(src) || wisp_ipaddr_is4(src))) {
        return wisp_ip4_output_if(nif, p, src != NULL ? wisp_ipaddr_ip4(src) : WISP_IP4_ANY, wisp_ipaddr_ip4(dst),
                                  ttl, tos, proto, df);
    }
    return WISP_ERR_VAL;
}

wisp_ipaddr_t wisp_ip_netif_addr(const struct wisp_netif *nif, const wisp_ipaddr_t *dst)
{
    WISP_CORE_ASSERT_OWNER(nif->stack);
    (void)dst; /* IPv4 is the only family built: its address */
    return wisp_ipaddr4(nif != NULL ? nif->ip4.addr : WISP_IP4_ANY);
}

bool wisp_ip_family_built(const wisp_ipaddr_t *a)
{
    return a != NULL && wisp_ipaddr_is4(a);
}

bool wisp_ip_is_unicast(const wisp_ipaddr_t *a)
{
    wisp_ip4_t v;
    if (a == NULL || !wisp_ipaddr_is4(a)) {
        return false;
    }
    v = wisp_ipaddr_ip4(a);
    return v != WISP_IP4_ANY && v != WISP_IP4_BCAST && !wisp_ip4_is_multicast(v);
}

bool wisp_ip_is_local(struct wisp_stack *s, const wisp_ipaddr_t *a)
{
    WISP_CORE_ASSERT_OWNER(s);
    return a != NULL && wisp_ipaddr_is4(a) && wisp_ip4_is_local(s, wisp_ipaddr_ip4(a));
}

uint16_t wisp_ip_chksum_pseudo(const wisp_ipaddr_t *src, const wisp_ipaddr_t *dst, uint8_t proto, uint16_t len)
{
    return wisp_chksum_pseudo4(wisp_ipaddr_ip4(src), wisp_ipaddr_ip4(dst), proto, len);
}
