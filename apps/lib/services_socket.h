/**
 * @file services_socket.h
 * The small standard services of services.h -- UDP echo (RFC 862, port 7)
 * and discard (RFC 863, port 9), TCP echo (7), discard (9) and chargen
 * (RFC 864, port 19) -- written as application threads on wisp's BSD
 * socket API (wisp/sockets.h), with nothing but public calls: an example
 * of socket code on wisp, and the services of `wisp-node --api socket`.
 *
 * The socket table must be installed (wisp_sockets_init) before start;
 * the sockets are made with wisp_socket(), i.e. on the table's default
 * stack.
 *
 * Threads (wisp_sys_thread_new): one accept thread per TCP service, one
 * receive thread per UDP service, and a bounded pool of
 * WISP_SOCK_SERVICES_CONNS connection slots shared by the TCP services
 * (each slot holds its connection's WISP_SOCK_SERVICES_BUF-byte buffer).
 * A slot's worker thread is made on the slot's first connection and then
 * serves the slot's connections one after the other, waiting on the
 * slot's semaphore in between (services_thread.h): no thread per
 * connection, and a server that never had more than k connections at
 * once keeps about k workers. Admission (per-source cap, reclaiming the
 * slot idle the longest when none is free) and the idle timeout are those of
 * services_netconn.h, with the same options (struct wisp_services_opts);
 * a reclaimed or stuck connection is reset (SO_LINGER {1, 0}).
 *
 * Behaviour is that of services_netconn.h: echo sends back every received
 * byte before it reads again (flow control end to end); discard counts;
 * chargen sends the RFC 864 pattern and reads (MSG_DONTWAIT) between
 * sends to notice the peer's FIN; each closes after the peer's FIN. UDP
 * echo answers with sendto() to the source unless its port is 0 or that
 * of a reflecting service (dropped, counted).
 *
 * Stopping: SO_RCVTIMEO / SO_SNDTIMEO of WISP_SOCK_SERVICES_POLL_MS on
 * every socket; a thread that times out looks at the stop flag.
 * wisp_sock_services_request_stop() sets it and returns; the threads then
 * close their sockets (FIN after queued data; connections counted as
 * aborted and reported with WISP_ERR_ABRT) and end -- idle workers are
 * woken for it; wisp_sock_services_stop() also joins them.
 *
 * Counters and the connection-end hook are those of services.h (the error
 * of a failed connection is mapped back from errno: ECONNRESET ->
 * WISP_ERR_RST, ETIMEDOUT -> WISP_ERR_TIMEOUT, ECONNABORTED ->
 * WISP_ERR_ABRT, EPIPE -> WISP_ERR_CLSD, others WISP_ERR_VAL);
 * have_info is always false.
 *
 * Who may call: application threads (never the core context); start and
 * stop from one controlling thread.
 */
#ifndef WISP_SERVICES_SOCKET_H
#define WISP_SERVICES_SOCKET_H

#include "wisp/sockets.h"
#include "services.h"
#include "services_netconn.h" /* enum wisp_udp_service_id */

/** TCP connection slots, i.e. connections and worker threads at most (all
 *  services together), 1..255. Default 16. */
#ifndef WISP_SOCK_SERVICES_CONNS
#define WISP_SOCK_SERVICES_CONNS 16
#endif

/** SO_RCVTIMEO / SO_SNDTIMEO of the service sockets (ms): the longest a
 *  thread takes to notice a stop. Default 200. */
#ifndef WISP_SOCK_SERVICES_POLL_MS
#define WISP_SOCK_SERVICES_POLL_MS 200u
#endif

/** Receive buffer of one TCP connection (and the chargen write size).
 *  Default 16384. */
#ifndef WISP_SOCK_SERVICES_BUF
#define WISP_SOCK_SERVICES_BUF 16384u
#endif

/** Receive buffer of a UDP service: the largest UDP payload. */
#define WISP_SOCK_SERVICES_UDP_BUF 65536u

#if WISP_SOCK_SERVICES_CONNS < 1 || WISP_SOCK_SERVICES_CONNS > 255
#error "WISP_SOCK_SERVICES_CONNS must be 1..255"
#endif

struct wisp_sock_services;

/** One server thread: a TCP listener or a UDP service (private). */
struct wisp_sock_svc_server {
    struct wisp_sock_services *svc;
    int fd;                        /**< owned by the thread once it runs; -1 = none */
    wisp_sys_thread_t thread;
    uint8_t id, tcp, running;
};

/** One connection slot and its worker thread (private). */
struct wisp_sock_svc_slot {
    struct wisp_sock_services *svc;
    int fd;
    wisp_sys_thread_t thread;      /**< the worker, once c.worker is set */
    wisp_sys_sem_t go;             /**< the worker's wake-up (exists with it) */
    uint8_t id;                    /**< wisp_tcp_service_id */
    struct wisp_svc_conn c;        /**< admission state (services_thread.h) */
    struct wisp_sockaddr_in peer;
    uint8_t buf[WISP_SOCK_SERVICES_BUF];
};

/** Counters (a snapshot: wisp_sock_services_stats). */
struct wisp_sock_services_stats {
    struct wisp_service_stats udp[WISP_UDP_SVC_COUNT];
    struct wisp_tcp_service_stats tcp[WISP_TCP_SVC_COUNT];
    unsigned threads;              /**< service threads (servers, workers) not finished yet */
};

/** The socket services. Large (buffers inside): allocate it statically or
 *  on the heap. Fields are private. */
struct wisp_sock_services {
    wisp_sys_mutex_t lock;         /**< stop flag, counters, slot states */
    uint8_t lock_made, stop;
    struct wisp_sock_services_stats st;
    wisp_tcp_conn_report_fn report;
    void *report_ctx;
    struct wisp_services_opts opt; /**< resolved at start */
    struct wisp_sock_svc_server tcp_srv[WISP_TCP_SVC_COUNT];
    struct wisp_sock_svc_server udp_srv[WISP_UDP_SVC_COUNT];
    struct wisp_sock_svc_slot slots[WISP_SOCK_SERVICES_CONNS];
    uint8_t udp_buf[WISP_UDP_SVC_COUNT][WISP_SOCK_SERVICES_UDP_BUF];
    /** One chargen period followed by one write (a send never wraps). */
    uint8_t chargen[WISP_CHARGEN_PERIOD + WISP_SOCK_SERVICES_BUF];
};

/** Start every service (sockets made, bound and listening here, so a port
 *  in use fails the start; then the threads). report (NULL = none) is
 *  called from a slot's worker thread when a TCP connection ends. svc is
 *  zeroed first. On failure everything started is stopped again and the
 *  error returned (WISP_ERR_MEM: no socket / thread; WISP_ERR_USE: port in
 *  use; WISP_ERR_VAL: other socket errors). */
wisp_err_t wisp_sock_services_start(struct wisp_sock_services *svc, wisp_tcp_conn_report_fn report,
                                    void *report_ctx);
/** The same with the TCP admission and timeout options (o may be NULL:
 *  defaults; per_source bounded by WISP_SOCK_SERVICES_CONNS). */
wisp_err_t wisp_sock_services_start_opts(struct wisp_sock_services *svc, const struct wisp_services_opts *o,
                                         wisp_tcp_conn_report_fn report, void *report_ctx);
/** Ask every service thread to close its socket and end; returns at once. */
void wisp_sock_services_request_stop(struct wisp_sock_services *svc);
/** request_stop, then join every thread. Afterwards svc holds no socket
 *  and no thread; the counters stay readable. */
void wisp_sock_services_stop(struct wisp_sock_services *svc);
/** A snapshot of the counters (any thread). */
void wisp_sock_services_stats(struct wisp_sock_services *svc, struct wisp_sock_services_stats *out);

#endif /* WISP_SERVICES_SOCKET_H */
