/**
 * @file demo.h
 * wisp-demo internals shared by its parts: the options, the run state, the
 * figures the summary prints, and the entry points of the parts that live
 * in their own files (demo_http.c: the HTTP client; demo_tcp.c: the TCP
 * goodput of the raw, netconn and socket APIs on a real-time wire).
 *
 * Who may call: the demo's main thread (each part starts and stops the
 * threads it needs itself).
 */
#ifndef WISP_DEMO_H
#define WISP_DEMO_H

#include <stdio.h>

#include "simwire.h"
#include "services.h"

#define DEMO_NET "198.18.0."          /**< simulated wire (RFC 2544 range) */
#define DEMO_RT_NET "198.18.1."       /**< real-time wire of the TCP goodput part */
#define DEMO_HTTP_PORT 80u

/** Command-line options: the wire impairment applied to every part. */
struct demo_opts {
    uint64_t seed;
    double loss, reorder, dup, corrupt;   /**< percent */
    double latency_ms;                     /**< one-way delay */
    double rate_mbit;                      /**< link rate, 0 = infinite */
    const char *pcap;
    bool quick;                            /**< smaller transfers (ctest under ASan) */
};

/** Pool figures of one stack, kept for the report after it is freed. */
struct demo_pool_snap {
    char node[12];
    unsigned count[WISP_POOL_COUNT], high[WISP_POOL_COUNT], failed[WISP_POOL_COUNT];
    const char *name[WISP_POOL_COUNT];
};

#define DEMO_MAX_STACKS 4u

/** Figures the summary at the end repeats (filled by the parts). */
struct demo_summary {
    unsigned ping_sent, ping_replies;
    unsigned echo_ok, echo_total, big_ok, big_total;
    bool http_built;                  /**< the server (apps/lib/httpd.h) is in this build */
    unsigned http_ok, http_total;     /**< GETs answered 200 with the full body */
    uint64_t http_big_bytes;
    double http_big_ms;
    bool tcp_ran;
    double tcp_mbit[3];               /**< raw, netconn, socket */
    unsigned tcp_exact;               /**< APIs whose transfer was byte-exact */
    double small_ratio;               /**< worst small-write goodput / 1460-byte goodput */
    unsigned small_min_size;
    bool prio_ran;
    unsigned prio_load;
    double prio_urgent_us, prio_common_us;
    unsigned leaked;                  /**< pool elements in use after the teardowns */
    unsigned stacks;                  /**< stacks checked */
    uint64_t frames_captured;
};

/** What the tap saw of ARP (ping part). */
struct arp_watch {
    unsigned requests;          /**< A's non-gratuitous requests */
    unsigned replies;           /**< B's replies */
    uint64_t first_req_us, first_reply_us;
};

/** Echo replies awaited by A's ping. */
struct ping_state {
    struct sim_world *w;
    uint16_t seq;               /**< sequence number awaited */
    bool got;
    uint64_t t_reply;
    unsigned late;              /**< replies to earlier requests, duplicates */
    unsigned bad;               /**< replies with wrong data */
};

/** A's UDP echo client. */
struct echo_client {
    struct sim_world *w;
    struct wisp_udp_pcb *pcb;
    uint64_t seed;
    uint8_t *rx;                /**< last datagram received (65536 bytes) */
    uint8_t *ref;               /**< the expected contents (65536 bytes) */
    uint32_t want;              /**< datagram number awaited */
    bool got;                   /**< it came back intact */
    unsigned stale;             /**< intact echoes of earlier datagrams, duplicates */
    unsigned bad;               /**< echoes that match no datagram we sent */
};

struct prio_meas;

struct demo {
    struct demo_opts o;
    struct sim_world *w;
    struct sim_node *a, *b;
    struct wisp_services svc;        /**< B's echo and discard services */
    bool svc_up;
    struct sim_rng rng;              /**< the demo's own draws: sizes, send times */
    struct arp_watch arp;
    struct prio_meas *prio;          /**< non-NULL while the queue part measures */
    struct ping_state ping;
    struct echo_client ec;
    uint8_t *tx;                     /**< datagram being sent (65536 bytes) */
    unsigned checks, failed;
    struct demo_summary sum;
    struct demo_pool_snap pools[DEMO_MAX_STACKS];
    unsigned npools;
    double t_real0;                  /**< wall clock at the start (s) */
    uint64_t pcap_end_us;            /**< last timestamp the simulated part wrote */
};

/** Count a check; print it when it failed. */
void demo_check(struct demo *d, bool ok, const char *what);
/** Wall clock (monotonic), seconds. */
double demo_real_s(void);
/** Keep the pool figures of stack s under the name node. */
void demo_pool_snapshot(struct demo *d, const char *node, const struct wisp_stack *s);

/** Part: HTTP GETs from A (raw-API client) to B's wisp_httpd on the
 *  simulated wire (virtual time). Prints its section. */
void demo_part_http(struct demo *d, unsigned num);
/** Part: TCP goodput of the three APIs and small writes, on two stacks
 *  with stack threads joined by a real-time wire with the options'
 *  impairment; appends its frames to the capture file d->o.pcap. Prints
 *  its sections (num and num + 1). */
void demo_part_tcp(struct demo *d, unsigned num);

#endif /* WISP_DEMO_H */
