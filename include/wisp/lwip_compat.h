/**
 * @file lwip_compat.h
 * lwIP 2.1 names for wisp's netconn API (wisp/netconn.h): types, error
 * codes, flags, addresses, netconn_* and netbuf_* calls, so that lwIP
 * netconn code compiles unchanged apart from its include lines. The shims
 * in include/lwip/ include this file through wisp/lwip_app.h (the rest of
 * lwIP's application-level names), so `#include "lwip/api.h"` works as
 * with lwIP.
 *
 * The instance: lwIP's API has no stack argument, so the calls that create
 * something (netconn_new*, netbuf_new, pbuf_free) use the netconn layer
 * named by WISP_LWIP_NETCONN_API. Define it in your options header to any
 * expression of type struct wisp_netconn_api *; by default it is the
 * variable wisp_lwip_netconn_api, which the application defines
 * (`struct wisp_netconn_api *wisp_lwip_netconn_api;`) and points at its
 * wisp_netconn_api_init'ed instance before the lwIP names are used -- the
 * netconn layer itself keeps no globals. (An application linked with the
 * whole-application layer, wisp/lwip_app.h and the wisp_lwip library,
 * does not define it: tcpip_init() does.) Everything else finds the instance through the
 * netconn or netbuf it is given.
 *
 * Mapping notes (where wisp differs from lwIP):
 *  - struct netconn, struct netbuf, struct pbuf, enum netconn_type and
 *    enum netconn_evt are macros for the wisp tags: a variable called
 *    `netconn`, `netbuf` or `pbuf` is renamed too (harmless).
 *  - ip_addr_t and ip4_addr_t are the same type (wisp_ipaddr_t, as in an
 *    lwIP IPv4-only build); use the accessor macros (ip4_addr_get_u32,
 *    IP4_ADDR, ...) rather than the field `addr`.
 *  - ipaddr_ntoa() returns a buffer that lives until the end of the
 *    enclosing block (a compound literal), not a static one.
 *  - pbuf_free() on application threads takes the core lock (lwIP's is
 *    callable anywhere): do not call it in the core context.
 *  - Timeouts: lwIP's int milliseconds, 0 = none, as wisp.
 * Semantics: see wisp/netconn.h (lwIP 2.1's, with the differences noted
 * there: NOCOPY writes return when acknowledged; recv after FIN keeps
 * returning ERR_CLSD).
 */
#ifndef WISP_LWIP_COMPAT_H
#define WISP_LWIP_COMPAT_H

#include "wisp/netconn.h"

/* ------------------------------------------------------------ instance */

#ifndef WISP_LWIP_NETCONN_API
extern struct wisp_netconn_api *wisp_lwip_netconn_api;
#define WISP_LWIP_NETCONN_API wisp_lwip_netconn_api
#endif

/* ------------------------------------------------------- lwip/arch.h */

typedef uint8_t u8_t;
typedef int8_t s8_t;
typedef uint16_t u16_t;
typedef int16_t s16_t;
typedef uint32_t u32_t;
typedef int32_t s32_t;
typedef uintptr_t mem_ptr_t;
#ifndef LWIP_UNUSED_ARG
#define LWIP_UNUSED_ARG(x) (void)(x)
#endif

/* -------------------------------------------------------- lwip/opt.h */

#ifndef LWIP_IPV4
#define LWIP_IPV4 1
#endif
#ifndef LWIP_IPV6
#define LWIP_IPV6 0
#endif
#ifndef LWIP_NETCONN
#define LWIP_NETCONN 1
#endif
#ifndef LWIP_TCP
#define LWIP_TCP WISP_TCP
#endif
#ifndef LWIP_UDP
#define LWIP_UDP WISP_UDP
#endif
#ifndef LWIP_SO_RCVTIMEO
#define LWIP_SO_RCVTIMEO 1
#endif
#ifndef LWIP_SO_SNDTIMEO
#define LWIP_SO_SNDTIMEO 1
#endif
#ifndef LWIP_NETCONN_FULLDUPLEX
#define LWIP_NETCONN_FULLDUPLEX 1
#endif
#ifndef TCP_MSS
#define TCP_MSS WISP_TCP_MSS
#endif
#ifndef TCP_SND_BUF
#define TCP_SND_BUF WISP_TCP_SND_BUF
#endif
#ifndef TCP_WND
#define TCP_WND WISP_TCP_WND
#endif
#ifndef TCP_DEFAULT_LISTEN_BACKLOG
#define TCP_DEFAULT_LISTEN_BACKLOG 0xff
#endif

/* --------------------------------------------------------- lwip/err.h */

typedef wisp_err_t err_t;
#define ERR_OK WISP_OK
#define ERR_MEM WISP_ERR_MEM
#define ERR_BUF WISP_ERR_BUF
#define ERR_TIMEOUT WISP_ERR_TIMEOUT
#define ERR_RTE WISP_ERR_RTE
#define ERR_INPROGRESS WISP_ERR_INPROGRESS
#define ERR_VAL WISP_ERR_VAL
#define ERR_WOULDBLOCK WISP_ERR_WOULDBLOCK
#define ERR_USE WISP_ERR_USE
#define ERR_ALREADY WISP_ERR_ALREADY
#define ERR_ISCONN WISP_ERR_ISCONN
#define ERR_CONN WISP_ERR_CONN
#define ERR_IF WISP_ERR_IF
#define ERR_ABRT WISP_ERR_ABRT
#define ERR_RST WISP_ERR_RST
#define ERR_CLSD WISP_ERR_CLSD
#define ERR_ARG WISP_ERR_ARG
#define lwip_strerr(e) wisp_err_str(e)

/* --------------------------------------------------------- lwip/def.h */

#define lwip_htons(x) wisp_htons(x)
#define lwip_ntohs(x) wisp_ntohs(x)
#define lwip_htonl(x) wisp_htonl(x)
#define lwip_ntohl(x) wisp_ntohl(x)
#define PP_HTONS(x) ((u16_t)wisp_htons((u16_t)(x)))
#define PP_NTOHS(x) PP_HTONS(x)
#define PP_HTONL(x) ((u32_t)wisp_htonl((u32_t)(x)))
#define PP_NTOHL(x) PP_HTONL(x)
#ifndef LWIP_MIN
#define LWIP_MIN(x, y) (((x) < (y)) ? (x) : (y))
#define LWIP_MAX(x, y) (((x) > (y)) ? (x) : (y))
#endif
#define LWIP_MAKEU32(a, b, c, d) \
    (((u32_t)((a) & 0xff) << 24) | ((u32_t)((b) & 0xff) << 16) | ((u32_t)((c) & 0xff) << 8) | (u32_t)((d) & 0xff))

/* ----------------------------------------------------- lwip/ip_addr.h */

typedef wisp_ipaddr_t ip_addr_t;
typedef wisp_ipaddr_t ip4_addr_t;

#define IPADDR_ANY ((u32_t)0x00000000UL)
#define IPADDR_BROADCAST ((u32_t)0xffffffffUL)
#define IPADDR_LOOPBACK ((u32_t)0x7f000001UL)
#define IPADDR_NONE ((u32_t)0xffffffffUL)
#define IP_ADDR_ANY (&wisp_netconn_addr_any)
#define IP4_ADDR_ANY (&wisp_netconn_addr_any)
#define IP4_ADDR_ANY4 (&wisp_netconn_addr_any)
#define IP_ADDR_BROADCAST (&wisp_netconn_addr_bcast)
#define IP4_ADDR_BROADCAST (&wisp_netconn_addr_bcast)

#define IP4_ADDR(ipaddr, a, b, c, d) \
    (wisp_ipaddr_set4((ipaddr), wisp_ip4((uint8_t)(a), (uint8_t)(b), (uint8_t)(c), (uint8_t)(d))), (void)0)
#define IP_ADDR4(ipaddr, a, b, c, d) IP4_ADDR(ipaddr, a, b, c, d)
#define IPADDR4_INIT(u32val) WISP_IPADDR4_INIT(u32val)
#define IPADDR4_INIT_BYTES(a, b, c, d) IPADDR4_INIT(PP_HTONL(LWIP_MAKEU32(a, b, c, d)))
#define ip4_addr_get_u32(a) wisp_ipaddr_ip4(a)
#define ip4_addr_set_u32(a, v) (wisp_ipaddr_set4((a), (v)), (void)0)
#define ip_2_ip4(a) (a)
#define ip_addr_get_ip4_u32(a) ip4_addr_get_u32(a)
#define ip4_addr1(a) wisp_ip4_octet(wisp_ipaddr_ip4(a), 0)
#define ip4_addr2(a) wisp_ip4_octet(wisp_ipaddr_ip4(a), 1)
#define ip4_addr3(a) wisp_ip4_octet(wisp_ipaddr_ip4(a), 2)
#define ip4_addr4(a) wisp_ip4_octet(wisp_ipaddr_ip4(a), 3)
#define IP_IS_V4(a) 1
#define IP_IS_V6(a) 0
#define IP_IS_V4_VAL(a) 1
#define ip_addr_cmp(a, b) wisp_ipaddr_eq(a, b)
#define ip4_addr_cmp(a, b) wisp_ipaddr_eq(a, b)
#define ip_addr_isany(a) wisp_ipaddr_is_any(a)
#define ip4_addr_isany(a) wisp_ipaddr_is_any(a)
#define ip_addr_isany_val(a) wisp_ipaddr_is_any(&(a))
#define ip_addr_copy(dest, src) ((dest) = (src))
#define ip4_addr_copy(dest, src) ((dest) = (src))
#define ip_addr_set(dest, src) (*(dest) = *(src))
#define ip_addr_set_zero(a) ip4_addr_set_u32(a, 0)
#define ip_addr_set_any(is_ipv6, a) ((void)(is_ipv6), ip4_addr_set_u32(a, 0))
#define ip_addr_set_ip4_u32(a, v) ip4_addr_set_u32(a, v)
#define ip_addr_ismulticast(a) wisp_ip4_is_multicast(wisp_ipaddr_ip4(a))
#define ip_addr_isloopback(a) wisp_ip4_is_loopback(wisp_ipaddr_ip4(a))

/** lwIP ipaddr_aton / ip4addr_aton: 1 when cp is a dotted quad (stored in
 *  *addr unless addr is NULL), else 0. Strict (four decimal octets). */
static inline int ipaddr_aton(const char *cp, ip_addr_t *addr)
{
    wisp_ip4_t a;
    if (cp == NULL || !wisp_ip4_aton(cp, &a)) {
        return 0;
    }
    if (addr != NULL) {
        wisp_ipaddr_set4(addr, a);
    }
    return 1;
}
#define ip4addr_aton(cp, addr) ipaddr_aton(cp, addr)
/** lwIP ipaddr_addr: the address in network order, IPADDR_NONE on error. */
static inline u32_t ipaddr_addr(const char *cp)
{
    ip_addr_t a;
    return ipaddr_aton(cp, &a) ? wisp_ipaddr_ip4(&a) : IPADDR_NONE;
}
/** lwIP ipaddr_ntoa_r: text into buf (buflen >= 16), or NULL. */
static inline char *ipaddr_ntoa_r(const ip_addr_t *addr, char *buf, int buflen)
{
    if (addr == NULL || buf == NULL || buflen < 16) {
        return NULL;
    }
    return wisp_ip4_ntoa(wisp_ipaddr_ip4(addr), buf);
}
#define ip4addr_ntoa_r(addr, buf, buflen) ipaddr_ntoa_r(addr, buf, buflen)
/** lwIP ipaddr_ntoa: the text lives until the end of the enclosing block. */
#define ipaddr_ntoa(addr) ipaddr_ntoa_r((addr), (char[16]){ 0 }, 16)
#define ip4addr_ntoa(addr) ipaddr_ntoa(addr)

/* -------------------------------------------------------- lwip/pbuf.h */

#define pbuf wisp_pbuf
#define pbuf_free(p) wisp_netconn_pbuf_free(WISP_LWIP_NETCONN_API, (p))
#define pbuf_ref(p) wisp_pbuf_ref(p)
#define pbuf_clen(p) ((u16_t)wisp_pbuf_clen(p))
#define pbuf_copy_partial(p, dataptr, len, offset) wisp_pbuf_copy_out((p), (dataptr), (len), (offset))
#define pbuf_take(p, dataptr, len) wisp_pbuf_copy_in((p), (dataptr), (len), 0)
#define pbuf_get_at(p, offset) ((u8_t)wisp_pbuf_get_u8((p), (offset)))

/* ------------------------------------------------------ lwip/netbuf.h */

#define netbuf wisp_netbuf
#define netbuf_new() wisp_netbuf_new(WISP_LWIP_NETCONN_API)
#define netbuf_delete wisp_netbuf_delete
#define netbuf_alloc wisp_netbuf_alloc
#define netbuf_free wisp_netbuf_free
#define netbuf_ref wisp_netbuf_ref
#define netbuf_chain wisp_netbuf_chain
#define netbuf_data wisp_netbuf_data
#define netbuf_next wisp_netbuf_next
#define netbuf_first wisp_netbuf_first
#define netbuf_copy_partial wisp_netbuf_copy_partial
#define netbuf_copy(buf, dataptr, len) wisp_netbuf_copy_partial(buf, dataptr, len, 0)
#define netbuf_take wisp_netbuf_take
#define netbuf_len(buf) wisp_netbuf_len(buf)
#define netbuf_fromaddr(buf) wisp_netbuf_fromaddr(buf)
#define netbuf_fromport(buf) wisp_netbuf_fromport(buf)
#define netbuf_set_fromaddr(buf, fromaddr) ((buf)->addr = *(fromaddr))
#define netbuf_set_fromport(buf, fromport) ((buf)->port = (fromport))

/* --------------------------------------------------------- lwip/api.h */

#define netconn wisp_netconn
/* `enum netconn_type` -> `enum wisp_netconn_type`; netconn_type(conn)
 * expands through the function-like wisp_netconn_type(conn). */
#define netconn_type wisp_netconn_type
#define netconn_evt wisp_netconn_evt
typedef wisp_netconn_callback netconn_callback;

#define NETCONN_INVALID WISP_NETCONN_INVALID
#define NETCONN_TCP WISP_NETCONN_TCP
#define NETCONN_UDP WISP_NETCONN_UDP
#define NETCONN_UDPLITE WISP_NETCONN_UDPLITE
#define NETCONN_UDPNOCHKSUM WISP_NETCONN_UDPNOCHKSUM
#define NETCONN_RAW WISP_NETCONN_RAW
#define NETCONNTYPE_GROUP(t) ((t) & 0xF0)

#define NETCONN_EVT_RCVPLUS WISP_NETCONN_EVT_RCVPLUS
#define NETCONN_EVT_RCVMINUS WISP_NETCONN_EVT_RCVMINUS
#define NETCONN_EVT_SENDPLUS WISP_NETCONN_EVT_SENDPLUS
#define NETCONN_EVT_SENDMINUS WISP_NETCONN_EVT_SENDMINUS
#define NETCONN_EVT_ERROR WISP_NETCONN_EVT_ERROR

#define NETCONN_NOFLAG WISP_NETCONN_NOFLAG
#define NETCONN_NOCOPY WISP_NETCONN_NOCOPY
#define NETCONN_COPY WISP_NETCONN_COPY
#define NETCONN_MORE WISP_NETCONN_MORE
#define NETCONN_DONTBLOCK WISP_NETCONN_DONTBLOCK
#define NETCONN_NOAUTORCVD WISP_NETCONN_NOAUTORCVD
#define NETCONN_SHUT_RD WISP_NETCONN_SHUT_RD
#define NETCONN_SHUT_WR WISP_NETCONN_SHUT_WR
#define NETCONN_SHUT_RDWR WISP_NETCONN_SHUT_RDWR

#define netconn_new(t) wisp_netconn_new(WISP_LWIP_NETCONN_API, (enum wisp_netconn_type)(t))
#define netconn_new_with_callback(t, c) \
    wisp_netconn_new_with_callback(WISP_LWIP_NETCONN_API, (enum wisp_netconn_type)(t), (c))
#define netconn_new_with_proto_and_callback(t, p, c) \
    wisp_netconn_new_with_proto_and_callback(WISP_LWIP_NETCONN_API, (enum wisp_netconn_type)(t), (u8_t)(p), (c))
#define netconn_delete wisp_netconn_delete
#define netconn_prepare_delete(conn) ((void)(conn), ERR_OK)
#define netconn_bind wisp_netconn_bind
#define netconn_connect wisp_netconn_connect
#define netconn_disconnect wisp_netconn_disconnect
#define netconn_listen(conn) wisp_netconn_listen(conn)
#define netconn_listen_with_backlog(conn, backlog) wisp_netconn_listen_with_backlog((conn), (u8_t)(backlog))
#define netconn_accept wisp_netconn_accept
#define netconn_recv wisp_netconn_recv
#define netconn_recv_tcp_pbuf wisp_netconn_recv_tcp_pbuf
#define netconn_recv_tcp_pbuf_flags wisp_netconn_recv_tcp_pbuf_flags
#define netconn_recv_udp_raw_netbuf(conn, buf) wisp_netconn_recv_udp_raw_netbuf_flags((conn), (buf), 0)
#define netconn_recv_udp_raw_netbuf_flags wisp_netconn_recv_udp_raw_netbuf_flags
#define netconn_tcp_recvd wisp_netconn_tcp_recvd
#define netconn_send wisp_netconn_send
#define netconn_sendto wisp_netconn_sendto
#define netconn_write(conn, dataptr, size, apiflags) \
    wisp_netconn_write_partly((conn), (dataptr), (size), (u8_t)(apiflags), NULL)
#define netconn_write_partly(conn, dataptr, size, apiflags, bytes_written) \
    wisp_netconn_write_partly((conn), (dataptr), (size), (u8_t)(apiflags), (bytes_written))
#define netconn_close wisp_netconn_close
#define netconn_shutdown wisp_netconn_shutdown
#define netconn_getaddr wisp_netconn_getaddr
#define netconn_peer(c, i, p) wisp_netconn_getaddr(c, i, p, 0)
#define netconn_addr(c, i, p) wisp_netconn_getaddr(c, i, p, 1)
#define netconn_err wisp_netconn_err
#define netconn_set_recvtimeout(conn, timeout) wisp_netconn_set_recvtimeout((conn), (u32_t)(timeout))
#define netconn_get_recvtimeout(conn) ((int)wisp_netconn_get_recvtimeout(conn))
#define netconn_set_sendtimeout(conn, timeout) wisp_netconn_set_sendtimeout((conn), (u32_t)(timeout))
#define netconn_get_sendtimeout(conn) ((s32_t)wisp_netconn_get_sendtimeout(conn))
#define netconn_set_nonblocking(conn, val) wisp_netconn_set_nonblocking((conn), (val) != 0)
#define netconn_is_nonblocking(conn) ((u8_t)wisp_netconn_is_nonblocking(conn))
/* wisp extensions under lwIP-style names */
#define netconn_set_dscp wisp_netconn_set_dscp
#define netconn_set_nodelay wisp_netconn_set_nodelay

/* --------------------------------------------------------- lwip/sys.h */

#define sys_msleep(ms) wisp_sys_sleep_ms(ms)
#define sys_now() wisp_sys_now_ms()

#endif /* WISP_LWIP_COMPAT_H */
