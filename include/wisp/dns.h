/**
 * @file dns.h
 * DNS stub resolver (RFC 1035) for IPv4 address (A) records, in the core.
 *
 * The resolver lives in the stack instance (struct wisp_stack.dns, sized
 * by the WISP_DNS_* options of opt.h; all-zero is its initial state, so
 * wisp_stack_init needs nothing more): the configured servers, the
 * outstanding queries, the requests waiting for them and a cache of
 * answers. It sends its queries through UDP PCBs of the stack's UDP pool
 * (one per outstanding query: count them in WISP_UDP_PCB_COUNT).
 *
 * Behaviour:
 *  - wisp_dns_gethostbyname() answers at once (WISP_OK) for a dotted quad,
 *    "localhost" and a name in the cache; otherwise it starts (or joins) a
 *    query and calls the callback later.
 *  - Every transmission of a query goes out with a fresh random 16-bit ID
 *    and from a fresh random source port (RFC 5452 §9.2, RFC 6056); a
 *    transmission that draws no usable answer within the timeout is
 *    followed by one to the next configured server (rotation), at most
 *    WISP_DNS_MAX_RETRIES times; the timeout doubles after each round
 *    over all servers (at most 8 x WISP_DNS_TIMEOUT_MS).
 *  - A response is only taken from the server asked (address and port
 *    53), with our ID, QR = 1, opcode QUERY, QDCOUNT = 1 and our question
 *    (name compared case-insensitively, RFC 4343; QTYPE A, QCLASS IN).
 *    Anything else is dropped and counted (dns.drop.*) and the query keeps
 *    waiting. Names are decompressed with bounds: every pointer must point
 *    before everything read of that name so far, labels <= 63, names <=
 *    255 bytes.
 *  - RCODE NXDOMAIN, and NOERROR without an A record for the name (NODATA,
 *    RFC 2308 §2.2), end the query with WISP_DNS_ERR_NOTFOUND. SERVFAIL,
 *    REFUSED, NOTIMP, FORMERR and a truncated response (TC bit; there is
 *    no TCP fallback, RFC 7766's TCP is not implemented) count as a failed
 *    transmission: the next one goes to the next server at once.
 *  - CNAME chains in the answer section are followed (at most
 *    WISP_DNS_MAX_CNAME links); the TTL reported and cached is the
 *    smallest of the chain, capped at WISP_DNS_MAX_TTL_S (a TTL with the
 *    top bit set counts as 0, RFC 2181 §8). TTL 0 answers are not cached.
 *  - The cache holds WISP_DNS_CACHE_SIZE names; when full, the least
 *    recently used entry is replaced (expired ones first).
 *  - Requests for a name that is already being resolved join that query
 *    (one query, every caller gets the callback).
 *
 * Who may call: the core context only (like every raw API function).
 * Callbacks run in the core context; they may call the resolver again.
 */
#ifndef WISP_DNS_H
#define WISP_DNS_H

#include "wisp/opt.h"
#include "wisp/arch.h"
#include "wisp/err.h"
#include "wisp/addr.h"
#include "wisp/timer.h"

#if WISP_DNS

struct wisp_stack;
struct wisp_udp_pcb;

/** The result "no such name": NXDOMAIN, or no address record for the name
 *  (NODATA). An alias of an err.h code that the resolver uses for nothing
 *  else, so it stays distinct from every other outcome. */
#define WISP_DNS_ERR_NOTFOUND WISP_ERR_RTE

/** DNS server port (RFC 1035 §4.2.1). */
#define WISP_DNS_PORT 53u

/** Completion callback: name is the name as requested (valid during the
 *  call only); err WISP_OK with addr (and the remaining TTL in seconds),
 *  or why it failed:
 *   WISP_DNS_ERR_NOTFOUND  NXDOMAIN / NODATA (the name does not exist);
 *   WISP_ERR_TIMEOUT       no usable answer from any server in time, or
 *                          only SERVFAIL (a temporary failure);
 *   WISP_ERR_CONN          the servers answered, but only with REFUSED,
 *                          NOTIMP, FORMERR or truncated responses;
 *   WISP_ERR_ABRT          the resolver was shut down (wisp_dns_deinit).
 *  Runs in the core context. */
typedef void (*wisp_dns_found_fn)(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr,
                                  uint32_t ttl_s);

struct wisp_dns_query;

struct wisp_dns_waiter;

struct wisp_dns_cache_entry;

struct wisp_dns;

/** Set (ip != 0) or clear (ip == 0) server number idx
 *  (0..WISP_DNS_MAX_SERVERS-1); ip in network order. Queries in progress
 *  use the new list from their next transmission on. WISP_OK or
 *  WISP_ERR_ARG (idx out of range, or a broadcast/multicast address).
 *  Core context (e.g. a DHCP client handing over the servers it learnt). */
wisp_err_t wisp_dns_set_server(struct wisp_stack *s, unsigned idx, wisp_ip4_t ip);
/** Server number idx (0 when unset or idx out of range). Core context. */
wisp_ip4_t wisp_dns_get_server(struct wisp_stack *s, unsigned idx);
/** The same for an address of any family built (any = unset): server idx
 *  is set to *ip (WISP_ERR_ARG for an index out of range, a family not
 *  built, a broadcast or multicast address) / read into *ip. */
wisp_err_t wisp_dns_set_server_addr(struct wisp_stack *s, unsigned idx, const wisp_ipaddr_t *ip);
wisp_err_t wisp_dns_get_server_addr(struct wisp_stack *s, unsigned idx, wisp_ipaddr_t *ip);

/** Resolve name to an IPv4 address.
 *  WISP_OK: *addr_out holds the address (a dotted quad, "localhost", or a
 *    cached answer); the callback is not called.
 *  WISP_ERR_INPROGRESS: a query runs; fn(arg, ...) is called exactly once
 *    later (unless cancelled with wisp_dns_cancel).
 *  WISP_ERR_ARG: NULL arguments, or name not a valid host name (labels of
 *    1..63 letters, digits, '-' or '_', one trailing dot allowed, at most
 *    WISP_DNS_NAME_MAX characters).
 *  WISP_ERR_VAL: no server configured.
 *  WISP_ERR_MEM: no free query / waiter slot, UDP PCB or buffer.
 *  Core context. */
wisp_err_t wisp_dns_gethostbyname(struct wisp_stack *s, const char *name, wisp_ipaddr_t *addr_out,
                                  wisp_dns_found_fn fn, void *arg);

/** Forget every waiting request with this fn and arg (their callbacks will
 *  not be called); a query nobody waits for any more is stopped. Returns
 *  the number of requests removed. Core context. */
unsigned wisp_dns_cancel(struct wisp_stack *s, wisp_dns_found_fn fn, void *arg);

/** Remaining TTL in seconds of a cached answer for name (case-insensitive);
 *  false when it is not cached (or expired). Core context. */
bool wisp_dns_cache_lookup(struct wisp_stack *s, const char *name, wisp_ip4_t *addr, uint32_t *ttl_s);
/** Empty the cache. Core context. */
void wisp_dns_cache_flush(struct wisp_stack *s);

/** Number of outstanding queries (for tests and diagnostics). */
unsigned wisp_dns_pending(const struct wisp_stack *s);

/** Stop every query (callbacks get WISP_ERR_ABRT), release their PCBs
 *  and flush the cache (the servers stay configured). Called by
 *  wisp_stack_deinit; harmless to call again. Core context. */
void wisp_dns_deinit(struct wisp_stack *s);

#endif /* WISP_DNS */
/* the layout of the structures above (private tier) */
#include "wisp/priv/dns.h"

#endif /* WISP_DNS_H */
