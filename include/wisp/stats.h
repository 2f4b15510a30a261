/**
 * @file stats.h
 * Named counters of one stack instance. Every dropped packet increments a
 * counter that says why ("ip4.drop.chksum"). The list is one X-macro so the
 * enum, the names and the printer can never disagree.
 * Who may call: counters are written by the core and read with
 * wisp_stack_counter() (stack.h) in the core context, which checks it like
 * every entry point; wisp_counter_name() from anywhere (pure).
 */
#ifndef WISP_STATS_H
#define WISP_STATS_H

#include "wisp/arch.h"
#include "wisp/opt.h"

#define WISP_COUNTERS(X) \
    X(ETH_RX, "eth.rx") \
    X(ETH_TX, "eth.tx") \
    X(ETH_DROP_SHORT, "eth.drop.short") \
    X(ETH_DROP_TYPE, "eth.drop.type") \
    X(ETH_DROP_NOTFORUS, "eth.drop.notforus") \
    X(ETH_DROP_SRC, "eth.drop.src") \
    X(ETH_DROP_LINKDOWN, "eth.drop.linkdown") \
    X(RAWIP_RX, "rawip.rx") \
    X(RAWIP_DROP_VERSION, "rawip.drop.version") \
    X(RAWIP_DROP_LINKDOWN, "rawip.drop.linkdown") \
    X(ARP_RX, "arp.rx") \
    X(ARP_TX, "arp.tx") \
    X(ARP_REQ_RX, "arp.req.rx") \
    X(ARP_REPLY_RX, "arp.reply.rx") \
    X(ARP_REQ_TX, "arp.req.tx") \
    X(ARP_REPLY_TX, "arp.reply.tx") \
    X(ARP_GRATUITOUS_TX, "arp.gratuitous.tx") \
    X(ARP_DROP_SHORT, "arp.drop.short") \
    X(ARP_DROP_HW, "arp.drop.hw") \
    X(ARP_DROP_PROTO, "arp.drop.proto") \
    X(ARP_DROP_OP, "arp.drop.op") \
    X(ARP_DROP_SRC, "arp.drop.src") \
    X(ARP_DROP_NOTFORUS, "arp.drop.notforus") \
    X(ARP_DROP_UNSOLICITED, "arp.drop.unsolicited") \
    X(ARP_CONFLICT, "arp.conflict") \
    X(ARP_QUEUE_DROP, "arp.queue.drop") \
    X(ARP_RESOLVE_FAIL, "arp.resolve.fail") \
    X(ARP_TABLE_FULL, "arp.table.full") \
    X(ARP_NOMEM, "arp.nomem") \
    X(IP4_RX, "ip4.rx") \
    X(IP4_TX, "ip4.tx") \
    X(IP4_DELIVERED, "ip4.delivered") \
    X(IP4_DROP_SHORT, "ip4.drop.short") \
    X(IP4_DROP_VERSION, "ip4.drop.version") \
    X(IP4_DROP_IHL, "ip4.drop.ihl") \
    X(IP4_DROP_LEN, "ip4.drop.len") \
    X(IP4_DROP_CHKSUM, "ip4.drop.chksum") \
    X(IP4_DROP_TTL, "ip4.drop.ttl") \
    X(IP4_DROP_SRC, "ip4.drop.src") \
    X(IP4_DROP_NOTFORUS, "ip4.drop.notforus") \
    X(IP4_DROP_PROTO, "ip4.drop.proto") \
    X(IP4_DROP_OPTS, "ip4.drop.opts") \
    X(IP4_DROP_NOROUTE, "ip4.drop.noroute") \
    X(IP4_DROP_DF, "ip4.drop.df") \
    X(IP4_DROP_NOMEM, "ip4.drop.nomem") \
    X(IP4_DROP_LINKDOWN, "ip4.drop.linkdown") \
    X(IP4_FRAG_TX, "ip4.frag.tx") \
    X(IP4_FRAG_RX, "ip4.frag.rx") \
    X(IP4_REASS_OK, "ip4.reass.ok") \
    X(IP4_REASS_TIMEOUT, "ip4.reass.timeout") \
    X(IP4_REASS_OVERLAP, "ip4.reass.overlap") \
    X(IP4_REASS_DUP, "ip4.reass.dup") \
    X(IP4_REASS_TOOBIG, "ip4.reass.toobig") \
    X(IP4_REASS_BADFRAG, "ip4.reass.badfrag") \
    X(IP4_REASS_EVICT, "ip4.reass.evict") \
    X(ICMP_RX, "icmp.rx") \
    X(ICMP_TX, "icmp.tx") \
    X(ICMP_ECHO_RX, "icmp.echo.rx") \
    X(ICMP_ECHO_REPLY_TX, "icmp.echoreply.tx") \
    X(ICMP_ECHO_REPLY_RX, "icmp.echoreply.rx") \
    X(ICMP_ERR_TX, "icmp.err.tx") \
    X(ICMP_ERR_RX, "icmp.err.rx") \
    X(ICMP_ERR_RATELIMIT, "icmp.err.ratelimited") \
    X(ICMP_ERR_SUPPRESSED, "icmp.err.suppressed") \
    X(ICMP_DROP_SHORT, "icmp.drop.short") \
    X(ICMP_DROP_CHKSUM, "icmp.drop.chksum") \
    X(ICMP_DROP_TYPE, "icmp.drop.type") \
    X(ICMP_DROP_BCAST, "icmp.drop.bcast") \
    X(ICMP_DROP_NOMEM, "icmp.drop.nomem") \
    X(ICMP_ERR_DROP_SHORT, "icmp.err.drop.short") \
    X(ICMP_ERR_DROP_QUOTE, "icmp.err.drop.quote") \
    X(ICMP_ERR_DROP_NOTOURS, "icmp.err.drop.notours") \
    X(ICMP_ERR_DROP_PROTO, "icmp.err.drop.proto") \
    X(ICMP_ERR_DROP_NOPCB, "icmp.err.drop.nopcb") \
    X(ICMP_ERR_DROP_SEQ, "icmp.err.drop.seq") \
    X(ICMP_ERR_DROP_BCAST, "icmp.err.drop.bcast") \
    X(ICMP_ERR_ICMP, "icmp.err.abouticmp") \
    X(ICMP_QUENCH_IGNORED, "icmp.quench.ignored") \
    X(ICMP_REDIRECT_IGNORED, "icmp.redirect.ignored") \
    X(ICMP_ERR_SOFT, "icmp.err.soft") \
    X(ICMP_ERR_HARD, "icmp.err.hard") \
    X(ICMP_ERR_UDP, "icmp.err.udp") \
    X(ICMP_PMTU_LOWERED, "icmp.pmtu.lowered") \
    X(ICMP_PMTU_CLAMPED, "icmp.pmtu.clamped") \
    X(ICMP_PMTU_DROP_NODF, "icmp.pmtu.drop.nodf") \
    X(ICMP_PMTU_DROP_BOGUS, "icmp.pmtu.drop.bogus") \
    X(ICMP_PMTU_DROP_NORAISE, "icmp.pmtu.drop.noraise") \
    X(ICMP_PMTU_DROP_OFF, "icmp.pmtu.drop.off") \
    X(ICMP_PMTU_EXPIRED, "icmp.pmtu.expired") \
    X(UDP_RX, "udp.rx") \
    X(UDP_TX, "udp.tx") \
    X(UDP_DROP_SHORT, "udp.drop.short") \
    X(UDP_DROP_LEN, "udp.drop.len") \
    X(UDP_DROP_CHKSUM, "udp.drop.chksum") \
    X(UDP_DROP_NOPORT, "udp.drop.noport") \
    X(UDP_DROP_NOMEM, "udp.drop.nomem") \
    X(DHCP_TX, "dhcp.tx") \
    X(DHCP_RX, "dhcp.rx") \
    X(DHCP_RETRANSMIT, "dhcp.retransmit") \
    X(DHCP_DROP_SHORT, "dhcp.drop.short") \
    X(DHCP_DROP_BAD, "dhcp.drop.bad") \
    X(DHCP_DROP_XID, "dhcp.drop.xid") \
    X(DHCP_DROP_CHADDR, "dhcp.drop.chaddr") \
    X(DHCP_DROP_OPTS, "dhcp.drop.opts") \
    X(DHCP_DROP_STATE, "dhcp.drop.state") \
    X(DHCP_DROP_NOMEM, "dhcp.drop.nomem") \
    X(DHCP_NAK_RX, "dhcp.nak.rx") \
    X(DHCP_BOUND, "dhcp.bound") \
    X(DHCP_RENEWED, "dhcp.renewed") \
    X(DHCP_CONFLICT, "dhcp.conflict") \
    X(DHCP_DECLINE_TX, "dhcp.decline.tx") \
    X(DHCP_RELEASE_TX, "dhcp.release.tx") \
    X(DHCP_EXPIRED, "dhcp.lease.expired") \
    X(TCP_RX, "tcp.rx") \
    X(TCP_TX, "tcp.tx") \
    X(TCP_DROP_SHORT, "tcp.drop.short") \
    X(TCP_DROP_CHKSUM, "tcp.drop.chksum") \
    X(TCP_DROP_BADOFF, "tcp.drop.badoff") \
    X(TCP_DROP_BCAST, "tcp.drop.bcast") \
    X(TCP_BADOPT, "tcp.badopt") \
    X(TCP_NOPORT, "tcp.noport") \
    X(TCP_DROP_OOW, "tcp.drop.outofwindow") \
    X(TCP_DROP_PAWS, "tcp.drop.paws") \
    X(TCP_DROP_NOTS, "tcp.drop.nots") \
    X(TCP_DROP_NOACK, "tcp.drop.noack") \
    X(TCP_DROP_BADACK, "tcp.drop.badack") \
    X(TCP_DROP_STATE, "tcp.drop.state") \
    X(TCP_DROP_SYN, "tcp.drop.syn") \
    X(TCP_DROP_RST, "tcp.drop.rst") \
    X(TCP_DROP_AFTERCLOSE, "tcp.drop.afterclose") \
    X(TCP_DROP_REFUSED, "tcp.drop.refused") \
    X(TCP_DROP_NOMEM, "tcp.drop.nomem") \
    X(TCP_DROP_PCBMEM, "tcp.drop.pcbmem") \
    X(TCP_CHALLENGE_ACK, "tcp.challengeack") \
    X(TCP_CHALLENGE_RATELIMIT, "tcp.challengeack.ratelimited") \
    X(TCP_SYNQ_FULL, "tcp.synq.full") \
    X(TCP_SYNQ_TIMEOUT, "tcp.synq.timeout") \
    X(TCP_LISTEN_FULL, "tcp.listen.full") \
    X(TCP_COOKIE_SENT, "tcp.cookie.sent") \
    X(TCP_COOKIE_OK, "tcp.cookie.ok") \
    X(TCP_COOKIE_BAD, "tcp.cookie.bad") \
    X(TCP_ACCEPT, "tcp.accept") \
    X(TCP_CONNECT, "tcp.connect") \
    X(TCP_OOSEQ, "tcp.ooseq") \
    X(TCP_OOSEQ_DROP, "tcp.ooseq.drop") \
    X(TCP_DSACK, "tcp.dsack") \
    X(TCP_RETRANSMIT, "tcp.retransmit") \
    X(TCP_FAST_RETRANSMIT, "tcp.fastretransmit") \
    X(TCP_TIMEOUT, "tcp.timeout") \
    X(TCP_SYN_RETRANSMIT, "tcp.syn.retransmit") \
    X(TCP_ABORT_RTX, "tcp.abort.retransmit") \
    X(TCP_ABORT_KEEPALIVE, "tcp.abort.keepalive") \
    X(TCP_RST_TX, "tcp.rst.tx") \
    X(TCP_RST_RX, "tcp.rst.rx") \
    X(TCP_KEEPALIVE, "tcp.keepalive.probe") \
    X(TCP_PERSIST, "tcp.persist.probe") \
    X(TCP_TW_RECYCLED, "tcp.timewait.recycled") \
    X(TCP_TW_REOPEN, "tcp.timewait.reopen") \
    X(TCP_DROP_RXBUDGET, "tcp.drop.rxbudget") \
    X(TCP_WND_LIMITED, "tcp.wnd.budgetlimited") \
    X(TCP_WRITE_TXRESERVE, "tcp.write.txreserve") \
    X(TCP_WRITE_TXSHARE, "tcp.write.txshare") \
    X(TCP_ABORT_PERSIST, "tcp.abort.persist") \
    X(TCP_CTL_LOCAL_RETRY, "tcp.ctl.localretry") \
    X(TCP_PMTU_LOWER, "tcp.pmtu.lower") \
    X(TCP_PMTU_RAISE, "tcp.pmtu.raise") \
    X(TCP_PMTU_RESEG, "tcp.pmtu.reseg") \
    X(TCP_PMTU_RESEG_NOMEM, "tcp.pmtu.reseg.nomem") \
    X(TCP_PMTU_BLACKHOLE, "tcp.pmtu.blackhole") \
    X(TCP_ICMP_REFUSED, "tcp.icmp.refused") \
    X(TCP_RX_COALESCE, "tcp.rx.coalesce") \
    X(DNS_TX, "dns.tx") \
    X(DNS_RETRANSMIT, "dns.retransmit") \
    X(DNS_RX, "dns.rx") \
    X(DNS_TIMEOUT, "dns.timeout") \
    X(DNS_ANSWER, "dns.answer") \
    X(DNS_NXDOMAIN, "dns.nxdomain") \
    X(DNS_NODATA, "dns.nodata") \
    X(DNS_SERVFAIL, "dns.servfail") \
    X(DNS_RCODE_ERR, "dns.rcode.err") \
    X(DNS_TRUNCATED, "dns.truncated") \
    X(DNS_CNAME_LIMIT, "dns.cname.limit") \
    X(DNS_DROP_SRC, "dns.drop.src") \
    X(DNS_DROP_SHORT, "dns.drop.short") \
    X(DNS_DROP_LEN, "dns.drop.len") \
    X(DNS_DROP_ID, "dns.drop.id") \
    X(DNS_DROP_HDR, "dns.drop.hdr") \
    X(DNS_DROP_QUESTION, "dns.drop.question") \
    X(DNS_DROP_MALFORMED, "dns.drop.malformed") \
    X(DNS_FAIL, "dns.fail") \
    X(DNS_NOMEM, "dns.nomem") \
    X(DNS_CACHE_HIT, "dns.cache.hit") \
    X(DNS_CACHE_EVICT, "dns.cache.evict") \
    X(NETIF_RX_NOMEM, "netif.rx.nomem") \
    X(NETIF_TXQ_DROP, "netif.txq.drop") \
    X(NETIF_TX_ERR, "netif.tx.err") \
    X(LOOP_DROP, "loop.drop") \
    X(TCPIP_INPUT_DROP, "tcpip.input.drop")

enum wisp_counter {
#define WISP_CTR_ENUM_(id, name) WISP_CTR_##id,
    WISP_COUNTERS(WISP_CTR_ENUM_)
#undef WISP_CTR_ENUM_
    WISP_CTR_COUNT
};

/** Name of a counter ("ip4.drop.chksum"), or NULL when out of range. */
const char *wisp_counter_name(unsigned id);

/** Increment counter id of stack s (core context). Without WISP_STATS
 *  nothing is counted (s is named in an unevaluated sizeof so that a
 *  variable kept for counting raises no unused warning). */
#if WISP_STATS && WISP_STATS_OUTLINE
struct wisp_stack;
/** The body of WISP_CTR_INC with WISP_STATS_OUTLINE (library code only). */
void wisp_ctr_inc(struct wisp_stack *s, unsigned id);
#define WISP_CTR_INC(s, id) wisp_ctr_inc((s), WISP_CTR_##id)
#define WISP_CTR_INC_ID(s, v) wisp_ctr_inc((s), (v))
#elif WISP_STATS
#define WISP_CTR_INC(s, id) ((s)->ctr[WISP_CTR_##id]++)
#define WISP_CTR_INC_ID(s, v) ((s)->ctr[(v)]++)
#else
#define WISP_CTR_INC(s, id) ((void)sizeof(s), (void)WISP_CTR_##id)
#define WISP_CTR_INC_ID(s, v) ((void)sizeof(s), (void)(v))
#endif
/* WISP_CTR_INC_ID(s, v): the same with the counter in a variable (enum
 * wisp_counter), for the one drop exit of a parser. */

#endif /* WISP_STATS_H */
