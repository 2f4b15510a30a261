/**
 * @file services_netconn.h
 * The small standard services of services.h -- UDP echo (RFC 862, port 7)
 * and discard (RFC 863, port 9), TCP echo (7), discard (9) and chargen
 * (RFC 864, port 19) -- written as application threads on the netconn API
 * (wisp/netconn.h), with nothing but public calls: an example of
 * sequential (blocking) code on wisp, and the services of
 * `wisp-node --api netconn`.
 *
 * Threads (all made with wisp_sys_thread_new, so the file runs on any
 * port with threads):
 *  - one accept thread per TCP service, one receive thread per UDP
 *    service;
 *  - a bounded pool of WISP_NC_SERVICES_CONNS connection slots shared by
 *    the TCP services. A slot's worker thread is made on the slot's first
 *    connection and then serves the slot's connections one after the
 *    other, waiting on the slot's semaphore in between
 *    (services_thread.h): no thread per connection, and a server that
 *    never had more than k connections at once keeps about k workers.
 *    Workers are joined at stop.
 *
 * Admission and timeouts (struct wisp_services_opts of services.h; the
 * policy of the raw services): a remote address holds at most per_source
 * slots (default: all, no hard cap); a connection without progress (no byte
 * received, none of ours taken by the stack) for idle_ms (default 30 s)
 * is closed by its thread -- with a reset when it is stuck in a write
 * (the peer reads nothing) -- and counted as a timeout. When no slot is
 * free (or the address is at its cap), the accept thread marks a slot for
 * reclaiming, chosen as reclaim.h says (idle at least reclaim_ms, default
 * 1 s, or of an address holding two slots more than the new one's):
 * its thread resets its connection (counted as reclaimed) within
 * WISP_NC_SERVICES_POLL_MS, and the new connection gets the slot (the
 * accept thread waits up to 3 polls for it). Without a candidate, the new
 * connection is closed at once and counted as refused (capped too when
 * the cap was the reason).
 *
 * Service behaviour is that of services.h where the API allows it:
 *  - TCP echo writes every received byte back (NETCONN_COPY) before it
 *    takes the next data from the connection, so a client that does not
 *    read is flow-controlled end to end (the write blocks, the receive
 *    mailbox fills, the window closes); after the peer's FIN it closes;
 *  - discard counts and frees; chargen writes the RFC 864 pattern in
 *    WISP_NC_SERVICES_CHUNK-byte writes and checks for the peer's data or
 *    FIN (non-blocking receive) between writes: after the FIN it closes;
 *  - UDP echo sends the datagram back to its source (netconn_send of the
 *    received netbuf, no copy by the service) unless the source port is 0
 *    or that of a reflecting service (7, 9, 13, 17, 19, 37): those are
 *    dropped and counted. Unlike the raw service it cannot see whether a
 *    datagram was a broadcast (netconn does not tell), nor answer with the
 *    request's DSCP.
 *
 * Stopping: every blocking call has a timeout of WISP_NC_SERVICES_POLL_MS
 * (recv / accept / write), after which the thread looks at the stop flag.
 * wisp_nc_services_request_stop() sets it and returns; the threads then
 * close their connections (FIN after the queued data; counted as
 * aborted, reported with WISP_ERR_ABRT) and listeners and end within about
 * that time (idle workers are woken for it); wisp_nc_services_stop() also
 * joins them.
 *
 * Counters use the structs of services.h; connection ends are reported
 * through the same hook type (have_info is always false: the connection's
 * TCP statistics are not part of the netconn API).
 *
 * Who may call: application threads (never the core context); start and
 * stop from one controlling thread.
 */
#ifndef WISP_SERVICES_NETCONN_H
#define WISP_SERVICES_NETCONN_H

#include "wisp/netconn.h"
#include "services.h"
#include "services_thread.h"

/** TCP connection slots, i.e. connections and worker threads at most (all
 *  services together), 1..255. Default 16. */
#ifndef WISP_NC_SERVICES_CONNS
#define WISP_NC_SERVICES_CONNS 16
#endif

/** Timeout of every blocking call of the service threads (ms): the longest
 *  a thread takes to notice a stop. Default 200. */
#ifndef WISP_NC_SERVICES_POLL_MS
#define WISP_NC_SERVICES_POLL_MS 200u
#endif

/** Bytes per chargen write. Default 4096. */
#ifndef WISP_NC_SERVICES_CHUNK
#define WISP_NC_SERVICES_CHUNK 4096u
#endif

#if WISP_NC_SERVICES_CONNS < 1 || WISP_NC_SERVICES_CONNS > 255
#error "WISP_NC_SERVICES_CONNS must be 1..255"
#endif

/** The UDP services (index of the udp arrays). */
enum wisp_udp_service_id { WISP_UDP_SVC_ECHO = 0, WISP_UDP_SVC_DISCARD, WISP_UDP_SVC_COUNT };

struct wisp_nc_services;

/** One server thread: a TCP listener or a UDP service (private). */
struct wisp_nc_svc_server {
    struct wisp_nc_services *svc;
    struct wisp_netconn *conn;     /**< owned by the thread once it runs */
    wisp_sys_thread_t thread;
    uint8_t id;                    /**< wisp_tcp_service_id / wisp_udp_service_id */
    uint8_t tcp;
    uint8_t running;               /**< the thread was created (join it) */
};

/** One connection slot and its worker thread (private). */
struct wisp_nc_svc_slot {
    struct wisp_nc_services *svc;
    struct wisp_netconn *conn;
    wisp_sys_thread_t thread;      /**< the worker, once c.worker is set */
    wisp_sys_sem_t go;             /**< the worker's wake-up (exists with it) */
    uint8_t id;                    /**< wisp_tcp_service_id */
    struct wisp_svc_conn c;        /**< admission state, remote address (services_thread.h) */
};

/** Counters (a snapshot: wisp_nc_services_stats). */
struct wisp_nc_services_stats {
    struct wisp_service_stats udp[WISP_UDP_SVC_COUNT];
    struct wisp_tcp_service_stats tcp[WISP_TCP_SVC_COUNT];
    unsigned threads;              /**< service threads (servers, workers) not finished yet */
};

/** The services of one netconn layer. Large (the chargen pattern is
 *  inside): allocate it statically or on the heap. Fields are private. */
struct wisp_nc_services {
    struct wisp_netconn_api *api;
    wisp_sys_mutex_t lock;         /**< stop flag, counters, slot states */
    uint8_t lock_made;
    uint8_t stop;
    struct wisp_nc_services_stats st;
    wisp_tcp_conn_report_fn report;
    void *report_ctx;
    struct wisp_services_opts opt; /**< resolved at start */
    struct wisp_nc_svc_server tcp_srv[WISP_TCP_SVC_COUNT];
    struct wisp_nc_svc_server udp_srv[WISP_UDP_SVC_COUNT];
    struct wisp_nc_svc_slot slots[WISP_NC_SERVICES_CONNS];
    /** One chargen period followed by one chunk (a write never wraps). */
    uint8_t chargen[WISP_CHARGEN_PERIOD + WISP_NC_SERVICES_CHUNK];
};

/** Start every service on api (a running netconn layer): the listeners
 *  and UDP netconns are made and bound here (so a port in use fails the
 *  start), then their threads. report (NULL = none) is called from a
 *  slot's worker thread when a TCP connection ends. svc is zeroed first. On
 *  failure everything started is stopped again and the error returned
 *  (WISP_ERR_MEM: no netconn / thread; WISP_ERR_USE: port in use). */
wisp_err_t wisp_nc_services_start(struct wisp_nc_services *svc, struct wisp_netconn_api *api,
                                  wisp_tcp_conn_report_fn report, void *report_ctx);
/** The same with the TCP admission and timeout options (o may be NULL:
 *  defaults; per_source bounded by WISP_NC_SERVICES_CONNS). */
wisp_err_t wisp_nc_services_start_opts(struct wisp_nc_services *svc, struct wisp_netconn_api *api,
                                       const struct wisp_services_opts *o, wisp_tcp_conn_report_fn report,
                                       void *report_ctx);
/** Ask every service thread to close its connection and end; returns at
 *  once (any thread). */
void wisp_nc_services_request_stop(struct wisp_nc_services *svc);
/** request_stop, then join every thread (returns within about
 *  WISP_NC_SERVICES_POLL_MS plus the closes). Afterwards svc holds no
 *  netconn and no thread; the counters stay readable. */
void wisp_nc_services_stop(struct wisp_nc_services *svc);
/** A snapshot of the counters (any thread). */
void wisp_nc_services_stats(struct wisp_nc_services *svc, struct wisp_nc_services_stats *out);

#endif /* WISP_SERVICES_NETCONN_H */
