/**
 * @file lwip_app.h
 * lwIP 2.1 names for a whole lwIP application on wisp: start-up
 * (tcpip_init, LOCK_TCPIP_CORE), interfaces (netif_add, netif_set_up, ...),
 * the OS layer (sys_thread_new, sys_sem_*, sys_mbox_*, sys_mutex_*), the
 * raw API (tcp_*, udp_*, pbuf_*) with lwIP's callback signatures and pbuf
 * ownership rules, DHCP and DNS, netifapi, and the lwip_* socket calls.
 * Every shim in include/lwip/ includes this file (lwip/sockets.h adds the
 * standard socket names); the netconn names come from wisp/lwip_compat.h,
 * which this file includes.
 *
 * Implemented by the compat library (compat/lwip/lwip_app.c, CMake target
 * wisp_lwip), on wisp's public API only. docs/lwip-migration.md lists what
 * maps one-to-one and what differs.
 *
 * The instance: lwIP's API names no stack, so the library holds one
 * (struct wisp_lwip: stack, stack thread, netconn layer, socket table, the
 * raw API's per-PCB records), set up by tcpip_init(). It is the compat
 * layer's one piece of process-wide state, as lwIP itself is process-wide;
 * wisp_lwip_stack() / wisp_lwip_tcpip() give it to code that mixes lwIP
 * names with wisp calls (drivers, tests). Before tcpip_init, a port without
 * the unix port's getrandom() must install an entropy source with
 * wisp_lwip_set_rand() (lwIP's LWIP_RAND()).
 *
 * Core context: as with lwIP, the raw API (tcp_*, udp_*, netif_*, dhcp_*,
 * dns_*) runs on the tcpip thread (its callbacks, tcpip_callback) or
 * between LOCK_TCPIP_CORE() and UNLOCK_TCPIP_CORE(). Drivers whose
 * receive thread feeds the stack under the lock take it with
 * LOCK_TCPIP_CORE() too (not wisp_tcpip_lock directly), so that pbuf_free()
 * in a callback knows it runs in the core. pbuf_free() may be called by
 * any thread (it takes the lock when the caller is not in the core).
 */
#ifndef WISP_LWIP_APP_H
#define WISP_LWIP_APP_H

#include "wisp/lwip_compat.h"
#include "wisp/tcpip.h"
#include "wisp/sockets.h"
#include "wisp/dhcp.h"
#include "wisp/dns.h"

/* ----------------------------------------------------------- lwip/opt.h
 * What an lwIP application tests with #if. */
#ifndef NO_SYS
#define NO_SYS 0
#endif
#if NO_SYS
#error "wisp's lwIP compatibility layer runs with a tcpip thread (NO_SYS 0); for a main-loop system use wisp's raw API with ports/none directly (docs/lwip-migration.md)"
#endif
#ifndef LWIP_SOCKET
#define LWIP_SOCKET 1
#endif
#ifndef LWIP_SOCKET_SELECT
#define LWIP_SOCKET_SELECT 1
#endif
#ifndef LWIP_SOCKET_POLL
#define LWIP_SOCKET_POLL 1
#endif
#ifndef LWIP_COMPAT_SOCKETS
#define LWIP_COMPAT_SOCKETS 1
#endif
#ifndef LWIP_TCPIP_CORE_LOCKING
#define LWIP_TCPIP_CORE_LOCKING 1
#endif
#ifndef LWIP_DHCP
#define LWIP_DHCP WISP_DHCP
#endif
#ifndef LWIP_DNS
#define LWIP_DNS WISP_DNS
#endif
#ifndef LWIP_ARP
#define LWIP_ARP 1
#endif
#ifndef LWIP_ETHERNET
#define LWIP_ETHERNET 1
#endif
#ifndef LWIP_ICMP
#define LWIP_ICMP 1
#endif
#ifndef LWIP_RAW
#define LWIP_RAW 0
#endif
#ifndef LWIP_IGMP
#define LWIP_IGMP 0
#endif
#ifndef LWIP_NETIF_STATUS_CALLBACK
#define LWIP_NETIF_STATUS_CALLBACK 0
#endif
#ifndef LWIP_NETIF_LINK_CALLBACK
#define LWIP_NETIF_LINK_CALLBACK 0
#endif
#ifndef LWIP_CALLBACK_API
#define LWIP_CALLBACK_API 1
#endif
#ifndef LWIP_EVENT_API
#define LWIP_EVENT_API 0
#endif
#ifndef TCP_TTL
#define TCP_TTL 64
#endif
#ifndef UDP_TTL
#define UDP_TTL 64
#endif
#ifndef TCP_SND_QUEUELEN
#define TCP_SND_QUEUELEN WISP_TCP_SEG_COUNT
#endif
#ifndef LWIP_TCP_KEEPALIVE
#define LWIP_TCP_KEEPALIVE 1
#endif
#ifndef LWIP_VERSION_MAJOR
#define LWIP_VERSION_MAJOR 2
#define LWIP_VERSION_MINOR 1
#define LWIP_VERSION_REVISION 3
#define LWIP_VERSION_RC 255
#define LWIP_VERSION_STRING "2.1.3 (wisp compatibility layer)"
#endif
#ifndef LWIP_ASSERT
#define LWIP_ASSERT(message, assertion) WISP_ASSERT(assertion)
#endif
#ifndef LWIP_PLATFORM_DIAG
#define LWIP_PLATFORM_DIAG(x) ((void)0)
#endif

/* Thread-local storage class of the layer's "this thread is in the core"
 * flag (set by LOCK_TCPIP_CORE; see pbuf_free). */
#ifndef WISP_LWIP_THREAD_LOCAL
#if defined(__GNUC__) || defined(__clang__)
#define WISP_LWIP_THREAD_LOCAL __thread
#else
#error "define WISP_LWIP_THREAD_LOCAL (your compiler's thread-local storage class) in your options header"
#endif
#endif
/** Threads sys_thread_new() can run at once (records of the layer). */
#ifndef WISP_LWIP_MAX_THREADS
#define WISP_LWIP_MAX_THREADS 16
#endif

/* ------------------------------------------------------------ instance */

/** The compat layer's counters (wisp_lwip_get_stats). */
struct wisp_lwip_stats {
    uint32_t tcp_rec_exhausted;  /**< tcp_new / accept refused: no free per-PCB record */
    uint32_t udp_rec_exhausted;  /**< udp_new refused: no free per-PCB record */
    uint32_t thread_exhausted;   /**< sys_thread_new refused: WISP_LWIP_MAX_THREADS running */
    uint32_t dns_rec_exhausted;  /**< dns_gethostbyname refused: no free request record */
};

/** The entropy source of the stack tcpip_init() creates (lwIP's
 *  LWIP_RAND): call before tcpip_init. Host builds default to the unix
 *  port's getrandom(). */
void wisp_lwip_set_rand(uint32_t (*rand_fn)(void *ctx), void *ctx);
/** The stack, stack thread and netconn layer tcpip_init() set up (NULL
 *  before). */
struct wisp_stack *wisp_lwip_stack(void);
struct wisp_tcpip *wisp_lwip_tcpip(void);
struct wisp_netconn_api *wisp_lwip_netconn(void);
/** True when the caller is in the core context (the tcpip thread, or a
 *  thread between LOCK_TCPIP_CORE and UNLOCK_TCPIP_CORE). */
bool wisp_lwip_in_core(void);
/** Counters of the compat layer. */
void wisp_lwip_get_stats(struct wisp_lwip_stats *out);
/** Buffers, PCBs, netconns, sockets and the layer's own records in use
 *  (takes the core lock; not in the core). */
unsigned wisp_lwip_pools_in_use(void);
/** Undo tcpip_init (after every application thread stopped using the
 *  stack -- threads of sys_thread_new should have returned: they are
 *  joined -- and the netifs were removed): sockets, netconn layer, stack
 *  thread, stack. Returns the number of sockets and netconns that were
 *  still open plus the pool elements and records still in use after the
 *  stack's deinit: 0 = everything back at baseline. */
int wisp_lwip_shutdown(void);

/* ----------------------------------------------------------- lwip/sys.h */

typedef struct {
    wisp_sys_sem_t sem;
    u8_t valid;
} sys_sem_t;
typedef struct {
    wisp_sys_mutex_t mutex;
    u8_t valid;
} sys_mutex_t;
typedef struct {
    wisp_sys_mbox_t mbox;
    u8_t valid;
} sys_mbox_t;
struct wisp_lwip_thread;
typedef struct wisp_lwip_thread *sys_thread_t;
typedef void (*lwip_thread_fn)(void *arg);

/** lwIP's "timed out" result of the sys_arch_*_wait / fetch calls. */
#define SYS_ARCH_TIMEOUT 0xffffffffUL
#define SYS_MBOX_EMPTY SYS_ARCH_TIMEOUT

err_t sys_sem_new(sys_sem_t *sem, u8_t count);
void sys_sem_signal(sys_sem_t *sem);
/** Wait (timeout ms, 0 = forever, as lwIP): the time waited in ms, or
 *  SYS_ARCH_TIMEOUT. */
u32_t sys_arch_sem_wait(sys_sem_t *sem, u32_t timeout);
void sys_sem_free(sys_sem_t *sem);
#define sys_sem_wait(sem) ((void)sys_arch_sem_wait((sem), 0))
#define sys_sem_valid(sem) (((sem) != NULL) && (sem)->valid)
#define sys_sem_set_invalid(sem) ((sem)->valid = 0)

err_t sys_mutex_new(sys_mutex_t *mutex);
void sys_mutex_lock(sys_mutex_t *mutex);
void sys_mutex_unlock(sys_mutex_t *mutex);
void sys_mutex_free(sys_mutex_t *mutex);
#define sys_mutex_valid(m) (((m) != NULL) && (m)->valid)
#define sys_mutex_set_invalid(m) ((m)->valid = 0)

err_t sys_mbox_new(sys_mbox_t *mbox, int size);
void sys_mbox_post(sys_mbox_t *mbox, void *msg);
err_t sys_mbox_trypost(sys_mbox_t *mbox, void *msg);
#define sys_mbox_trypost_fromisr sys_mbox_trypost
/** Fetch (timeout ms, 0 = forever): the time waited, or SYS_ARCH_TIMEOUT. */
u32_t sys_arch_mbox_fetch(sys_mbox_t *mbox, void **msg, u32_t timeout);
/** 0, or SYS_MBOX_EMPTY. */
u32_t sys_arch_mbox_tryfetch(sys_mbox_t *mbox, void **msg);
void sys_mbox_free(sys_mbox_t *mbox);
#define sys_mbox_fetch(mbox, msg) ((void)sys_arch_mbox_fetch((mbox), (msg), 0))
#define sys_mbox_tryfetch(mbox, msg) sys_arch_mbox_tryfetch(mbox, msg)
#define sys_mbox_valid(m) (((m) != NULL) && (m)->valid)
#define sys_mbox_set_invalid(m) ((m)->valid = 0)

/** A thread running thread(arg); stacksize in bytes (0 = the port's
 *  default), prio the port's scale. NULL when none can be made (lwIP's
 *  ports assert instead). The thread's record is reused once it returned. */
sys_thread_t sys_thread_new(const char *name, lwip_thread_fn thread, void *arg, int stacksize, int prio);
/** sys_msleep / sys_now: wisp_sys_sleep_ms / wisp_sys_now_ms (lwip_compat.h). */

/** SYS_ARCH_PROTECT: a process-wide recursive critical section (lwIP's
 *  "protect" level; use sparingly, it is a mutex here). */
typedef int sys_prot_t;
sys_prot_t sys_arch_protect(void);
void sys_arch_unprotect(sys_prot_t pval);
#define SYS_ARCH_DECL_PROTECT(lev) sys_prot_t lev
#define SYS_ARCH_PROTECT(lev) ((lev) = sys_arch_protect())
#define SYS_ARCH_UNPROTECT(lev) sys_arch_unprotect(lev)

/* --------------------------------------------------------- lwip/pbuf.h */

typedef enum {
    PBUF_TRANSPORT = WISP_LAYER_TRANSPORT,
    PBUF_IP = WISP_LAYER_IP,
    PBUF_LINK = WISP_LAYER_LINK,
    PBUF_RAW_TX = WISP_LAYER_LINK,
    PBUF_RAW = WISP_LAYER_RAW
} pbuf_layer;
typedef enum { PBUF_RAM = 0, PBUF_ROM, PBUF_REF, PBUF_POOL } pbuf_type;
#define PBUF_FLAG_LLBCAST 0x08U
#define PBUF_FLAG_LLMCAST 0x10U

/** Allocate (core context). PBUF_RAM: one contiguous buffer, at most
 *  WISP_PBUF_BLOCK_SIZE with the layer's headroom (NULL beyond: wisp has
 *  no heap); PBUF_POOL: a chain of blocks; PBUF_REF / PBUF_ROM: header
 *  only, set p->payload. */
struct pbuf *pbuf_alloc(pbuf_layer layer, u16_t length, pbuf_type type);
/** Drop a reference to the chain: the number of buffers freed. Any thread
 *  (outside the core it takes the core lock). */
u8_t wisp_lwip_pbuf_free(struct pbuf *p);
#undef pbuf_free
#define pbuf_free(p) wisp_lwip_pbuf_free(p)
/** pbuf_ref / pbuf_cat / pbuf_chain: any thread, as pbuf_free. */
void wisp_lwip_pbuf_ref(struct pbuf *p);
void pbuf_cat(struct pbuf *head, struct pbuf *tail);
void pbuf_chain(struct pbuf *head, struct pbuf *tail);
#undef pbuf_ref
#define pbuf_ref(p) wisp_lwip_pbuf_ref(p)
#define pbuf_realloc(p, new_len) wisp_pbuf_trim((p), (new_len))
#define pbuf_add_header(p, n) ((u8_t)(wisp_pbuf_push((p), (u16_t)(n)) != WISP_OK))
#define pbuf_remove_header(p, n) ((u8_t)(wisp_pbuf_pop((p), (u16_t)(n)) != WISP_OK))
#define pbuf_take_at(p, dataptr, len, offset) wisp_pbuf_copy_in((p), (dataptr), (len), (offset))
#define pbuf_try_get_at(p, offset) wisp_pbuf_get_u8((p), (offset))
/** lwIP's pbuf_copy(p_to, p_from): copy the whole of p_from into p_to
 *  (ERR_ARG when it does not fit). */
err_t pbuf_copy(struct pbuf *p_to, const struct pbuf *p_from);
/** A copy of the chain in one new buffer of the given layer and type
 *  (PBUF_RAM: one block), or NULL. */
struct pbuf *pbuf_clone(pbuf_layer l, pbuf_type type, struct pbuf *p);
/** Byte at offset written (nothing past the end). */
void pbuf_put_at(struct pbuf *p, u16_t offset, u8_t data);
/** 0 when the len bytes at offset equal s2, else a nonzero value. */
u16_t pbuf_memcmp(const struct pbuf *p, u16_t offset, const void *s2, u16_t n);

/* ---------------------------------------------------------- lwip/tcp.h */

#define tcp_pcb wisp_tcp_pcb
typedef err_t (*tcp_accept_fn)(void *arg, struct tcp_pcb *newpcb, err_t err);
typedef err_t (*tcp_recv_fn)(void *arg, struct tcp_pcb *tpcb, struct pbuf *p, err_t err);
typedef err_t (*tcp_sent_fn)(void *arg, struct tcp_pcb *tpcb, u16_t len);
typedef err_t (*tcp_poll_fn)(void *arg, struct tcp_pcb *tpcb);
typedef void (*tcp_err_fn)(void *arg, err_t err);
typedef err_t (*tcp_connected_fn)(void *arg, struct tcp_pcb *tpcb, err_t err);

#define TCP_WRITE_FLAG_COPY WISP_TCP_WRITE_COPY
#define TCP_WRITE_FLAG_MORE WISP_TCP_WRITE_MORE
#define TCP_PRIO_MIN 1
#define TCP_PRIO_NORMAL 64
#define TCP_PRIO_MAX 127
enum lwip_ip_addr_type { IPADDR_TYPE_V4 = 0U, IPADDR_TYPE_V6 = 6U, IPADDR_TYPE_ANY = 46U };
#define IP_ANY_TYPE IP_ADDR_ANY

/* lwIP's enum tcp_state (tcpbase.h), with wisp's values */
enum tcp_state {
    CLOSED = WISP_TCP_CLOSED,
    LISTEN = WISP_TCP_LISTEN,
    SYN_SENT = WISP_TCP_SYN_SENT,
    SYN_RCVD = WISP_TCP_SYN_RCVD,
    ESTABLISHED = WISP_TCP_ESTABLISHED,
    FIN_WAIT_1 = WISP_TCP_FIN_WAIT_1,
    FIN_WAIT_2 = WISP_TCP_FIN_WAIT_2,
    CLOSE_WAIT = WISP_TCP_CLOSE_WAIT,
    CLOSING = WISP_TCP_CLOSING,
    LAST_ACK = WISP_TCP_LAST_ACK,
    TIME_WAIT = WISP_TCP_TIME_WAIT
};

struct tcp_pcb *tcp_new(void);
struct tcp_pcb *tcp_new_ip_type(u8_t type);
void tcp_arg(struct tcp_pcb *pcb, void *arg);
#define tcp_bind(pcb, ipaddr, port) wisp_tcp_bind((pcb), (ipaddr), (u16_t)(port))
#define tcp_listen(pcb) tcp_listen_with_backlog((pcb), TCP_DEFAULT_LISTEN_BACKLOG)
struct tcp_pcb *tcp_listen_with_backlog(struct tcp_pcb *pcb, u8_t backlog);
struct tcp_pcb *tcp_listen_with_backlog_and_err(struct tcp_pcb *pcb, u8_t backlog, err_t *err);
void tcp_accept(struct tcp_pcb *pcb, tcp_accept_fn accept);
void tcp_recv(struct tcp_pcb *pcb, tcp_recv_fn recv);
void tcp_sent(struct tcp_pcb *pcb, tcp_sent_fn sent);
void tcp_err(struct tcp_pcb *pcb, tcp_err_fn err);
/** interval: lwIP's coarse-timer units (500 ms each). */
void tcp_poll(struct tcp_pcb *pcb, tcp_poll_fn poll, u8_t interval);
err_t tcp_connect(struct tcp_pcb *pcb, const ip_addr_t *ipaddr, u16_t port, tcp_connected_fn connected);
/** ERR_MEM as lwIP when the data does not fit now or ever (wisp says
 *  ERR_VAL for "never": above the send buffer). */
err_t tcp_write(struct tcp_pcb *pcb, const void *dataptr, u16_t len, u8_t apiflags);
#define tcp_output(pcb) wisp_tcp_output(pcb)
#define tcp_recved(pcb, len) wisp_tcp_recved((pcb), (u16_t)(len))
err_t tcp_close(struct tcp_pcb *pcb);
err_t tcp_shutdown(struct tcp_pcb *pcb, int shut_rx, int shut_tx);
void tcp_abort(struct tcp_pcb *pcb);
#define tcp_sndbuf(pcb) ((u16_t)LWIP_MIN(wisp_tcp_sndbuf(pcb), 0xffffu))
#define tcp_nagle_disable(pcb) wisp_tcp_nodelay((pcb), true)
#define tcp_nagle_enable(pcb) wisp_tcp_nodelay((pcb), false)
#define tcp_setprio(pcb, prio) ((void)(pcb), (void)(prio))
#define tcp_get_tcp_state(pcb) ((enum tcp_state)wisp_tcp_state(pcb))
#define tcp_debug_state_str(s) wisp_tcp_state_str(s)
/** The connection's send MSS. */
u16_t tcp_mss(const struct tcp_pcb *pcb);

/* ---------------------------------------------------------- lwip/udp.h */

#define udp_pcb wisp_udp_pcb
typedef void (*udp_recv_fn)(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port);

struct udp_pcb *udp_new(void);
struct udp_pcb *udp_new_ip_type(u8_t type);
void udp_remove(struct udp_pcb *pcb);
#define udp_bind(pcb, ipaddr, port) wisp_udp_bind((pcb), (ipaddr), (u16_t)(port))
#define udp_connect(pcb, ipaddr, port) wisp_udp_connect((pcb), (ipaddr), (u16_t)(port))
#define udp_disconnect(pcb) wisp_udp_disconnect(pcb)
void udp_recv(struct udp_pcb *pcb, udp_recv_fn recv, void *recv_arg);
#define udp_send(pcb, p) wisp_udp_send((pcb), (p))
#define udp_sendto(pcb, p, dst_ip, dst_port) wisp_udp_sendto((pcb), (p), (dst_ip), (u16_t)(dst_port))

/* -------------------------------------------------------- lwip/netif.h */

#define NETIF_MAX_HWADDR_LEN 6U
#define NETIF_FLAG_UP 0x01U
#define NETIF_FLAG_BROADCAST 0x02U
#define NETIF_FLAG_LINK_UP 0x04U
#define NETIF_FLAG_ETHARP 0x08U
#define NETIF_FLAG_ETHERNET 0x10U
#define NETIF_FLAG_IGMP 0x20U

struct netif;
typedef err_t (*netif_init_fn)(struct netif *netif);
typedef err_t (*netif_input_fn)(struct pbuf *p, struct netif *inp);
typedef err_t (*netif_linkoutput_fn)(struct netif *netif, struct pbuf *p);
typedef void (*netif_status_callback_fn)(struct netif *netif);

/** An interface: lwIP's fields that drivers' init functions and
 *  applications use, plus wisp's. The driver's init function (the
 *  netif_init_fn given to netif_add) sets name, hwaddr, hwaddr_len, mtu,
 *  flags and wisp_dev (the wisp device that carries the frames: a driver
 *  of wisp's, e.g. ports/unix tapdev); linkoutput / output are not used
 *  (wisp's device transmits). The address fields are a copy refreshed by
 *  netif_ip4_addr() & co. */
struct netif {
    struct netif *next;
    void *state;
    netif_input_fn input;
    netif_linkoutput_fn linkoutput;
    netif_status_callback_fn status_callback;
    netif_status_callback_fn link_callback;
    ip4_addr_t ip_addr, netmask, gw;
    u16_t mtu;
    u8_t hwaddr[NETIF_MAX_HWADDR_LEN];
    u8_t hwaddr_len;
    u8_t flags;
    char name[2];
    u8_t num;
    /* wisp */
    struct wisp_dev *wisp_dev;     /**< set by the driver's init function */
    struct wisp_netif wisp_nif;    /**< the wisp interface (netif_add adds it) */
#if WISP_DHCP
    struct wisp_dhcp wisp_dhcp;    /**< dhcp_start's client */
#endif
};

extern struct netif *netif_default;

/** Add netif (core context): calls init(netif), then adds the wisp
 *  interface with what init set. input is kept (drivers call
 *  netif->input(p, netif) = tcpip_input). NULL on failure. */
struct netif *netif_add(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask,
                        const ip4_addr_t *gw, void *state, netif_init_fn init, netif_input_fn input);
struct netif *netif_add_noaddr(struct netif *netif, void *state, netif_init_fn init, netif_input_fn input);
void netif_remove(struct netif *netif);
void netif_set_addr(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask, const ip4_addr_t *gw);
void netif_set_ipaddr(struct netif *netif, const ip4_addr_t *ipaddr);
void netif_set_netmask(struct netif *netif, const ip4_addr_t *netmask);
void netif_set_gw(struct netif *netif, const ip4_addr_t *gw);
void netif_set_default(struct netif *netif);
void netif_set_up(struct netif *netif);
void netif_set_down(struct netif *netif);
void netif_set_link_up(struct netif *netif);
void netif_set_link_down(struct netif *netif);
#define netif_is_up(netif) (((netif)->flags & NETIF_FLAG_UP) ? (u8_t)1 : (u8_t)0)
#define netif_is_link_up(netif) (((netif)->flags & NETIF_FLAG_LINK_UP) ? (u8_t)1 : (u8_t)0)
#define netif_set_status_callback(netif, cb) ((netif)->status_callback = (cb))
#define netif_set_link_callback(netif, cb) ((netif)->link_callback = (cb))
/** The current address / mask / gateway (refreshed from wisp; any thread). */
const ip4_addr_t *netif_ip4_addr(struct netif *netif);
const ip4_addr_t *netif_ip4_netmask(struct netif *netif);
const ip4_addr_t *netif_ip4_gw(struct netif *netif);
#define netif_ip_addr4(netif) netif_ip4_addr(netif)
#define netif_get_index(netif) ((u8_t)wisp_netif_index(&(netif)->wisp_nif))

/* ------------------------------------------------------- lwip/tcpip.h */

typedef void (*tcpip_init_done_fn)(void *arg);
typedef void (*tcpip_callback_fn)(void *ctx);

/** Create the stack and its tcpip thread, then run initfunc(arg) on it
 *  (once the netconn and socket layers are up). */
void tcpip_init(tcpip_init_done_fn initfunc, void *arg);
/** Run function(ctx) on the tcpip thread; ERR_MEM when it cannot be
 *  queued. */
err_t tcpip_callback(tcpip_callback_fn function, void *ctx);
err_t tcpip_try_callback(tcpip_callback_fn function, void *ctx);
/** The input function drivers give netif_add: posts a received frame of
 *  inp (consumed in any case). */
err_t tcpip_input(struct pbuf *p, struct netif *inp);
void wisp_lwip_lock(void);
void wisp_lwip_unlock(void);
#define LOCK_TCPIP_CORE() wisp_lwip_lock()
#define UNLOCK_TCPIP_CORE() wisp_lwip_unlock()

/* ----------------------------------------------------- lwip/netifapi.h
 * lwIP's thread-safe netif calls: each runs its netif_* / dhcp_* call
 * under the core lock (as lwIP does with LWIP_TCPIP_CORE_LOCKING). From
 * application threads, not in the core. */
#ifndef LWIP_NETIF_API
#define LWIP_NETIF_API 1
#endif
err_t netifapi_netif_add(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask,
                         const ip4_addr_t *gw, void *state, netif_init_fn init, netif_input_fn input);
err_t netifapi_netif_set_addr(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask,
                              const ip4_addr_t *gw);
err_t netifapi_netif_remove(struct netif *netif);
err_t netifapi_netif_set_up(struct netif *netif);
err_t netifapi_netif_set_down(struct netif *netif);
err_t netifapi_netif_set_default(struct netif *netif);
err_t netifapi_netif_set_link_up(struct netif *netif);
err_t netifapi_netif_set_link_down(struct netif *netif);
#if LWIP_DHCP
err_t netifapi_dhcp_start(struct netif *netif);
err_t netifapi_dhcp_stop(struct netif *netif);
err_t netifapi_dhcp_release_and_stop(struct netif *netif);
#endif
/** lwIP 1.x/2.0 name of tcpip_callback / tcpip_try_callback. */
#define tcpip_callback_with_block(f, ctx, block) ((block) ? tcpip_callback(f, ctx) : tcpip_try_callback(f, ctx))

/* -------------------------------------------------------- lwip/dhcp.h */

#if LWIP_DHCP
/** Start DHCP on netif (core context). Unlike wisp's default, DISCOVER
 *  goes out at once (no RFC 2131 §4.4.1 random start delay), as lwIP. */
err_t dhcp_start(struct netif *netif);
void dhcp_stop(struct netif *netif);
void dhcp_release_and_stop(struct netif *netif);
err_t dhcp_release(struct netif *netif);
/** 1 when a lease is bound (BOUND, RENEWING, REBINDING); any thread. */
u8_t dhcp_supplied_address(const struct netif *netif);
#endif

/* --------------------------------------------------------- lwip/dns.h */

#if LWIP_DNS
#define DNS_MAX_SERVERS WISP_DNS_MAX_SERVERS
#define DNS_MAX_NAME_LENGTH WISP_DNS_NAME_MAX
typedef void (*dns_found_callback)(const char *name, const ip_addr_t *ipaddr, void *callback_arg);
/** ERR_OK (*addr set: a dotted quad or cached), ERR_INPROGRESS (found is
 *  called later, with NULL on failure), ERR_ARG / ERR_VAL / ERR_MEM.
 *  Core context. */
err_t dns_gethostbyname(const char *hostname, ip_addr_t *addr, dns_found_callback found, void *callback_arg);
void dns_setserver(u8_t numdns, const ip_addr_t *dnsserver);
/** The server (IP_ADDR_ANY when none); core context. */
const ip_addr_t *dns_getserver(u8_t numdns);
#endif

/* ----------------------------------------------------- lwip/sockets.h
 * lwip_* names onto wisp_* (wisp/sockets.h); the standard names (struct
 * sockaddr_in, AF_INET, fd_set, ...) come from wisp/sockets_posix_names.h,
 * included by lwip/sockets.h. */
#define lwip_socket(d, t, p) wisp_socket(d, t, p)
#define lwip_bind(s, n, l) wisp_bind(s, n, l)
#define lwip_listen(s, b) wisp_listen(s, b)
#define lwip_accept(s, a, l) wisp_accept(s, a, l)
#define lwip_connect(s, n, l) wisp_connect(s, n, l)
#define lwip_send(s, d, n, f) wisp_send(s, d, n, f)
#define lwip_sendto(s, d, n, f, t, l) wisp_sendto(s, d, n, f, t, l)
#define lwip_sendmsg(s, m, f) wisp_sendmsg(s, m, f)
#define lwip_recv(s, m, n, f) wisp_recv(s, m, n, f)
#define lwip_recvfrom(s, m, n, f, a, l) wisp_recvfrom(s, m, n, f, a, l)
#define lwip_recvmsg(s, m, f) wisp_recvmsg(s, m, f)
#define lwip_read(s, m, n) wisp_read(s, m, n)
#define lwip_write(s, d, n) wisp_write(s, d, n)
#define lwip_readv(s, i, n) wisp_readv(s, i, n)
#define lwip_writev(s, i, n) wisp_writev(s, i, n)
#define lwip_close(s) wisp_close(s)
#define lwip_shutdown(s, h) wisp_shutdown(s, h)
#define lwip_getsockname(s, n, l) wisp_getsockname(s, n, l)
#define lwip_getpeername(s, n, l) wisp_getpeername(s, n, l)
#define lwip_setsockopt(s, lv, o, v, l) wisp_setsockopt(s, lv, o, v, l)
#define lwip_getsockopt(s, lv, o, v, l) wisp_getsockopt(s, lv, o, v, l)
#define lwip_select(n, r, w, e, t) wisp_select(n, r, w, e, t)
#define lwip_poll(f, n, t) wisp_poll(f, n, t)
#define lwip_fcntl wisp_fcntl
#define lwip_ioctl wisp_ioctl
#define lwip_inet_pton(af, src, dst) wisp_inet_pton(af, src, dst)
#define lwip_inet_ntop(af, src, dst, size) wisp_inet_ntop(af, src, dst, size)
#define lwip_socket_thread_init() ((void)0)
#define lwip_socket_thread_cleanup() ((void)0)

#endif /* WISP_LWIP_APP_H */
