/**
 * @file netconn.h
 * The sequential "netconn" API: blocking (or non-blocking, or timed)
 * connections for application threads, on top of the stack thread of
 * wisp/tcpip.h. Names, types, flags, error codes and semantics follow lwIP
 * 2.1's netconn API; the lwIP spellings (netconn_new, NETCONN_TCP, err_t,
 * struct netbuf, ...) are provided by wisp/lwip_compat.h, which the shims
 * include/lwip/api.h, lwip/netbuf.h, lwip/err.h, ... include, so lwIP
 * netconn code compiles by changing nothing but its include lines.
 *
 * Layers and instances
 *  - struct wisp_netconn_api is the netconn layer of one stack thread: the
 *    netconn pool (WISP_NETCONN_COUNT slots, each with its OS objects made
 *    once at init), the netbuf pool (WISP_NETBUF_COUNT) and a leaf mutex.
 *    No globals: several stacks in one process each get their own. The
 *    lwIP names, which have no stack argument, use the instance that
 *    WISP_LWIP_NETCONN_API names (see wisp/lwip_compat.h).
 *  - Every call enters the core through wisp_tcpip_run(): with core locking
 *    (WISP_TCPIP_CORE_LOCKING 1, the default) the calling thread takes the
 *    core lock and runs the raw API itself -- no message to the stack thread
 *    and no wake-up of it on the send path; with message passing the call
 *    runs on the stack thread (wisp_tcpip_call). Both behave the same.
 *
 * Receive is zero-copy: the raw receive callbacks (core context) post the
 * received pbufs into the netconn's bounded receive mailbox
 * (WISP_NETCONN_RECVMBOX_SIZE): TCP posts the data pbuf chains (a full
 * mailbox refuses the data, the TCP stack keeps it and offers it again as
 * soon as a reader takes an item out -- recv, or with NETCONN_NOAUTORCVD
 * wisp_netconn_tcp_recvd / _consumed -- and every 20 ms meanwhile),
 * UDP posts netbufs holding the datagram and its source (a full mailbox or
 * an empty netbuf pool drops the datagram, counted in
 * wisp_netconn_api_stats.udp_drops). netconn_recv hands those very pbufs to
 * the application inside a netbuf; netbuf_delete frees them (taking the
 * core lock, as pools are core-only). For TCP the receive window is
 * reopened (wisp_tcp_recved) when the application takes the data out of
 * the mailbox, at recv time, as lwIP does (unless NETCONN_NOAUTORCVD, then
 * wisp_netconn_tcp_recvd does it).
 *
 * Blocking, timeouts and wake-up
 *  - recv and accept wait on the mailbox (WISP_NETCONN_RECVMBOX_SIZE slots;
 *    a listener's mailbox holds its accepted connections), write waits on a
 *    per-netconn semaphore the sent / poll / error callbacks signal,
 *    blocking connect on another one signalled by the connected / error
 *    callbacks. Waits happen outside the core lock.
 *  - Timeouts are milliseconds, 0 = wait forever (lwIP's convention):
 *    recv/accept time out with ERR_TIMEOUT, a timed write returns what it
 *    wrote (ERR_OK with *bytes_written) or ERR_WOULDBLOCK when it wrote
 *    nothing. Non-blocking (wisp_netconn_set_nonblocking, or
 *    NETCONN_DONTBLOCK per call) returns ERR_WOULDBLOCK instead of waiting;
 *    a non-blocking connect returns ERR_INPROGRESS.
 *  - Closing (wisp_netconn_close / _shutdown of the receive side) or
 *    deleting a netconn while other threads block in recv / accept /
 *    write / connect on it wakes them: they return ERR_CLSD (shutting the
 *    send side alone wakes a writer, not the readers). wisp_netconn_delete waits until every other
 *    thread has left its calls on the netconn before it frees it, so a
 *    socket layer may delete a netconn another thread is blocked in.
 *  - One reader thread and one writer thread may use a netconn at the same
 *    time (more: concurrent writers are serialised, each write is atomic
 *    with respect to the others; concurrent readers each get whole items).
 *
 * Errors (lwIP 2.1): a connection error reported by the stack (ERR_RST
 * reset, ERR_ABRT aborted, ERR_TIMEOUT retransmissions / SYNs exhausted) is
 * *pending*: it is returned once -- by the next recv (after the data
 * received before it), write, accept or wisp_netconn_err, which clears it
 * -- and the netconn is dead afterwards: recv and write return ERR_CLSD.
 * A recv or write that was already in progress when the error arrived (a
 * thread blocked in it) returns the error as well, even when another
 * thread's call took the pending error first: a reader blocked in recv and
 * a writer blocked in write both wake with ERR_RST (as in lwIP, where both
 * get the error through their own wake-up).
 * After the peer's FIN, recv returns ERR_CLSD (every time; lwIP returns
 * ERR_CLSD once, then ERR_CONN).
 *
 * Events (lwIP's netconn_callback, for select/poll in a socket layer):
 *  - WISP_NETCONN_EVT_RCVPLUS (len): data (len bytes; 0 for the peer's FIN
 *    or an error), a datagram, or -- on a listener -- a connection to
 *    accept was queued. Core context.
 *  - WISP_NETCONN_EVT_RCVMINUS (len): recv / accept took one item. Caller's
 *    thread, no lock held.
 *  - WISP_NETCONN_EVT_SENDPLUS (len): a TCP netconn can be written again
 *    (connect completed; send buffer back above half after a SENDMINUS).
 *    Core context.
 *  - WISP_NETCONN_EVT_SENDMINUS (len): a write left less than half the send
 *    buffer free. Core context.
 *  - WISP_NETCONN_EVT_ERROR (0): a connection error (followed by RCVPLUS
 *    and SENDPLUS, so that select wakes for reading and writing). Core
 *    context.
 *  As in lwIP, an item is posted before its RCVPLUS is signalled, so a
 *  reader on another thread may take it (RCVMINUS) before the RCVPLUS
 *  arrives: count events signed. Other events come before the blocked
 *  caller they concern is woken.
 *  A callback may be called with the core lock held: it must not block,
 *  must not call any netconn function, and any lock it takes must never be
 *  held by a thread while that thread calls a netconn function. Accepted
 *  netconns inherit the listener's callback, and it may be called for them
 *  (RCVPLUS of early data) before netconn_accept returned them. The field
 *  `socket` (lwIP's conn->socket, -1 when unset) is for the socket layer;
 *  the netconn layer never reads it (the socket layer synchronises its
 *  writes and the callback's reads itself).
 *
 * TCP writes: NETCONN_COPY copies into the stack's send buffer and returns
 * when everything is queued. NETCONN_NOCOPY (no COPY flag) references the
 * caller's memory (zero-copy) and a blocking write returns only when all of
 * it has been *acknowledged* by the peer (or the connection failed / was
 * closed, when the stack no longer references it either), so the caller may
 * reuse the memory as soon as it returns -- stronger than lwIP, which
 * leaves the caller to guess when the data was acknowledged. A write that
 * may return early (non-blocking, NETCONN_DONTBLOCK, send timeout set)
 * copies even when NOCOPY is asked for. Closing or deleting a netconn
 * while a NOCOPY write waits for its acknowledgement aborts the connection
 * (RST) so that nothing references the caller's memory any more.
 *
 * Who may call: application threads, never the core context (stack
 * thread, raw API callbacks, inside wisp_tcpip_lock) -- the calls block.
 * A netconn must not be used after wisp_netconn_delete returned.
 */
#ifndef WISP_NETCONN_H
#define WISP_NETCONN_H

#include "wisp/tcpip.h"

struct wisp_netconn;
struct wisp_netconn_api;

/** Connection types (lwIP's enum netconn_type values). */
enum wisp_netconn_type {
    WISP_NETCONN_INVALID = 0,
    WISP_NETCONN_TCP = 0x10,
    WISP_NETCONN_UDP = 0x20,
    WISP_NETCONN_UDPLITE = 0x21,     /**< not supported (wisp_netconn_new returns NULL) */
    WISP_NETCONN_UDPNOCHKSUM = 0x22, /**< accepted as UDP (wisp always sends checksums) */
    WISP_NETCONN_RAW = 0x40          /**< not supported (NULL) */
};
/** The type of a netconn (lwIP's netconn_type(conn)). */
#define wisp_netconn_type(conn) ((conn)->type)

/** Events passed to the callback (lwIP's enum netconn_evt, same order). */
enum wisp_netconn_evt {
    WISP_NETCONN_EVT_RCVPLUS,
    WISP_NETCONN_EVT_RCVMINUS,
    WISP_NETCONN_EVT_SENDPLUS,
    WISP_NETCONN_EVT_SENDMINUS,
    WISP_NETCONN_EVT_ERROR
};

/** lwIP's netconn_callback: void (*)(struct netconn *, enum netconn_evt, u16_t len). */
typedef void (*wisp_netconn_callback)(struct wisp_netconn *conn, enum wisp_netconn_evt evt, uint16_t len);

/* Flags of wisp_netconn_write_partly (lwIP 2.1 values). */
#define WISP_NETCONN_NOFLAG 0x00u
#define WISP_NETCONN_NOCOPY 0x00u     /**< reference the data (see the file comment) */
#define WISP_NETCONN_COPY 0x01u       /**< copy the data into the send buffer */
#define WISP_NETCONN_MORE 0x02u       /**< more data follows: no PSH on the last segment */
#define WISP_NETCONN_DONTBLOCK 0x04u  /**< do not wait (write and recv) */
#define WISP_NETCONN_NOAUTORCVD 0x08u /**< recv: leave the window closed (wisp_netconn_tcp_recvd) */

/** lwIP's netconn_shutdown argument names. */
#define WISP_NETCONN_SHUT_RD 1
#define WISP_NETCONN_SHUT_WR 2
#define WISP_NETCONN_SHUT_RDWR 3

struct wisp_netbuf;

struct wisp_netconn;

/** Counters of one netconn layer (read with wisp_netconn_api_stats). */
struct wisp_netconn_stats {
    uint16_t conns_used, conns_high;  /**< netconn pool use, high-water mark */
    uint16_t bufs_used, bufs_high;    /**< netbuf pool use, high-water mark */
    uint32_t conns_failed;            /**< netconn allocations refused (pool empty) */
    uint32_t bufs_failed;             /**< netbuf allocations refused (pool empty) */
    uint32_t udp_drops;               /**< datagrams dropped: no netbuf or mailbox full */
    uint32_t tcp_refused;             /**< TCP data refused: mailbox full (the stack retries) */
    uint32_t accept_drops;            /**< connections aborted: backlog / pool / mailbox full */
    uint32_t accept_expired;          /**< connections reset after WISP_NETCONN_ACCEPT_MAX_MS unaccepted */
};

struct wisp_netconn_api;

/** The IPv4 any (0.0.0.0) and broadcast addresses as constants (lwIP's
 *  IP_ADDR_ANY / IP_ADDR_BROADCAST point at them). */
extern const wisp_ipaddr_t wisp_netconn_addr_any;
extern const wisp_ipaddr_t wisp_netconn_addr_bcast;

/* ------------------------------------------------------------ instance */

/** Set up the netconn layer of a running (or about to be started) stack
 *  thread: creates every netconn slot's OS objects. WISP_OK, WISP_ERR_MEM
 *  (OS resources; nothing left allocated), WISP_ERR_ARG. Any thread. */
wisp_err_t wisp_netconn_api_init(struct wisp_netconn_api *api, struct wisp_tcpip *tcpip);
/** Release the OS objects. Every netconn must have been deleted and every
 *  netbuf freed (else WISP_ERR_USE and nothing is released). Call it before
 *  wisp_tcpip_stop() or after, but not while other threads use the api. */
wisp_err_t wisp_netconn_api_deinit(struct wisp_netconn_api *api);
/** A snapshot of the counters. */
void wisp_netconn_api_stats(struct wisp_netconn_api *api, struct wisp_netconn_stats *out);
/** Free a pbuf chain received with wisp_netconn_recv_tcp_pbuf (lwIP's
 *  pbuf_free for application threads: takes the core lock). Returns the
 *  number of buffers freed (capped at 255). NULL is accepted. */
uint8_t wisp_netconn_pbuf_free(struct wisp_netconn_api *api, struct wisp_pbuf *p);

/* -------------------------------------------------------- create/delete */

/** lwIP netconn_new_with_proto_and_callback: a new netconn of type with its
 *  PCB, or NULL when the netconn pool or the PCB pool is empty (or the type
 *  is not supported). proto is ignored (raw IP is not supported). */
struct wisp_netconn *wisp_netconn_new_with_proto_and_callback(struct wisp_netconn_api *api,
                                                              enum wisp_netconn_type type, uint8_t proto,
                                                              wisp_netconn_callback callback);
/** lwIP netconn_new / netconn_new_with_callback. */
struct wisp_netconn *wisp_netconn_new(struct wisp_netconn_api *api, enum wisp_netconn_type type);
struct wisp_netconn *wisp_netconn_new_with_callback(struct wisp_netconn_api *api, enum wisp_netconn_type type,
                                                    wisp_netconn_callback callback);
/** Close (TCP: FIN after queued data, as wisp_tcp_close; a listener stops
 *  listening and its not yet accepted connections are reset; UDP: the PCB
 *  is removed), wake every thread blocked on conn (ERR_CLSD), wait until
 *  they left, free the received data still queued and the netconn. NULL
 *  is accepted. ERR_OK. */
wisp_err_t wisp_netconn_delete(struct wisp_netconn *conn);

/* ----------------------------------------------------------- addresses */

/** Bind to a local address (NULL or any = all) and port (0 = ephemeral).
 *  ERR_OK, ERR_USE (port in use), ERR_VAL (not our address, or a TCP
 *  netconn that is no longer closed), ERR_CLSD (closed), ERR_ARG. */
wisp_err_t wisp_netconn_bind(struct wisp_netconn *conn, const wisp_ipaddr_t *addr, uint16_t port);
/** UDP: set the default peer (only its datagrams are received afterwards).
 *  TCP: connect (binds an ephemeral port if unbound). A blocking TCP
 *  connect returns ERR_OK once established, or ERR_RST (refused),
 *  ERR_TIMEOUT (no answer; ERR_HOSTUNREACH / ERR_NETUNREACH when ICMP
 *  unreachable errors came for the SYNs), ERR_CLSD (closed meanwhile);
 *  a connected UDP netconn whose datagram drew an ICMP port or protocol
 *  unreachable returns ERR_REFUSED from its next recv or send (once);
 *  non-blocking:
 *  ERR_INPROGRESS and the outcome comes as SENDPLUS or ERROR event and
 *  from wisp_netconn_err / a second connect (ERR_ALREADY while in
 *  progress, ERR_ISCONN once connected). ERR_RTE (no route), ERR_USE
 *  (4-tuple in use), ERR_VAL (broadcast), ERR_ISCONN (listener). */
wisp_err_t wisp_netconn_connect(struct wisp_netconn *conn, const wisp_ipaddr_t *addr, uint16_t port);
/** UDP: forget the default peer. TCP: ERR_VAL (as lwIP). */
wisp_err_t wisp_netconn_disconnect(struct wisp_netconn *conn);
/** Local (local != 0) or remote address and port. ERR_CONN when there is
 *  no remote (not connected) or no PCB any more. */
wisp_err_t wisp_netconn_getaddr(struct wisp_netconn *conn, wisp_ipaddr_t *addr, uint16_t *port, uint8_t local);
#define wisp_netconn_peer(c, i, p) wisp_netconn_getaddr(c, i, p, 0)
#define wisp_netconn_addr(c, i, p) wisp_netconn_getaddr(c, i, p, 1)

/* ------------------------------------------------------------- listen */

/** Turn a TCP netconn into a listener. backlog (1..255, 0 taken as 1) bounds
 *  both the connections waiting for netconn_accept (also capped at
 *  WISP_NETCONN_RECVMBOX_SIZE - 1) and the listener's embryonic connections.
 *  While the backlog is full the listener drops
 *  new SYNs and the handshake's final ACK, leaving the connection in the
 *  SYN queue until there is room (wisp_tcp_accept_ready; counted in
 *  tcp.listen.full), as Linux does: no completed handshake is reset for
 *  want of room. accept_drops counts the connections still aborted (the
 *  listener closing, no free netconn). A connection
 *  that waits for netconn_accept longer than WISP_NETCONN_ACCEPT_MAX_MS
 *  is reset (its PCB freed; counted in accept_expired); it stays queued
 *  and accept still returns it, dead: its first call reports ERR_ABRT
 *  (its netconn is freed by the application's delete, or with the
 *  listener's). Listening again
 *  updates the backlog. ERR_OK, ERR_ARG (not TCP), ERR_CONN (connecting
 *  or connected), ERR_VAL (PCB not closed), ERR_MEM (no listener PCB),
 *  ERR_CLSD. */
wisp_err_t wisp_netconn_listen_with_backlog(struct wisp_netconn *conn, uint8_t backlog);
/** Listen with the largest backlog (255), as lwIP's netconn_listen. */
wisp_err_t wisp_netconn_listen(struct wisp_netconn *conn);
/** Wait for a connection (recv timeout applies: ERR_TIMEOUT; non-blocking:
 *  ERR_WOULDBLOCK) and return it in *new_conn (NULL on error). ERR_CLSD
 *  when conn is not a listener or was closed (also when closed while
 *  waiting), a pending error if any, ERR_ARG for NULL arguments. */
wisp_err_t wisp_netconn_accept(struct wisp_netconn *conn, struct wisp_netconn **new_conn);

/* ------------------------------------------------------------ receive */

/** Receive one item as a netbuf (*new_buf, NULL on error) that the caller
 *  frees with wisp_netbuf_delete. TCP: one received data chain (the
 *  netbuf has no address); UDP: one datagram with its source address and
 *  port (netbuf_fromaddr / netbuf_fromport). Waits (recv timeout:
 *  ERR_TIMEOUT; non-blocking: ERR_WOULDBLOCK). ERR_CLSD after the peer's
 *  FIN, after close / shutdown(RD), and when woken by a close or delete;
 *  a pending error once (see the file comment); ERR_MEM when the netbuf
 *  pool is empty (TCP; the data stays queued); ERR_CONN on a listener;
 *  ERR_ARG. */
wisp_err_t wisp_netconn_recv(struct wisp_netconn *conn, struct wisp_netbuf **new_buf);
/** TCP only (ERR_ARG otherwise): receive one data chain as a pbuf, freed
 *  with wisp_netconn_pbuf_free (lwIP's pbuf_free). */
wisp_err_t wisp_netconn_recv_tcp_pbuf(struct wisp_netconn *conn, struct wisp_pbuf **new_buf);
/** ... with flags: WISP_NETCONN_DONTBLOCK, WISP_NETCONN_NOAUTORCVD. */
wisp_err_t wisp_netconn_recv_tcp_pbuf_flags(struct wisp_netconn *conn, struct wisp_pbuf **new_buf, uint8_t flags);
/** UDP only (ERR_ARG otherwise): wisp_netconn_recv with flags
 *  (WISP_NETCONN_DONTBLOCK). */
wisp_err_t wisp_netconn_recv_udp_raw_netbuf_flags(struct wisp_netconn *conn, struct wisp_netbuf **new_buf,
                                                  uint8_t flags);
/** Reopen the receive window by len bytes (after NOAUTORCVD receives). */
wisp_err_t wisp_netconn_tcp_recvd(struct wisp_netconn *conn, size_t len);

/* --------------------------------------------------------------- send */

/** UDP: send buf's data to buf->addr:buf->port, or to the connected peer
 *  when buf->addr is any. Never blocks; the data is not consumed (the
 *  caller still deletes buf). ERR_OK, ERR_CONN (TCP netconn, or not
 *  connected and no address), ERR_RTE, ERR_MEM, ERR_BUF (empty netbuf),
 *  ERR_CLSD, ERR_ARG. */
wisp_err_t wisp_netconn_send(struct wisp_netconn *conn, struct wisp_netbuf *buf);
/** Set buf->addr / buf->port (when addr != NULL) and send (lwIP). */
wisp_err_t wisp_netconn_sendto(struct wisp_netconn *conn, struct wisp_netbuf *buf, const wisp_ipaddr_t *addr,
                               uint16_t port);
/** TCP: write size bytes (flags: WISP_NETCONN_COPY / NOCOPY, MORE,
 *  DONTBLOCK). Blocking: returns when everything is queued (COPY) or
 *  acknowledged (NOCOPY), waiting for send-buffer space as long as needed.
 *  When the write may return early -- non-blocking netconn, DONTBLOCK, or
 *  a send timeout set -- bytes_written is required (ERR_VAL without it, as
 *  lwIP) and the write returns ERR_OK with the bytes written so far
 *  (possibly fewer than size), or ERR_WOULDBLOCK when none could be
 *  written. *bytes_written is set in every case (0 on error before any
 *  data). ERR_CONN (not connected; a UDP netconn: ERR_VAL), ERR_INPROGRESS
 *  (connect in progress), ERR_CLSD (closed, or closed / deleted while
 *  waiting; data written before stays written), a pending error, ERR_ARG.
 *  size 0: ERR_OK. */
wisp_err_t wisp_netconn_write_partly(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags,
                                     size_t *bytes_written);
/** wisp_netconn_write_partly without bytes_written (blocking writes only). */
wisp_err_t wisp_netconn_write(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags);

/* -------------------------------------------------------------- close */

/** Close both directions: TCP sends FIN after the queued data (the PCB
 *  goes back to the stack, which finishes the close), a listener stops
 *  listening, UDP stops receiving (the PCB is removed). Wakes threads
 *  blocked on conn (ERR_CLSD), without deleting it (lwIP's
 *  netconn_prepare_delete wake-up): the netconn still has to be deleted.
 *  ERR_OK; ERR_CONN (already closed, reset). */
wisp_err_t wisp_netconn_close(struct wisp_netconn *conn);
/** Half-close. shut_rx stops receiving: recv returns ERR_CLSD, blocked
 *  readers wake (TCP and UDP; received data still queued is dropped with
 *  the netconn). shut_tx (TCP) sends FIN after the queued data and wakes a
 *  blocked writer, but not the readers: they keep receiving until the
 *  peer's FIN. Both = close. UDP: shut_tx alone is ERR_CONN (a datagram
 *  socket has no FIN to send). */
wisp_err_t wisp_netconn_shutdown(struct wisp_netconn *conn, uint8_t shut_rx, uint8_t shut_tx);
/** Close with a reset: TCP sends RST now and drops what is queued (the
 *  SO_LINGER {1, 0} close); otherwise as wisp_netconn_close, whose
 *  wake-ups it makes. Not in lwIP. */
wisp_err_t wisp_netconn_abort(struct wisp_netconn *conn);

/* ------------------------------------------------------------ options */

/** Take the pending error (ERR_OK if none) and clear it (lwIP 2.1). */
wisp_err_t wisp_netconn_err(struct wisp_netconn *conn);
/** Receive / accept timeout in ms, 0 = wait forever (the default). */
void wisp_netconn_set_recvtimeout(struct wisp_netconn *conn, uint32_t timeout_ms);
uint32_t wisp_netconn_get_recvtimeout(struct wisp_netconn *conn);
/** Send timeout in ms, 0 = wait forever (the default). */
void wisp_netconn_set_sendtimeout(struct wisp_netconn *conn, uint32_t timeout_ms);
uint32_t wisp_netconn_get_sendtimeout(struct wisp_netconn *conn);
/** Non-blocking mode on/off. */
void wisp_netconn_set_nonblocking(struct wisp_netconn *conn, bool on);
bool wisp_netconn_is_nonblocking(struct wisp_netconn *conn);
/** Priority: DSCP 0..63 of everything the netconn sends (TCP segments, UDP
 *  datagrams; a listener passes it to the connections it accepts).
 *  DSCP >= WISP_EMERG_DSCP_MIN selects the interfaces' emergency transmit
 *  queue. ERR_OK, ERR_VAL (> 63), ERR_CLSD. Not in lwIP. */
wisp_err_t wisp_netconn_set_dscp(struct wisp_netconn *conn, uint8_t dscp);
/** Nagle off (on = true) / on, for TCP (lwIP's tcp_nagle_disable through
 *  the socket layer's TCP_NODELAY). ERR_OK, ERR_VAL (not TCP), ERR_CONN (a
 *  listener: set it on the accepted connections), ERR_CLSD. */
wisp_err_t wisp_netconn_set_nodelay(struct wisp_netconn *conn, bool on);
/** TTL of everything the netconn sends (0 = WISP_IP_DEFAULT_TTL; a
 *  listener passes it to the connections it accepts). lwIP sets
 *  conn->pcb.ip->ttl. ERR_OK, ERR_CLSD. */
wisp_err_t wisp_netconn_set_ttl(struct wisp_netconn *conn, uint8_t ttl);
/** TCP keepalive (RFC 9293 §3.8.4; lwIP's SOF_KEEPALIVE and keep_idle /
 *  keep_intvl / keep_cnt): on/off, idle time and probe interval in ms and
 *  probe count (0 = keep the current value). ERR_OK, ERR_VAL (not TCP),
 *  ERR_CONN (a listener), ERR_CLSD. */
wisp_err_t wisp_netconn_set_keepalive(struct wisp_netconn *conn, bool on, uint32_t idle_ms, uint32_t intvl_ms,
                                      uint32_t cnt);
/** UDP: allow sending to the broadcast address (lwIP's SOF_BROADCAST).
 *  ERR_OK, ERR_VAL (not UDP), ERR_CLSD. */
wisp_err_t wisp_netconn_set_broadcast(struct wisp_netconn *conn, bool on);
/** TCP buffer bounds in bytes (SO_SNDBUF / SO_RCVBUF: wisp_tcp_set_bufs;
 *  0 = unchanged): a writer blocks (or gets ERR_WOULDBLOCK) once sndbuf
 *  bytes are unacknowledged; the window never exceeds rcvbuf bytes
 *  received and not consumed. ERR_OK, ERR_VAL (not TCP), ERR_CONN (a
 *  listener: set them on the accepted connections), ERR_CLSD. */
wisp_err_t wisp_netconn_set_bufs(struct wisp_netconn *conn, uint32_t sndbuf, uint32_t rcvbuf);
/** Cap of the TCP MSS (TCP_MAXSEG: wisp_tcp_set_user_mss; 0 = none).
 *  Errors as wisp_netconn_set_bufs. */
wisp_err_t wisp_netconn_set_maxseg(struct wisp_netconn *conn, uint16_t mss);
/** Congestion control of a TCP connection (TCP_CONGESTION:
 *  wisp_tcp_set_cc, enum wisp_tcp_cc; on a listener: for the connections
 *  it accepts). ERR_OK, ERR_VAL (not TCP, or the algorithm not compiled
 *  in), ERR_CLSD. */
wisp_err_t wisp_netconn_set_cc(struct wisp_netconn *conn, unsigned algo);
/** Statistics of a TCP connection (wisp_tcp_get_info; mss for
 *  TCP_MAXSEG). ERR_OK, ERR_VAL (not TCP), ERR_CONN (a listener),
 *  ERR_CLSD. */
wisp_err_t wisp_netconn_get_tcp_info(struct wisp_netconn *conn, struct wisp_tcp_info *info);

/* ------------------------------------------------- for layers on top */

/** For a layer built on netconn, such as the socket layer, that already
 *  counts the threads inside its calls (and deletes the netconn only after
 *  they all left) and lets one thread at a time write: the netconn skips
 *  its own bookkeeping of both, so a call through the layer costs no
 *  second count and no second lock. Set it before conn is shared; accepted
 *  netconns inherit it from their listener. Any thread. */
void wisp_netconn_set_layered(struct wisp_netconn *conn);
/** wisp_netconn_write_partly on a layered netconn whose layer keeps the
 *  non-blocking mode and the send timeout itself and passes them (non-
 *  blocking as WISP_NETCONN_DONTBLOCK in apiflags; send_timeout_ms 0 =
 *  none; the netconn's own settings are not read): the call takes no
 *  netconn lock, only the core lock. ERR_ARG when conn is not layered. */
wisp_err_t wisp_netconn_write_layered(struct wisp_netconn *conn, const void *dataptr, size_t size, uint8_t apiflags,
                                      uint32_t send_timeout_ms, size_t *bytes_written);
/** Free n received chains (wisp_netconn_recv_tcp_pbuf_flags with
 *  NETCONN_NOAUTORCVD) and reopen the window by len bytes, in one entry
 *  into the core (a reader that copies data out and frees the chains in
 *  batches). Data the receive mailbox refused meanwhile is offered again
 *  at once. The chains are freed in every case. ERR_OK, ERR_ARG, ERR_CLSD
 *  (being deleted). */
wisp_err_t wisp_netconn_tcp_consumed(struct wisp_netconn *conn, struct wisp_pbuf *const *chains, unsigned n,
                                     size_t len);

/* ------------------------------------------------------------- netbufs */

/** A new empty netbuf from the pool, or NULL when it is empty. */
struct wisp_netbuf *wisp_netbuf_new(struct wisp_netconn_api *api);
/** Free the netbuf and its data (NULL accepted). */
void wisp_netbuf_delete(struct wisp_netbuf *buf);
/** Replace the data by a fresh contiguous buffer of size bytes (with room
 *  for the headers in front) and return its payload pointer, or NULL
 *  (transmit budget empty, or size larger than one pbuf block minus the
 *  header room: WISP_PBUF_BLOCK_SIZE - 94 bytes). */
void *wisp_netbuf_alloc(struct wisp_netbuf *buf, uint16_t size);
/** Free the data (the netbuf stays). */
void wisp_netbuf_free(struct wisp_netbuf *buf);
/** Replace the data by a reference to size bytes at dataptr (no copy; the
 *  memory must stay valid until the netbuf is freed or its data replaced;
 *  the stack copies it when it must keep it after send returns). ERR_OK,
 *  ERR_MEM. */
wisp_err_t wisp_netbuf_ref(struct wisp_netbuf *buf, const void *dataptr, uint16_t size);
/** Append tail's data to head and delete tail. */
void wisp_netbuf_chain(struct wisp_netbuf *head, struct wisp_netbuf *tail);
/** Pointer to and length of the current buffer's data. ERR_OK, ERR_BUF
 *  (empty), ERR_ARG. */
wisp_err_t wisp_netbuf_data(struct wisp_netbuf *buf, void **dataptr, uint16_t *len);
/** Move to the next buffer of the chain: -1 when there is none (ptr
 *  unchanged), 1 when the new one is the last, 0 otherwise (lwIP). */
int8_t wisp_netbuf_next(struct wisp_netbuf *buf);
/** Back to the first buffer. */
void wisp_netbuf_first(struct wisp_netbuf *buf);
/** Copy up to len bytes from offset into dataptr; returns the bytes copied. */
uint16_t wisp_netbuf_copy_partial(const struct wisp_netbuf *buf, void *dataptr, uint16_t len, uint16_t offset);
#define wisp_netbuf_copy(buf, dataptr, len) wisp_netbuf_copy_partial(buf, dataptr, len, 0)
/** Copy len bytes from dataptr into the netbuf's data (which must be large
 *  enough: ERR_BUF otherwise), as lwIP's netbuf_take. */
wisp_err_t wisp_netbuf_take(struct wisp_netbuf *buf, const void *dataptr, uint16_t len);
/** Total data length (0 when empty). */
uint16_t wisp_netbuf_len(const struct wisp_netbuf *buf);
#define wisp_netbuf_fromaddr(buf) (&((buf)->addr))
#define wisp_netbuf_fromport(buf) ((buf)->port)

/* the layout of the structures above (private tier) */
#include "wisp/priv/netconn.h"

#endif /* WISP_NETCONN_H */
