/**
 * @file opt.h
 * Compile-time options of wisp, each with its documented default.
 *
 * How to configure: put your overrides in your own header and build with
 * -DWISP_OPTS_HEADER='"my_wisp_opts.h"'. That header is included first, so
 * every option below that it defines wins; the rest take the defaults here.
 * Consistency is checked at the end of this file with #error.
 *
 * The defaults target a Cortex-M class device with ~64 KB of RAM to spare
 * for networking; the host build (ports/unix/wisp_opts_host.h) raises pools.
 */
#ifndef WISP_OPT_H
#define WISP_OPT_H

#ifdef WISP_OPTS_HEADER
#include WISP_OPTS_HEADER
#endif

/* ---------------------------------------------------------------- debug */

/** 1: debug checks (core-owner assertions, pool double-free detection,
 *  pbuf sanity checks) and, by default, the test probes
 *  (WISP_ALLOC_FAIL_INJECT, WISP_SYS_DEBUG_PROBE). Costs code size and a
 *  little time. Default 0. */
#ifndef WISP_DEBUG
#define WISP_DEBUG 0
#endif

/** Assertion hook for programming errors only -- never for values that came
 *  from the wire. Default: a no-op unless WISP_DEBUG, then a call to
 *  wisp_assert_fail() (defined by the port; the unix port aborts). */
#ifndef WISP_ASSERT
#if WISP_DEBUG
void wisp_assert_fail(const char *expr, const char *file, int line);
#define WISP_ASSERT(c) do { if (!(c)) wisp_assert_fail(#c, __FILE__, __LINE__); } while (0)
#else
#define WISP_ASSERT(c) do { } while (0)
#endif
#endif

/** Core ownership check, placed at the top of every public core entry point
 *  (tools/owner-check-lint.py keeps it so). s is the struct wisp_stack *
 *  (NULL: nothing to check, e.g. a device not attached to any interface, a
 *  pool of no stack). Default: in WISP_DEBUG builds a call of
 *  wisp_core_owner_check(s, __func__) (stack.c), which asks the stack's
 *  owner hook (s->owner_check: set by the stack thread, wisp/tcpip.h, to
 *  "the caller holds the core lock"; NULL = single-threaded use, nothing is
 *  checked) and reports a violation naming the function through the
 *  stack's failure path (struct wisp_config.fail, default
 *  wisp_assert_fail()); no code otherwise. It follows WISP_DEBUG rather than
 *  NDEBUG because WISP_DEBUG is wisp's one debug switch: it already brings
 *  WISP_ASSERT and the port's wisp_assert_fail() the report needs, and the
 *  host build keeps it on in every CMake build type (its tests run
 *  RelWithDebInfo, where NDEBUG is set). A port may define its own. */
#ifndef WISP_CORE_ASSERT_OWNER
#if WISP_DEBUG
struct wisp_stack;
void wisp_core_owner_check(const struct wisp_stack *s, const char *where);
#define WISP_CORE_ASSERT_OWNER(s) wisp_core_owner_check((s), __func__)
#else
#define WISP_CORE_ASSERT_OWNER(s) do { } while (0)
#endif
#endif

/* ------------------------------------------------------ address families */

/** 1: wisp_ipaddr_t (wisp/addr.h) is family-tagged and wide enough for an
 *  IPv6 address (20 bytes: a family byte and a 16-byte union); 0: it
 *  collapses to a bare IPv4 address (4 bytes) and the family accessors
 *  return constants, so a firmware without IPv6 pays nothing for the
 *  family-neutral core (every PCB, netconn and socket holds addresses).
 *  IPv6 itself is not implemented yet: today 1 only widens the addresses
 *  (the core and tests build and pass in both layouts; tools/test.sh).
 *  Range 0..1. Default 0. */
#ifndef WISP_IPV6
#define WISP_IPV6 0
#endif

/* ------------------------------------------------------------ interfaces */

/** Maximum number of network interfaces per stack, loopback included.
 *  Range 1..254 (the index is a uint8_t, 0 means "none"). Default 4. */
#ifndef WISP_MAX_NETIFS
#define WISP_MAX_NETIFS 4
#endif

/** Transmit queue lengths per interface, in frames (netif.h; the lwIP-
 *  analysis paper's §4.3: an emergency and a common circular queue).
 *  Frames wait here while the driver is busy. Emergency: 1..255,
 *  default 4. Common: 1..255, default 16. */
#ifndef WISP_TXQ_EMERG_LEN
#define WISP_TXQ_EMERG_LEN 4
#endif
#ifndef WISP_TXQ_COMMON_LEN
#define WISP_TXQ_COMMON_LEN 16
#endif

/** DSCP values (RFC 2474, 0..63) at or above this go to the emergency queue.
 *  Default 40 = CS5, so CS5, VOICE-ADMIT (44), EF (46), CS6 and CS7 are
 *  urgent; everything else, incl. AF classes, is common. Range 0..64
 *  (64 disables the emergency queue). */
#ifndef WISP_EMERG_DSCP_MIN
#define WISP_EMERG_DSCP_MIN 40
#endif

/** 1: a loopback interface is created by wisp_stack_init and packets to the
 *  stack's own addresses are looped internally. Default 1. */
#ifndef WISP_LOOPBACK
#define WISP_LOOPBACK 1
#endif

/** Packets waiting on the loopback queue before delivery (bounded so that a
 *  local flood cannot eat the transmit budget). Range 1..255, default 8. */
#ifndef WISP_LOOP_QUEUE_LEN
#define WISP_LOOP_QUEUE_LEN 8
#endif

/** 1: the named per-stack counters of wisp/stats.h (one uint32_t each in
 *  struct wisp_stack, an increment at every counted event and drop). 0:
 *  no counter array and no increment code; wisp_stack_counter() returns 0
 *  and wisp_stack_dump() prints no counters. Default 1: the diagnostics
 *  and the tests read them (a drop must be counted to be seen). */
#ifndef WISP_STATS
#define WISP_STATS 1
#endif

/** How a counter is incremented with WISP_STATS: 1 = by a call of
 *  wisp_ctr_inc() (on Thumb-2 ~4 bytes less per counted event than the
 *  inline load/add/store with its 32-bit offsets: -566 B on the UDP-only
 *  Cortex-M4 image; one call per event), 0 = inline. Default: 1 when the
 *  compiler optimises for size (__OPTIMIZE_SIZE__, -Os), else 0. */
#ifndef WISP_STATS_OUTLINE
#ifdef __OPTIMIZE_SIZE__
#define WISP_STATS_OUTLINE 1
#else
#define WISP_STATS_OUTLINE 0
#endif
#endif

/* ----------------------------------------------------------------- pbufs */

/** Payload bytes of one pool block. The default holds one full-size TCP
 *  segment with the largest headers in front (14 link + 20 IP + 60 TCP
 *  headroom + 1460 data = 1554) and any Ethernet frame (1514), so a frame is
 *  one block and the fast paths stay contiguous. Range 256..65535 (the
 *  first block of any chain must hold Ethernet + maximal IP + maximal TCP
 *  header = 134 bytes). Must be a multiple of 4. Default 1556. */
#ifndef WISP_PBUF_BLOCK_SIZE
#define WISP_PBUF_BLOCK_SIZE 1556
#endif

/** Small transmit blocks for short RAM pbufs (ARP, ICMP errors, pure TCP
 *  ACKs, header pbufs in front of zero-copy data): a RAM allocation whose
 *  headroom + length fit WISP_PBUF_SMALL_SIZE bytes comes from this pool,
 *  and falls back to a full block when it is empty. Part of the transmit
 *  budget. Size: multiple of 4, 64..WISP_PBUF_BLOCK_SIZE, default 128
 *  (an ACK with timestamps and SACK needs 14+20+60 = 94). Count: 0..65535,
 *  0 disables, default 8. */
#ifndef WISP_PBUF_SMALL_SIZE
#define WISP_PBUF_SMALL_SIZE 128
#endif
#ifndef WISP_PBUF_SMALL_COUNT
#define WISP_PBUF_SMALL_COUNT 8
#endif

/** Receive budget: blocks drivers allocate received frames from. Kept apart
 *  from the transmit budget so transmit pressure never starves receive.
 *  Range 2..65535, default 8. */
#ifndef WISP_PBUF_RX_COUNT
#define WISP_PBUF_RX_COUNT 8
#endif

/** Transmit budget: blocks for RAM/POOL pbufs the stack and applications
 *  allocate (headers, copies of application data). Range 2..65535, default 8. */
#ifndef WISP_PBUF_TX_COUNT
#define WISP_PBUF_TX_COUNT 8
#endif

/** Header-only pbufs for REF/ROM (zero-copy references to caller memory,
 *  fragments of outgoing datagrams). Range 1..65535, default 16. */
#ifndef WISP_PBUF_REF_COUNT
#define WISP_PBUF_REF_COUNT 16
#endif

/* ---------------------------------------------------------- Ethernet/ARP */

/** ARP cache entries. Range 1..255, default 8. */
#ifndef WISP_ARP_TABLE_SIZE
#define WISP_ARP_TABLE_SIZE 8
#endif

/** Packets queued per unresolved ARP entry (RFC 1122 §2.3.2.2 asks for at
 *  least one). Older ones are dropped first. Range 1..16, default 3. */
#ifndef WISP_ARP_QUEUE_LEN
#define WISP_ARP_QUEUE_LEN 3
#endif

/** Lifetime of a resolved ARP entry, in ms. RFC 1122 §2.3.2.1 leaves it to
 *  the implementation; 5 minutes like lwIP and BSD. Default 300000. */
#ifndef WISP_ARP_MAX_AGE_MS
#define WISP_ARP_MAX_AGE_MS 300000u
#endif

/** Retransmission interval of ARP requests for a pending entry (ms) and the
 *  number of requests before the entry and its queue are dropped
 *  (RFC 1122 §2.3.2.1: at most one request per second per address).
 *  Defaults 1000 ms and 5 tries. */
#ifndef WISP_ARP_RETRY_MS
#define WISP_ARP_RETRY_MS 1000u
#endif
#ifndef WISP_ARP_MAX_TRIES
#define WISP_ARP_MAX_TRIES 5
#endif

/* ------------------------------------------------------------------ IPv4 */

/** TTL of datagrams we originate (RFC 1700 recommends 64). 1..255. */
#ifndef WISP_IP_DEFAULT_TTL
#define WISP_IP_DEFAULT_TTL 64
#endif

/** 1: fragment outgoing datagrams larger than the MTU (RFC 791). Default 1. */
#ifndef WISP_IP_FRAG
#define WISP_IP_FRAG 1
#endif

/** 1: reassemble incoming fragments (RFC 791, RFC 815). Default 1. */
#ifndef WISP_IP_REASS
#define WISP_IP_REASS 1
#endif

/** Datagrams under reassembly at once. Range 1..255, default 4. */
#ifndef WISP_IP_REASS_MAX_DGRAMS
#define WISP_IP_REASS_MAX_DGRAMS 4
#endif

/** Receive blocks that reassembly may hold in total; must stay below
 *  WISP_PBUF_RX_COUNT so that fragments can never starve receive.
 *  When reached, the oldest datagram is dropped. Range
 *  1..WISP_PBUF_RX_COUNT - 1, default 6. */
#ifndef WISP_IP_REASS_MAX_PBUFS
#define WISP_IP_REASS_MAX_PBUFS 6
#endif

/** Reassembly timeout in ms (RFC 791 suggests 15 s as lower bound of the
 *  timer; RFC 1122 §3.3.2 says 60..120 s is common). Default 15000. */
#ifndef WISP_IP_REASS_TIMEOUT_MS
#define WISP_IP_REASS_TIMEOUT_MS 15000u
#endif

/* ------------------------------------------------------------------ ICMP */

/** ICMP error rate limit (RFC 1812 §4.3.2.8, RFC 1122 §3.2.2): a token
 *  bucket refilled at this many errors per second with this burst. */
#ifndef WISP_ICMP_ERR_RATE
#define WISP_ICMP_ERR_RATE 10
#endif
#ifndef WISP_ICMP_ERR_BURST
#define WISP_ICMP_ERR_BURST 10
#endif

/** Path MTU discovery (RFC 1191) for TCP: 1 sets DF on TCP segments and
 *  lowers a path's MSS on a validated "fragmentation needed" (ICMP type 3
 *  code 4, RFC 5927 checks). 0 sends TCP with DF clear (routers fragment)
 *  and ignores "fragmentation needed". Default 1 (as Linux). */
#ifndef WISP_PMTU
#define WISP_PMTU 1
#endif
/** Entries of the per-stack path MTU cache (destinations whose path MTU
 *  is below the interface MTU), 1..255; the least recently lowered entry
 *  is replaced. Default 4 (a device talks to few far peers). */
#ifndef WISP_PMTU_CACHE_SIZE
#define WISP_PMTU_CACHE_SIZE 4
#endif
/** Smallest path MTU we accept, bytes (68..576). A smaller reported MTU is
 *  clamped to this and the path is then sent to with DF clear (routers
 *  fragment), as Linux does with min_pmtu. RFC 1191 §3 floor is 68; we use
 *  576 (RFC 1122 §3.3.3: every host accepts 576-byte datagrams) so that a
 *  forged ICMP cannot shrink segments to a few bytes (RFC 5927 §7.3).
 *  Default 576. */
#ifndef WISP_PMTU_MIN
#define WISP_PMTU_MIN 576u
#endif
/** Age of a lowered path MTU, ms: afterwards the interface MTU is tried
 *  again (RFC 1191 §6.3: 10 minutes). Default 600000. */
#ifndef WISP_PMTU_AGE_MS
#define WISP_PMTU_AGE_MS 600000u
#endif
/** PLPMTUD-style black-hole fallback (RFC 4821 §7.5, simplified): after
 *  this many consecutive retransmission timeouts of a segment larger than
 *  WISP_PMTU_MIN - 40 bytes with DF set, the connection's path MTU drops to
 *  WISP_PMTU_MIN (a path that silently loses large packets); 0 = off.
 *  Default 2 (Linux probes after its first RTO with tcp_mtu_probing=1; 2
 *  keeps plain loss from shrinking segments). */
#ifndef WISP_PMTU_BLACKHOLE_RTOS
#define WISP_PMTU_BLACKHOLE_RTOS 2
#endif
/** Time after which a path MTU lowered by the black-hole fallback is
 *  probed upward again, ms (RFC 4821 §7.7 suggests 10 minutes; a full-size
 *  segment is the probe: lost again, the fallback lowers it again).
 *  Default 600000. */
#ifndef WISP_PMTU_PROBE_MS
#define WISP_PMTU_PROBE_MS 600000u
#endif

/* ------------------------------------------------------------------- UDP */

/** 1: UDP. Default 1. */
#ifndef WISP_UDP
#define WISP_UDP 1
#endif

/** UDP PCBs. Range 1..65535, default 4. */
#ifndef WISP_UDP_PCB_COUNT
#define WISP_UDP_PCB_COUNT 4
#endif

/** Ephemeral port range (RFC 6056 §2.1 recommends 1024..65535; IANA's
 *  dynamic range is 49152..65535). Default IANA's. */
#ifndef WISP_EPHEMERAL_MIN
#define WISP_EPHEMERAL_MIN 49152u
#endif
#ifndef WISP_EPHEMERAL_MAX
#define WISP_EPHEMERAL_MAX 65535u
#endif

/** Entries of the RFC 6056 §3.3.4 (Algorithm 4) table of per-destination
 *  port counters (2 bytes each). Range 1..65535, default 16. Destinations
 *  hashing to one entry share its counter, so one peer can see that the
 *  stack opened k connections elsewhere in between when both hash alike;
 *  16 keeps that to 1 peer in 16 for 32 bytes (RFC 6056 §3.3.4 discusses
 *  the length; Linux uses far more entries for many more connections). */
#ifndef WISP_PORT_TABLE_LEN
#define WISP_PORT_TABLE_LEN 16
#endif

/* ------------------------------------------------------------------ DHCP */
/* The DHCP client (RFC 2131/2132, wisp/dhcp.h, src/core/dhcp.c). Each
 * timing below is the default of a field of struct wisp_dhcp_cfg, which an
 * application (or a test) may change per client. */

/** 1: the DHCP client (needs WISP_UDP; one UDP PCB per running client).
 *  Default 1. */
#ifndef WISP_DHCP
#define WISP_DHCP 1
#endif

/** DNS servers (option 6) kept from a lease; more are ignored.
 *  Range 1..8, default 2. */
#ifndef WISP_DHCP_MAX_DNS
#define WISP_DHCP_MAX_DNS 2
#endif

/** Retransmission of DISCOVER / REQUEST (RFC 2131 §4.1): the first wait
 *  is the base, doubled after each try up to the maximum, each randomised
 *  by +-base/4 (+-1 s with the RFC's 4 s). Defaults 4000 and 64000 ms. */
#ifndef WISP_DHCP_BACKOFF_BASE_MS
#define WISP_DHCP_BACKOFF_BASE_MS 4000u
#endif
#ifndef WISP_DHCP_BACKOFF_MAX_MS
#define WISP_DHCP_BACKOFF_MAX_MS 64000u
#endif

/** REQUESTs sent in REQUESTING / REBOOTING before the client gives up on
 *  that exchange (RFC 2131 §3.1 step 5, §3.2: back to INIT). Range 1..255,
 *  default 4 (4 + 8 + 16 + 32 s with the default backoff). */
#ifndef WISP_DHCP_REQUEST_TRIES
#define WISP_DHCP_REQUEST_TRIES 4
#endif

/** Largest random delay before the first DISCOVER (RFC 2131 §4.4.1: "a
 *  random time between one and ten seconds" to desynchronise clients
 *  after a power failure). The delay is uniform in [max/10, max];
 *  0 = send at once. Default 10000 ms. */
#ifndef WISP_DHCP_INIT_DELAY_MS
#define WISP_DHCP_INIT_DELAY_MS 10000u
#endif

/** Shortest wait between REQUESTs in RENEWING / REBINDING (RFC 2131
 *  §4.4.5: half the time left until T2 / expiry, "down to a minimum of 60
 *  seconds"). Default 60000 ms. */
#ifndef WISP_DHCP_RENEW_MIN_MS
#define WISP_DHCP_RENEW_MIN_MS 60000u
#endif

/** Wait after a DECLINE before discovery restarts (RFC 2131 §3.1 step 5:
 *  "a minimum of ten seconds"). Default 10000 ms. */
#ifndef WISP_DHCP_DECLINE_WAIT_MS
#define WISP_DHCP_DECLINE_WAIT_MS 10000u
#endif

/** Longest host name sent in option 12 (RFC 2132 §3.14), bytes.
 *  Range 1..63, default 32. */
#ifndef WISP_DHCP_HOSTNAME_MAX
#define WISP_DHCP_HOSTNAME_MAX 32
#endif


/* ------------------------------------------------------------------- DNS */
/* The stub resolver (wisp/dns.h, src/core/dns.c): its state is part of
 * struct wisp_stack, sized by these options. */

/** 1: DNS stub resolver (RFC 1035, A records). Needs WISP_UDP. Default 1. */
#ifndef WISP_DNS
#define WISP_DNS WISP_UDP
#endif

/** Configured DNS servers (wisp_dns_set_server; a DHCP client fills them).
 *  Range 1..8, default 2. */
#ifndef WISP_DNS_MAX_SERVERS
#define WISP_DNS_MAX_SERVERS 2
#endif

/** Cached answers (name -> address until the TTL runs out; least recently
 *  used replaced when full). Each entry holds a name of
 *  WISP_DNS_NAME_MAX + 1 bytes. Range 0..255, 0 = no cache. Default 4. */
#ifndef WISP_DNS_CACHE_SIZE
#define WISP_DNS_CACHE_SIZE 4
#endif

/** Queries in flight at once (distinct names; requests for a name already
 *  being resolved join its query). Each takes a UDP PCB from the UDP pool
 *  while it runs (RFC 5452: its own random source port), so
 *  WISP_UDP_PCB_COUNT must leave room. Range 1..32, default 2. */
#ifndef WISP_DNS_MAX_QUERIES
#define WISP_DNS_MAX_QUERIES 2
#endif

/** Requests waiting for a query (callbacks to call). Range
 *  WISP_DNS_MAX_QUERIES..255, default 4. */
#ifndef WISP_DNS_MAX_WAITERS
#define WISP_DNS_MAX_WAITERS 4
#endif

/** Longest name in characters (without a trailing dot). RFC 1035 §2.3.4
 *  allows 253 (255 octets on the wire); each query slot and cache entry
 *  stores one, so the default trades that for RAM. Longer names are
 *  refused (WISP_ERR_ARG). Range 16..253, default 128. */
#ifndef WISP_DNS_NAME_MAX
#define WISP_DNS_NAME_MAX 128
#endif

/** Retransmissions of a query after the first transmission; each goes to
 *  the next configured server (rotation). Range 0..31, default 3. */
#ifndef WISP_DNS_MAX_RETRIES
#define WISP_DNS_MAX_RETRIES 3
#endif

/** Time to wait for an answer to one transmission, in ms; doubled after
 *  every round over all servers (at most 8 x). RFC 1536 §1 warns against
 *  short fixed timeouts; glibc waits 5 s, we retry sooner on a LAN.
 *  Range 100..60000, default 1000 (4 transmissions, 2 servers: 6 s). */
#ifndef WISP_DNS_TIMEOUT_MS
#define WISP_DNS_TIMEOUT_MS 1000u
#endif

/** Longest time an answer stays cached, in seconds, whatever TTL the
 *  server gave (RFC 2181 §8 allows capping). Range 1..604800 (a week),
 *  default 86400. */
#ifndef WISP_DNS_MAX_TTL_S
#define WISP_DNS_MAX_TTL_S 86400u
#endif

/** CNAME links followed within one answer before giving up (the chain
 *  must be complete in the answer section). Range 1..16, default 8. */
#ifndef WISP_DNS_MAX_CNAME
#define WISP_DNS_MAX_CNAME 8
#endif


/* ------------------------------------------------------------------- TCP */

/** 1: TCP. Default 1. */
#ifndef WISP_TCP
#define WISP_TCP 1
#endif

/** Connection PCBs (SYN-SENT .. LAST-ACK; not listeners, not embryonic
 *  connections, not TIME-WAIT). Range 1..65535, default 8. */
#ifndef WISP_TCP_PCB_COUNT
#define WISP_TCP_PCB_COUNT 8
#endif

/** Listening PCBs (small structs). Range 1..255, default 4. */
#ifndef WISP_TCP_LISTEN_COUNT
#define WISP_TCP_LISTEN_COUNT 4
#endif

/** Embryonic connections (SYN received, SYN-ACK sent) held in compact
 *  records, shared by all listeners. When full, listeners answer with SYN
 *  cookies (RFC 4987 §3.6, WISP_TCP_SYNCOOKIES; without them the SYN is
 *  dropped) so a flood cannot exhaust it. Range 1..65535, default 8. */
#ifndef WISP_TCP_SYNQ_COUNT
#define WISP_TCP_SYNQ_COUNT 8
#endif

/** Compact TIME-WAIT records (RFC 9293 §3.6.1; ~36 bytes instead of a full
 *  PCB; only with WISP_TCP_TW_COMPACT). When full, the oldest is recycled (like lwIP and Linux under
 *  pressure). Range 1..65535, default 8. */
#ifndef WISP_TCP_TW_COUNT
#define WISP_TCP_TW_COUNT 8
#endif

/** 1: SYN cookies (RFC 4987 §3.6): a SYN that finds its listener's
 *  backlog or the SYN queue full is answered statelessly with a cookie,
 *  so a SYN flood cannot keep legitimate peers out. 0: such a SYN is
 *  dropped (counted as tcp.synq.full; the peer retransmits it, as with
 *  lwIP), and an ACK for a listener always draws a RST; the cookie code,
 *  its MSS table and its per-stack state are not compiled. 0/1, default 1
 *  (cost on Cortex-M4 -Os: 840 bytes of code, 8 bytes of RAM). */
#ifndef WISP_TCP_SYNCOOKIES
#define WISP_TCP_SYNCOOKIES 1
#endif

/** 1: TIME-WAIT is kept in compact records (WISP_TCP_TW_COUNT of ~36
 *  bytes, their own hash index and expiry timer) and the connection PCB
 *  is freed at once. 0: a connection stays in its full PCB for its 2 MSL
 *  of TIME-WAIT, as lwIP does (when no PCB is free, the one closest to
 *  its end of TIME-WAIT is recycled, counted as tcp.tw.recycled); the
 *  record table, its index and its timer are not compiled. Behaviour on
 *  the wire is the same (RFC 9293 §3.10.7.4 TIME-WAIT, RFC 1337, RFC 6191
 *  reuse). 0/1, default 1: a closed connection gives its PCB back at once,
 *  and a burst of closes cannot exhaust the PCB pool. Cost on Cortex-M4
 *  -Os with the default counts: 316 bytes of code and 324 bytes of RAM
 *  (36 per record, index, timer); with 0, each connection in TIME-WAIT
 *  holds its whole PCB for 2 * WISP_TCP_MSL_MS. */
#ifndef WISP_TCP_TW_COMPACT
#define WISP_TCP_TW_COMPACT 1
#endif

/** Segment descriptors for data sent and not yet acknowledged / not yet
 *  sent, shared by all connections. Range 2..65535, default 24. */
#ifndef WISP_TCP_SEG_COUNT
#define WISP_TCP_SEG_COUNT 24
#endif

/** Largest MSS we advertise and send (RFC 9293 §3.7.1); the effective MSS
 *  is also bounded by the interface MTU - 40 and the peer's MSS option.
 *  Range 88..65495 (RFC 6691 / RFC 9293 §3.7.1), default 1460. */
#ifndef WISP_TCP_MSS
#define WISP_TCP_MSS 1460
#endif

/** Receive window in bytes per connection. Received data is held in receive
 *  pbufs until the application takes it, so WISP_TCP_WND should not exceed
 *  the receive budget. > 65535 needs window scaling. Default 4 * MSS. */
#ifndef WISP_TCP_WND
#define WISP_TCP_WND (4 * WISP_TCP_MSS)
#endif

/** Send buffer in bytes per connection (data written and not acknowledged).
 *  Default 4 * MSS. */
#ifndef WISP_TCP_SND_BUF
#define WISP_TCP_SND_BUF (4 * WISP_TCP_MSS)
#endif

/** Transmit budget of TCP (the blocks of WISP_PBUF_TX_COUNT that hold the
 *  copies of written data, WISP_TCP_WRITE_COPY). A peer decides how long
 *  our copies stay queued (a zero window holds them for good), so no
 *  connection may take the blocks the others need. The rules, per block a
 *  write takes (T = WISP_PBUF_TX_COUNT, C = the control reserve of
 *  T / 16, at least 2, that only headers of ACKs, RSTs and retransmissions
 *  use, G and P below):
 *   - never below C free blocks;
 *   - up to G blocks per connection always (the guarantee: every
 *     connection can make progress, whatever the others hold);
 *   - beyond G, never into the last C + P free blocks (the progress
 *     reserve P stays for connections below their guarantee);
 *   - fair share: a write beyond G starts only while the connection's
 *     blocks beyond G do not exceed the free blocks outside C + P after
 *     it ("never more than what stays free for the others"). Alone, a
 *     connection gets half of T - C - P (+ G / 2); n connections that all
 *     want more settle at (T - C - P) / (n + 1) each; connections that
 *     arrive one after another and never give back (zero-window peers)
 *     take 1/2, 1/4, 1/8 ... of it, so any number of them leaves room,
 *     and the guarantee G remains when they are many.
 *  A single write larger than T - C - P blocks is taken whole when the
 *  connection holds no blocks (else it could never be). See
 *  test/sim/test_tcp_tx_fairness.c. */

/** G: transmit blocks (of copied data) every connection may hold whatever
 *  the others hold. Three: two full-size segments, which their receiver
 *  acknowledges at once (RFC 5681 §4.2: every second full-size segment)
 *  instead of after its delayed-ACK timer, plus the short tail of a write
 *  (a short segment takes a whole block too). With 2, an echo of 1460-byte
 *  writes (segments of 1448, 1448, 24 bytes) at the guarantee sent one
 *  full segment per delayed-ACK period (0.6 Mbit/s in the simulator);
 *  with 3 it keeps its unattacked goodput on the default pools. Range
 *  1..T - C - P, default 3 (the default pools: C 2 + P 3 + G 3 = 8). */
#ifndef WISP_TCP_SND_MIN_BLOCKS
#define WISP_TCP_SND_MIN_BLOCKS 3
#endif

/** P: the progress reserve, transmit blocks only connections below their
 *  guarantee may take. The guarantee holds for P / G connections at once
 *  even when all other blocks are held; G for every PCB
 *  (G * WISP_TCP_PCB_COUNT) would reserve most of a large pool, so at most
 *  an eighth of T, which keeps a lone connection's half of the rest above
 *  a full send buffer on the host (host: 64 of 512 blocks, 21 connections
 *  at their guarantee, a lone connection up to 209 blocks > the 182 of its
 *  256 KB buffer; default pools: 3 of 8, one connection, a lone connection
 *  3 blocks of the 5 its buffer could fill). Range G..T - C - G, default
 *  min(G * WISP_TCP_PCB_COUNT, T / 8), at least G. */
#ifndef WISP_TCP_SND_RESERVE_BLOCKS
#define WISP_TCP_SND_RESERVE_BLOCKS                                                    \
    (WISP_TCP_SND_MIN_BLOCKS * WISP_TCP_PCB_COUNT < WISP_PBUF_TX_COUNT / 8               \
         ? WISP_TCP_SND_MIN_BLOCKS * WISP_TCP_PCB_COUNT                                  \
         : (WISP_PBUF_TX_COUNT / 8 > WISP_TCP_SND_MIN_BLOCKS ? WISP_PBUF_TX_COUNT / 8 : WISP_TCP_SND_MIN_BLOCKS))
#endif

/** Persist give-up in ms (RFC 9293 §3.8.6.1): how long a zero-window
 *  peer may hold our queued data.
 *   - A peer that stops answering the zero-window probes (it vanished) is
 *     aborted once it has been silent this long while we probe (without
 *     it: after WISP_TCP_MAXRTX unanswered probes, ~6 minutes).
 *   - A peer that answers with a zero window may keep it closed as long as
 *     it likes (RFC 9293 §3.8.6.1, RFC 1122 §4.2.2.17), subject to the
 *     implementation's resource management (RFC 6429, folded into RFC
 *     9293): once its window has been closed this long, while it holds
 *     transmit blocks and a write was refused below its guarantee G (the
 *     blocks ran short) within this time, the connection is aborted (RST,
 *     WISP_ERR_TIMEOUT to the application, counted as tcp.abort.persist)
 *     and its blocks return.
 *  Default 100000 (100 s, the lower bound RFC 1122 §4.2.3.5 sets for R2 of
 *  data retransmissions: a peer silent that long would be given up on
 *  with data in flight too). 0 = no limit (only WISP_TCP_MAXRTX). */
#ifndef WISP_TCP_PERSIST_TIMEOUT_MS
#define WISP_TCP_PERSIST_TIMEOUT_MS 100000u
#endif

/** Receive buffers that one connection's out-of-order queue may hold
 *  (RFC 9293 §3.10.7.4 allows keeping segments beyond the left edge; the
 *  bound keeps a lossy peer from draining the receive budget).
 *  Range 0..65535, 0 = drop out-of-order data. Default 4. */
#ifndef WISP_TCP_OOSEQ_MAX_PBUFS
#define WISP_TCP_OOSEQ_MAX_PBUFS 4
#endif

/** Out-of-order queues: a connection takes one from a pool of the stack
 *  (WISP_POOL_TCP_OOSEQ) on its first out-of-order segment and gives it
 *  back when the gap has filled or the connection ends. Most connections
 *  never hold out-of-order data, so the queue is not part of every PCB:
 *  each costs 8 bytes per WISP_TCP_OOSEQ_MAX_PBUFS plus 4 (M4). Out-of-order
 *  data arriving while no queue is free is dropped and counted
 *  (tcp.ooseq.drop), as beyond WISP_TCP_OOSEQ_MAX_PBUFS: the peer resends
 *  it (RFC 9293 §3.10.7.4 allows either). A queue holds at least one
 *  receive buffer, so more queues than half the receive buffers would
 *  rarely all hold data. Range 0..65535, 0 = drop out-of-order data.
 *  Default min(WISP_TCP_PCB_COUNT, WISP_PBUF_RX_COUNT / 2) (4). */
#ifndef WISP_TCP_OOSEQ_COUNT
#define WISP_TCP_OOSEQ_COUNT \
    (WISP_TCP_PCB_COUNT < WISP_PBUF_RX_COUNT / 2 ? WISP_TCP_PCB_COUNT : WISP_PBUF_RX_COUNT / 2)
#endif
/* (derived, not an option) 1: the pool of out-of-order queues exists */
#define WISP_TCP_OOSEQ_POOL (WISP_TCP && WISP_TCP_OOSEQ_MAX_PBUFS > 0 && WISP_TCP_OOSEQ_COUNT > 0)

/** Congestion control (src/core/tcp_cc.c): the algorithms compiled in
 *  and the one a new connection starts with (wisp_tcp_set_cc, socket
 *  option TCP_CONGESTION change it per connection before or after
 *  connect).
 *  WISP_TCP_CUBIC: 0/1, compile CUBIC (RFC 9438) in beside NewReno
 *  (RFC 5681 + RFC 6582, always there). Default 0, NewReno only, as in
 *  lwIP: a microcontroller on a LAN rarely has the long fat path where
 *  CUBIC pays (see WISP_TCP_CC_DEFAULT). The host options
 *  (ports/unix/wisp_opts_host.h) turn it on. Cost on Cortex-M4 (-Os):
 *  about 1 KB of code (tcp_cubic.c and its hooks in tcp_cc.c; its 64-bit
 *  divisions are its own shift-and-subtract, no libgcc helper is
 *  linked), and 28 bytes per TCP PCB (its state in the union pcb->cc).
 *  WISP_TCP_CC_DEFAULT: WISP_TCP_CC_NEWRENO (0) or WISP_TCP_CC_CUBIC (1).
 *  Default NewReno: the smaller state, and on the short paths of a LAN
 *  CUBIC's TCP-friendly region makes it behave like Reno anyway
 *  (RFC 9438 §4.3); CUBIC pays on long fat paths. */
#ifndef WISP_TCP_CUBIC
#define WISP_TCP_CUBIC 0
#endif
#ifndef WISP_TCP_CC_DEFAULT
#define WISP_TCP_CC_DEFAULT 0
#endif

/** 1: window scaling, timestamps/PAWS (RFC 7323), SACK (RFC 2018/6675).
 *  All on by default. */
#ifndef WISP_TCP_WND_SCALE
#define WISP_TCP_WND_SCALE 1
#endif
#ifndef WISP_TCP_TIMESTAMPS
#define WISP_TCP_TIMESTAMPS 1
#endif
#ifndef WISP_TCP_SACK
#define WISP_TCP_SACK 1
#endif
/** D-SACK (RFC 2883): when SACK is in use, an ACK caused by duplicate
 *  data reports that data in its first SACK block, so the sender can tell
 *  a needless retransmission (Linux undoes the congestion response on it).
 *  0/1, default 1; costs 8 bytes per connection. */
#ifndef WISP_TCP_DSACK
#define WISP_TCP_DSACK 1
#endif
/** Compile-time effect of the three above: 0 removes the option's code
 *  and its PCB fields, not just its negotiation (timestamps: 16 bytes per
 *  connection, SACK with D-SACK: 24, window scaling: 2). D-SACK needs
 *  SACK (ignored without it). */

/** 1: per-connection statistics (retransmits, fast recoveries, timeouts)
 *  in every TCP PCB, reported by wisp_tcp_get_info and the socket option
 *  TCP_INFO; 0: those read 0 (the stack's counters still count them; the
 *  bytes acknowledged and received are always reported, read off the
 *  sequence numbers). 0/1, default 1 (the status page, the benchmarks and
 *  TCP_INFO users read them); costs 12 bytes per connection. */
#ifndef WISP_TCP_PCB_STATS
#define WISP_TCP_PCB_STATS 1
#endif

/** Retransmission timeout bounds and initial value in ms (RFC 6298 §2:
 *  initial 1 s; §2.4 recommends a 1 s minimum, Linux uses 200 ms; we take
 *  200 ms so small exchanges on a lossy LAN recover quickly; max >= 60 s).
 *  Range 1 <= MIN <= INIT <= MAX, MAX >= 60000. Defaults 200 / 60000 /
 *  1000. */
#ifndef WISP_TCP_RTO_MIN_MS
#define WISP_TCP_RTO_MIN_MS 200u
#endif
#ifndef WISP_TCP_RTO_MAX_MS
#define WISP_TCP_RTO_MAX_MS 60000u
#endif
#ifndef WISP_TCP_RTO_INIT_MS
#define WISP_TCP_RTO_INIT_MS 1000u
#endif

/** Retransmissions before a connection is aborted (RFC 1122 §4.2.3.5: R2
 *  at least 100 s; with backoff 12 retries ~ several minutes), and for SYN
 *  / SYN-ACK (R2 for SYN at least 3 minutes). Defaults 12 and 6. */
#ifndef WISP_TCP_MAXRTX
#define WISP_TCP_MAXRTX 12
#endif
#ifndef WISP_TCP_SYNMAXRTX
#define WISP_TCP_SYNMAXRTX 6
#endif

/** Maximum segment lifetime in ms; TIME-WAIT lasts 2 * MSL (RFC 9293
 *  §3.4.2 suggests MSL = 2 min; Linux keeps TIME-WAIT 60 s). Default 30000. */
#ifndef WISP_TCP_MSL_MS
#define WISP_TCP_MSL_MS 30000u
#endif

/** Delayed ACK timeout in ms (RFC 9293 §3.8.6.3 / RFC 5681 §4.2: < 500 ms,
 *  the issue asks <= 200). Range 1..200. Default 40, Linux's minimum
 *  delayed-ACK time. */
#ifndef WISP_TCP_DELACK_MS
#define WISP_TCP_DELACK_MS 40u
#endif

/** Keepalive defaults (RFC 1122 §4.2.3.6: idle >= 2 h), settable per
 *  connection. Defaults 7200000 ms idle, 75000 ms interval, 9 probes. */
#ifndef WISP_TCP_KEEPIDLE_MS
#define WISP_TCP_KEEPIDLE_MS 7200000u
#endif
#ifndef WISP_TCP_KEEPINTVL_MS
#define WISP_TCP_KEEPINTVL_MS 75000u
#endif
#ifndef WISP_TCP_KEEPCNT
#define WISP_TCP_KEEPCNT 9u
#endif

/** Poll callback granularity in ms (the raw API's poll interval unit). */
#ifndef WISP_TCP_POLL_UNIT_MS
#define WISP_TCP_POLL_UNIT_MS 500u
#endif

/* ------------------------------------------- OS layer and stack thread */
/* Used only by code that includes wisp/sys.h or wisp/tcpip.h (src/api):
 * the core itself never needs an OS. */

/* WISP_SYS_PORT_HEADER: the sys port's header that defines the handle
 *  structs of wisp/sys.h, e.g. "sys_posix.h" (ports/unix) or "sys_none.h"
 *  (ports/none). No default: set it in your options header when you use
 *  the OS layer. */

/** How the sequential APIs (netconn, sockets) enter the core:
 *  1 = core locking: the calling thread takes the core lock
 *      (wisp_tcpip_lock) and runs the core function itself -- no context
 *      switch, lowest latency;
 *  0 = message passing: the call is posted to the stack thread's mailbox and
 *      the caller waits for completion (wisp_tcpip_call) -- only the stack
 *      thread ever runs core code.
 *  Both mechanisms are always available; this picks what wisp_tcpip_run()
 *  and the API layers use. Default 1. */
#ifndef WISP_TCPIP_CORE_LOCKING
#define WISP_TCPIP_CORE_LOCKING 1
#endif

/** Capacity of the stack thread's mailbox in messages (calls, callbacks,
 *  received frames). A received frame that finds it full is dropped and
 *  counted (tcpip.input.drop). Range 2..65535, default 16. */
#ifndef WISP_TCPIP_MBOX_SIZE
#define WISP_TCPIP_MBOX_SIZE 16
#endif

/** Message records for wisp_tcpip_callback() and wisp_tcpip_input() (calls
 *  use a record on the caller's stack), held in the context: no heap.
 *  Range 1..65535, default WISP_TCPIP_MBOX_SIZE. */
#ifndef WISP_TCPIP_MSG_COUNT
#define WISP_TCPIP_MSG_COUNT WISP_TCPIP_MBOX_SIZE
#endif

/** Longest time in ms the stack thread sleeps without a message or a due
 *  timer, so that a stack clock drifting against the OS clock can never
 *  stall timers for long. 0 = no limit (sleep until the next timer or
 *  message: fewest wake-ups). Overridable per context. Default 1000. */
#ifndef WISP_TCPIP_MAX_WAIT_MS
#define WISP_TCPIP_MAX_WAIT_MS 1000u
#endif

/** The sys port's blocked-thread probe (wisp_sys_debug_* in wisp/sys.h):
 *  the port records, for every thread it created or that registered with
 *  it, whether the thread waits in a semaphore, mailbox or mutex and on
 *  which object, so threaded tests wait for "thread T is blocked in recv"
 *  instead of sleeping. Costs only when a wait really blocks (one global
 *  debug lock and a broadcast per block and per wake-up) plus a few words
 *  per thread handle. 0/1, default WISP_DEBUG (off in release builds). */
#ifndef WISP_SYS_DEBUG_PROBE
#define WISP_SYS_DEBUG_PROBE WISP_DEBUG
#endif

/* ------------------------------------------------------------------- API */
/* The sequential netconn API (wisp/netconn.h, src/api/netconn.c); used only
 * by code that includes it. */

/** Netconns per netconn layer instance (struct wisp_netconn_api), accepted
 *  connections included; each slot's two OS objects (a mailbox and a
 *  semaphore, as lwIP's netconn) are created once by wisp_netconn_api_init
 *  (a second thread blocked on the same netconn at the same time makes a
 *  semaphore for that wait). When the
 *  pool is empty, netconn_new returns NULL and a listener resets the
 *  connections it cannot hand out. Range 1..65535, default 8. */
#ifndef WISP_NETCONN_COUNT
#define WISP_NETCONN_COUNT 8
#endif

/** Netbufs per netconn layer instance: one per received UDP datagram
 *  waiting in a mailbox, one per TCP netbuf the application holds, plus
 *  the netbufs it allocates for sending. When empty, UDP datagrams are
 *  dropped (counted) and netconn_recv on TCP returns ERR_MEM. Range
 *  1..65535, default 16. */
#ifndef WISP_NETBUF_COUNT
#define WISP_NETBUF_COUNT 16
#endif

/** Capacity of each netconn's receive mailbox in items (TCP data chains,
 *  UDP datagrams, or a listener's connections waiting for accept; it also
 *  caps the accept backlog). A full mailbox makes TCP refuse data (the
 *  stack keeps it, with the window closed, and offers it again) and drops
 *  UDP datagrams. Range 2..65535 (the no-OS port holds at most
 *  WISP_SYS_NONE_MBOX_MAX), default 16. */
#ifndef WISP_NETCONN_RECVMBOX_SIZE
#define WISP_NETCONN_RECVMBOX_SIZE 16
#endif

/** Longest wait of an established connection for netconn_accept (ms):
 *  after it the connection is reset and its PCB freed, so connections an
 *  application never accepts (it is busy, or stopped accepting without
 *  closing the listener) do not pin PCBs forever (a peer that closed would
 *  otherwise sit in CLOSE-WAIT until the accept). Checked every second
 *  (poll callback). Default 30000: far longer than any accept loop takes
 *  while it works. Range 1000 .. 65535 poll periods of
 *  2 * WISP_TCP_POLL_UNIT_MS (65535000, 18.2 h, with the default poll
 *  unit; a larger value does not compile). */
#ifndef WISP_NETCONN_ACCEPT_MAX_MS
#define WISP_NETCONN_ACCEPT_MAX_MS 30000u
#endif

/** How long netconn_close / netconn_delete keep retrying when the stack
 *  cannot queue the FIN (segment pool empty) before they abort the
 *  connection (RST), in ms. Default 1000. */
#ifndef WISP_NETCONN_CLOSE_TIMEOUT_MS
#define WISP_NETCONN_CLOSE_TIMEOUT_MS 1000u
#endif

/* BSD sockets (wisp/sockets.h, src/api/sockets.c), on top of netconn. */

/** Sockets in the process's socket table (struct wisp_sockets): open
 *  sockets of every stack together. Each needs a netconn of its stack
 *  (WISP_NETCONN_COUNT). socket()/accept() fail with EMFILE when the table
 *  is full. Also bounds select(): WISP_FD_SETSIZE = WISP_SOCKET_OFFSET +
 *  WISP_SOCKET_COUNT. Range 1..32767, default 8. */
#ifndef WISP_SOCKET_COUNT
#define WISP_SOCKET_COUNT 8
#endif

/** The first descriptor number (descriptors are WISP_SOCKET_OFFSET +
 *  table index). A value above the system's own descriptors keeps socket
 *  descriptors apart from file descriptors where both exist; descriptors
 *  below it are answered with ENOTSOCK. Range 0..32767, default 0. */
#ifndef WISP_SOCKET_OFFSET
#define WISP_SOCKET_OFFSET 0
#endif

/** Largest iovcnt of readv/writev/recvmsg/sendmsg. Range 1..1024,
 *  default 16. */
#ifndef WISP_SOCKET_IOV_MAX
#define WISP_SOCKET_IOV_MAX 16
#endif

/* Name resolution for threads (wisp/netdb.h, src/api/netdb.c): getaddrinfo
 * and gethostbyname on top of the core resolver. */

/** struct wisp_addrinfo records of the netdb layer instance (struct
 *  wisp_netdb): one per address returned by getaddrinfo (one per socket
 *  type asked for), held until freeaddrinfo. When empty, getaddrinfo fails
 *  with EAI_MEMORY. Range 1..65535, default 4. */
#ifndef WISP_NETDB_ADDRINFO_COUNT
#define WISP_NETDB_ADDRINFO_COUNT 4
#endif

/* How the socket layer hands errno values (WISP_E*, Linux numbers) to the
 * calling thread: WISP_SOCKET_ERRNO_SET(e) stores, WISP_SOCKET_ERRNO_GET()
 * reads (wisp_errno()). Default (both undefined): the C library's errno of
 * <errno.h> -- per thread with pthreads, per task with newlib's reentrancy
 * on an RTOS; on the Linux host the values are the system's own. A port
 * without a usable errno defines both, e.g. on its thread-local storage;
 * the socket's own last error (wisp_socket_errno) works regardless. */

/* ------------------------------------- allocation-failure injection */

/** 1: a stack can be told to fail its Nth allocation from now
 *  (wisp_debug_fail_alloc, wisp/debug.h), counting every allocation from
 *  any of its pools (wisp_pool_alloc: pbufs, PCBs, listeners, segments);
 *  the failed allocation behaves exactly like an empty pool (NULL, counted
 *  in the pool's failure counter). For tests that walk every allocation of
 *  an exchange (test/sim/test_alloc_walk.c). Costs a pointer per pool, a
 *  few words per stack and a compare per allocation. Default: WISP_DEBUG. */
#ifndef WISP_ALLOC_FAIL_INJECT
#define WISP_ALLOC_FAIL_INJECT WISP_DEBUG
#endif

/* -------------------------------------------------- consistency checks */

#if WISP_MAX_NETIFS < 1 || WISP_MAX_NETIFS > 254
#error "WISP_MAX_NETIFS must be 1..254"
#endif
#if WISP_LOOPBACK && WISP_MAX_NETIFS < 2
#error "WISP_LOOPBACK needs WISP_MAX_NETIFS >= 2"
#endif
#if WISP_PBUF_BLOCK_SIZE < 256 || WISP_PBUF_BLOCK_SIZE > 65535 || (WISP_PBUF_BLOCK_SIZE % 4) != 0
#error "WISP_PBUF_BLOCK_SIZE must be a multiple of 4 in 256..65535"
#endif
#if WISP_PBUF_RX_COUNT < 2 || WISP_PBUF_TX_COUNT < 2 || WISP_PBUF_REF_COUNT < 1
#error "pbuf pools too small (RX >= 2, TX >= 2, REF >= 1)"
#endif
#if WISP_PBUF_SMALL_COUNT < 0 || WISP_PBUF_SMALL_COUNT > 65535 || (WISP_PBUF_SMALL_SIZE % 4) != 0 || \
    WISP_PBUF_SMALL_SIZE < 64 || WISP_PBUF_SMALL_SIZE > WISP_PBUF_BLOCK_SIZE
#error "WISP_PBUF_SMALL_SIZE must be a multiple of 4 in 64..WISP_PBUF_BLOCK_SIZE, count 0..65535"
#endif
#if WISP_PBUF_RX_COUNT > 65535 || WISP_PBUF_TX_COUNT > 65535 || WISP_PBUF_REF_COUNT > 65535
#error "pbuf pool counts are limited to 65535"
#endif
#if WISP_TXQ_EMERG_LEN < 1 || WISP_TXQ_EMERG_LEN > 255 || WISP_TXQ_COMMON_LEN < 1 || WISP_TXQ_COMMON_LEN > 255
#error "transmit queue lengths must be 1..255"
#endif
#if WISP_EMERG_DSCP_MIN < 0 || WISP_EMERG_DSCP_MIN > 64
#error "WISP_EMERG_DSCP_MIN must be 0..64 (64 disables the emergency queue)"
#endif
#if WISP_ARP_TABLE_SIZE < 1 || WISP_ARP_TABLE_SIZE > 255 || WISP_ARP_QUEUE_LEN < 1 || WISP_ARP_QUEUE_LEN > 16
#error "ARP table 1..255 entries, queue 1..16"
#endif
#if WISP_IP_REASS && (WISP_IP_REASS_MAX_PBUFS >= WISP_PBUF_RX_COUNT || WISP_IP_REASS_MAX_PBUFS < 1)
#error "WISP_IP_REASS_MAX_PBUFS must be 1..WISP_PBUF_RX_COUNT-1 so fragments cannot starve receive"
#endif
#if WISP_IP_DEFAULT_TTL < 1 || WISP_IP_DEFAULT_TTL > 255
#error "WISP_IP_DEFAULT_TTL must be 1..255"
#endif
#if WISP_EPHEMERAL_MIN < 1024 || WISP_EPHEMERAL_MIN > WISP_EPHEMERAL_MAX || WISP_EPHEMERAL_MAX > 65535
#error "ephemeral port range must lie in 1024..65535"
#endif
#if WISP_PORT_TABLE_LEN < 1 || WISP_PORT_TABLE_LEN > 65535
#error "WISP_PORT_TABLE_LEN must lie in 1..65535"
#endif
#if WISP_PMTU_CACHE_SIZE < 1 || WISP_PMTU_CACHE_SIZE > 255 || WISP_PMTU_MIN < 68 || WISP_PMTU_MIN > 576
#error "WISP_PMTU_CACHE_SIZE must be 1..255, WISP_PMTU_MIN 68..576"
#endif
#if WISP_LOOP_QUEUE_LEN < 1 || WISP_LOOP_QUEUE_LEN > 255
#error "WISP_LOOP_QUEUE_LEN must be 1..255"
#endif
#if WISP_DHCP && !WISP_UDP
#error "WISP_DHCP needs WISP_UDP"
#endif
#if WISP_DHCP_MAX_DNS < 1 || WISP_DHCP_MAX_DNS > 8 || WISP_DHCP_REQUEST_TRIES < 1 || WISP_DHCP_REQUEST_TRIES > 255 || \
    WISP_DHCP_HOSTNAME_MAX < 1 || WISP_DHCP_HOSTNAME_MAX > 63 || WISP_DHCP_BACKOFF_BASE_MS < 4 || \
    WISP_DHCP_BACKOFF_MAX_MS < WISP_DHCP_BACKOFF_BASE_MS
#error "DHCP: MAX_DNS 1..8, REQUEST_TRIES 1..255, HOSTNAME_MAX 1..63, 4 <= BACKOFF_BASE_MS <= BACKOFF_MAX_MS"
#endif
#if WISP_ICMP_ERR_RATE < 1 || WISP_ICMP_ERR_BURST < 1
#error "ICMP error rate and burst must be >= 1"
#endif
#if WISP_TCPIP_MBOX_SIZE < 2 || WISP_TCPIP_MBOX_SIZE > 65535 || WISP_TCPIP_MSG_COUNT < 1 || WISP_TCPIP_MSG_COUNT > 65535
#error "WISP_TCPIP_MBOX_SIZE must be 2..65535, WISP_TCPIP_MSG_COUNT 1..65535"
#endif

#if WISP_NETCONN_COUNT < 1 || WISP_NETCONN_COUNT > 65535 || WISP_NETBUF_COUNT < 1 || WISP_NETBUF_COUNT > 65535
#error "WISP_NETCONN_COUNT and WISP_NETBUF_COUNT must be 1..65535"
#endif
#if WISP_NETCONN_RECVMBOX_SIZE < 2 || WISP_NETCONN_RECVMBOX_SIZE > 65535
#error "WISP_NETCONN_RECVMBOX_SIZE must be 2..65535"
#endif
#if WISP_SOCKET_COUNT < 1 || WISP_SOCKET_COUNT > 32767 || WISP_SOCKET_OFFSET < 0 || WISP_SOCKET_OFFSET > 32767
#error "WISP_SOCKET_COUNT must be 1..32767, WISP_SOCKET_OFFSET 0..32767"
#endif
#if WISP_SOCKET_IOV_MAX < 1 || WISP_SOCKET_IOV_MAX > 1024
#error "WISP_SOCKET_IOV_MAX must be 1..1024"
#endif

#if WISP_DNS
#if !WISP_UDP
#error "WISP_DNS needs WISP_UDP"
#endif
#if WISP_DNS_MAX_SERVERS < 1 || WISP_DNS_MAX_SERVERS > 8 || WISP_DNS_CACHE_SIZE < 0 || WISP_DNS_CACHE_SIZE > 255
#error "WISP_DNS_MAX_SERVERS must be 1..8, WISP_DNS_CACHE_SIZE 0..255"
#endif
#if WISP_DNS_MAX_QUERIES < 1 || WISP_DNS_MAX_QUERIES > 32 || WISP_DNS_MAX_WAITERS < WISP_DNS_MAX_QUERIES || \
    WISP_DNS_MAX_WAITERS > 255
#error "WISP_DNS_MAX_QUERIES must be 1..32, WISP_DNS_MAX_WAITERS WISP_DNS_MAX_QUERIES..255"
#endif
#if WISP_DNS_NAME_MAX < 16 || WISP_DNS_NAME_MAX > 253 || WISP_DNS_MAX_RETRIES < 0 || WISP_DNS_MAX_RETRIES > 31
#error "WISP_DNS_NAME_MAX must be 16..253, WISP_DNS_MAX_RETRIES 0..31"
#endif
#if WISP_DNS_TIMEOUT_MS < 100 || WISP_DNS_TIMEOUT_MS > 60000 || WISP_DNS_MAX_TTL_S < 1 || WISP_DNS_MAX_TTL_S > 604800 || \
    WISP_DNS_MAX_CNAME < 1 || WISP_DNS_MAX_CNAME > 16
#error "WISP_DNS_TIMEOUT_MS 100..60000, WISP_DNS_MAX_TTL_S 1..604800, WISP_DNS_MAX_CNAME 1..16"
#endif
#endif
#if WISP_NETDB_ADDRINFO_COUNT < 1 || WISP_NETDB_ADDRINFO_COUNT > 65535
#error "WISP_NETDB_ADDRINFO_COUNT must be 1..65535"
#endif

#if WISP_TCP
#if WISP_TCP_MSS < 88 || WISP_TCP_MSS > 65495
#error "WISP_TCP_MSS must be 88..65495"
#endif
#if WISP_TCP_WND < 2 * WISP_TCP_MSS && WISP_TCP_WND < 65535
#error "WISP_TCP_WND should hold at least two segments (RFC 5681 ACK every second segment)"
#endif
#if !WISP_TCP_WND_SCALE && WISP_TCP_WND > 65535
#error "WISP_TCP_WND > 65535 needs WISP_TCP_WND_SCALE"
#endif
#if WISP_TCP_SND_BUF < 2 * WISP_TCP_MSS
#error "WISP_TCP_SND_BUF must hold at least two segments"
#endif
#if WISP_TCP_SND_MIN_BLOCKS < 1 || WISP_TCP_SND_RESERVE_BLOCKS < WISP_TCP_SND_MIN_BLOCKS || \
    (WISP_PBUF_TX_COUNT / 16 > 2 ? WISP_PBUF_TX_COUNT / 16 : 2) + WISP_TCP_SND_RESERVE_BLOCKS + WISP_TCP_SND_MIN_BLOCKS > \
        WISP_PBUF_TX_COUNT
#error "TCP transmit budget: 1 <= WISP_TCP_SND_MIN_BLOCKS <= WISP_TCP_SND_RESERVE_BLOCKS, and the control reserve + reserve + guarantee <= WISP_PBUF_TX_COUNT"
#endif
#if WISP_TCP_PCB_COUNT < 1 || WISP_TCP_LISTEN_COUNT < 1 || WISP_TCP_SYNQ_COUNT < 1 || WISP_TCP_TW_COUNT < 1 || WISP_TCP_SEG_COUNT < 2
#error "TCP pools: PCB, LISTEN, SYNQ, TW >= 1 and SEG >= 2"
#endif
#if WISP_TCP_RTO_MIN_MS < 1 || WISP_TCP_RTO_MIN_MS > WISP_TCP_RTO_INIT_MS || WISP_TCP_RTO_INIT_MS > WISP_TCP_RTO_MAX_MS || WISP_TCP_RTO_MAX_MS < 60000
#error "TCP RTO: 1 <= MIN <= INIT <= MAX, MAX >= 60 s (RFC 6298 §2.5)"
#endif
#if WISP_TCP_DELACK_MS < 1 || WISP_TCP_DELACK_MS > 200
#error "WISP_TCP_DELACK_MS must be 1..200"
#endif
#endif

#if WISP_IPV6 != 0 && WISP_IPV6 != 1
#error "WISP_IPV6 must be 0 or 1"
#endif

#endif /* WISP_OPT_H */
