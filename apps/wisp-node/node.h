/**
 * @file node.h
 * wisp-node's shared state and the functions its modules call in each
 * other (see main.c for what the program does). Host-only code: the
 * transfer check uses Debian's nettle for SHA-256.
 */
#ifndef WISP_NODE_H
#define WISP_NODE_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nettle/sha2.h>

#include "wisp/wisp.h"
#include "wisp/pcapdev.h"
#include "wisp/dhcp.h"
#include "services.h"
#include "iperf.h"
#include "httpd.h"
#include "ping.h"
#include "services_netconn.h"
#include "services_socket.h"
#include "tapdev.h"
#include "unix_port.h"

/** Longest wait in the event loop (ms): bounds the reaction to anything
 *  that is not an fd event or a timer. */
#define NODE_MAX_WAIT_MS 1000u

/** Client mode: longest wait after the transfer for the closing
 *  connection to leave the pools (the FIN handshake), in ms. */
#define NODE_CLIENT_LINGER_MS 3000u
/** Largest --write-size. */
#define NODE_MAX_WRITE_SIZE (16u << 20)
/** --tx-direct-max default (bytes): frames up to this long skip the
 *  I/O thread when it sleeps (wisp_tapdev_tx_direct_max). */
#define NODE_TX_DIRECT_MAX 256u

struct node_opts {
    const char *tap;
    const char *pcap;
    const char *api;
    wisp_ip4_t addr, mask, gw;
    unsigned prefix;
    unsigned mtu;
    uint64_t seed;
    bool have_seed;
    bool quiet;
    uint32_t tx_direct_max;      /**< --tx-direct-max (wisp_tapdev_tx_direct_max) */
    bool dhcp;                   /**< --dhcp: address from a DHCP lease */
    /* client mode */
    bool client;
    wisp_ip4_t peer_ip;
    uint16_t peer_port;
    bool send, recv;
    uint64_t send_bytes;
    uint32_t write_size;
    uint32_t connects;           /**< --connects N (0 = a transfer) */
    /* iperf 2 (apps/lib/iperf.h): --iperf server, --iperf-client test */
    bool iperf, iperf_client, iperf_udp;
    wisp_ip4_t iperf_ip;
    uint16_t iperf_port;
    uint64_t iperf_rate, iperf_bytes;
    uint32_t iperf_time_ms, iperf_len;
    /* --http (apps/lib/httpd.h), --ping ADDR (apps/lib/ping.h) */
    bool http, ping;
    /* --http-max-conns, --http-per-source, --http-idle-ms, --http-head-ms,
     * --http-reclaim-ms; --svc-idle-ms, --svc-per-source, --svc-reclaim-ms
     * (zero = the library's default) */
    struct wisp_httpd_opts http_opt;
    struct wisp_services_opts svc_opt;
    wisp_ip4_t ping_ip;
    uint32_t ping_count, ping_interval_ms;
    uint16_t ping_size;
    bool have_ping_count, have_ping_interval, have_ping_size;
    /* DNS: --dns ADDR (the resolver's server), --resolve NAME (resolve,
     * print the result, exit) */
    wisp_ip4_t dns_server;
    const char *resolve;
    /* --udp-probe ADDR:PORT (raw API) */
    bool udp_probe;
    wisp_ip4_t probe_ip;
    uint16_t probe_port;
};


/** State of the --connect transfer. */
struct node_client {
    wisp_ip4_t ip;
    uint16_t port;
    bool send_mode;
    uint64_t total;              /**< send: bytes to send */
    uint32_t wsize;              /**< write size */
    struct wisp_tcp_pcb *pcb;    /**< NULL once closed / freed */
    uint8_t *chunk;              /**< current write (send) */
    uint32_t chunk_len, chunk_off;
    uint64_t written, acked, received, writes, write_mem;
    bool connected, peer_closed, shut_tx, close_pending, done, ok;
    wisp_err_t err;
    double t_start, t_conn, t_last, t_end;
    bool have_info;
    struct wisp_tcp_info info;
    struct sha256_ctx hash;     /**< SHA-256 of the bytes sent / received */
    /* --connects N */
    uint32_t connects, connects_done;
    double *conn_times;          /**< seconds per connect */
    bool next_due;               /**< raw API: start the next connection */
};

/** The client thread of --api netconn / socket. */
struct node_tclient {
    wisp_sys_thread_t thread;
    wisp_sys_mutex_t lock;       /**< the fields below */
    bool lock_made, running;     /**< (main thread only) */
    bool stop, finished;
    bool connecting, closed_by_stop;
    struct wisp_netconn *conn;   /**< while connecting (netconn) */
    int fd;                      /**< while connecting (socket), else -1 */
};

enum node_api_kind { NODE_API_RAW = 0, NODE_API_NETCONN, NODE_API_SOCKET };

struct node {
    struct node_opts o;
    struct wisp_stack stack;
    struct wisp_tapdev tap;
    struct wisp_pcapdev pcap;
    FILE *pcap_file;
    uint32_t pcap_flushed;       /**< records written at the last fflush */
    struct wisp_netif nif;
    struct wisp_services svc;
    bool services_up;
    struct node_client client;
    /* --api netconn / socket: the stack thread, the API layers, the
     * services and the client as application threads */
    enum node_api_kind kind;
    bool threaded;
    bool tcpip_up, ncapi_up, socks_up;
    struct wisp_tcpip tcpip;
    struct wisp_netconn_api ncapi;
    struct wisp_sockets socks;
    struct wisp_nc_services ncsvc;
    struct wisp_sock_services sksvc;
    struct node_tclient tc;
    /* snapshots taken before the threaded layers stop */
    struct wisp_nc_services_stats tsvc_st;
    struct wisp_netconn_stats nc_st;
    struct wisp_tcpip_stats tcpip_st;
    bool have_tstats;
    /* iperf 2 server (--iperf) and client (--iperf-client), raw API */
    struct wisp_iperf_server iperf_srv;
    bool iperf_up;
    struct wisp_iperf_client iperf_cl;
    bool iperf_cl_done;
    struct wisp_iperf_result iperf_res;
    /* --dhcp: the DHCP client (raw API) */
    struct wisp_dhcp dhcp;
    /* HTTP server (--http) and ping client (--ping), raw API */
    struct wisp_httpd *httpd;        /**< allocated when --http */
    struct wisp_ping ping;
    bool ping_up;
    /* --resolve NAME (raw API): the outcome */
    bool resolve_done, resolve_ok;
    bool resolve_started;        /**< with --dhcp: started once the lease is bound */
    /* --udp-probe (raw API) */
    struct wisp_udp_pcb *probe;
    struct wisp_timer probe_tmr;
    unsigned probe_sent;
    bool probe_done;
    wisp_err_t probe_err;
};

/* ---------------------------------------------------------- API table
 * One row per application API; each starts and stops the node's services
 * on that API. Only "raw" (the core-context callback API) exists so far;
 * netconn and socket add rows here. */
struct node_api {
    const char *name;
    int (*start)(struct node *n);
    void (*stop)(struct node *n);
    void (*dump)(struct node *n);
    /** Optional: stop the application threads and the stack thread before
     *  the exit report (the stack is single-threaded again afterwards). */
    void (*quiesce)(struct node *n);
};

/* SHA-256 of a client transfer (nettle) */
static inline void node_hash_init(struct sha256_ctx *c)
{
    sha256_init(c);
}
static inline void node_hash_update(struct sha256_ctx *c, const void *data, size_t len)
{
    sha256_update(c, len, (const uint8_t *)data);
}
/** Finish c and write its digest as 64 hex digits + NUL into hex. */
void node_hash_hex(struct sha256_ctx *c, char *hex);

/* main.c */
int node_resolve_start(struct node *n);
int node_tap_pump(struct node *n, const sigset_t *wait_mask, uint32_t wait_ms);

/* opts.c (options) */
int parse_args(int argc, char **argv, struct node_opts *o);
bool parse_uint(const char *s, unsigned long long max, unsigned long long *out);
int usage_error(const char *fmt, const char *arg);

/* api.c (API table) */
const struct node_api *find_api(const char *name);
unsigned node_pools_in_use(struct node *n);

/* client.c (raw-API client) */
void client_finish(struct node_client *c, bool ok);
int client_report(struct node *n);
int client_start(struct node *n);
void client_stop(struct node *n);
void client_tick(struct node *n);
double mono_s(void);
void pattern_fill(uint64_t off, uint8_t *dst, size_t len);
void print_tcp_info(const char *prefix, const struct wisp_tcp_info *i);

/* tclient.c (netconn / socket client thread) */
bool tclient_finished(struct node *n);
void tclient_join(struct node *n);
void tclient_request_stop(struct node *n);
int tclient_start(struct node *n);

/* node_iperf.c (iperf 2) */
int node_iperf_client_report(struct node *n);
int node_iperf_client_start(struct node *n);
bool node_iperf_finished(struct node *n, unsigned baseline, double *linger_until);
bool node_iperf_parse_num(const char *arg, bool metric, double mult, double max, double *out);
bool node_iperf_parse_target(const char *arg, struct node_opts *o);
int node_iperf_start(struct node *n);
void node_iperf_stop(struct node *n);

/* node_svc.c (DHCP, HTTP, ping) */
int node_dhcp_start(struct node *n);
void node_dhcp_stop(struct node *n);
void node_http_dump(struct node *n);
int node_http_ping_check(struct node_opts *o);
int node_http_ping_opt(int c, const char *arg, struct node_opts *o);
void node_http_ping_stop(struct node *n);
int node_http_start(struct node *n);
void node_iperf_dump(struct node *n);
int node_limit_opt(int c, const char *arg, struct node_opts *o);
int node_ping_report(struct node *n);
int node_ping_start(struct node *n);

#endif /* WISP_NODE_H */
