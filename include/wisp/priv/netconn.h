/**
 * @file priv/netconn.h
 * Private tier: the layout of the structures of wisp/netconn.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/netconn.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_NETCONN_H
#define WISP_PRIV_NETCONN_H

#include "wisp/netconn.h"

/** A buffer of received data, or of data to send with a UDP netconn
 *  (lwIP's struct netbuf; p, ptr, addr and port are lwIP's fields). */
struct wisp_netbuf {
    struct wisp_pbuf *p;              /**< the whole chain (NULL = empty) */
    struct wisp_pbuf *ptr;            /**< current buffer for netbuf_data / netbuf_next */
    wisp_ipaddr_t addr;               /**< UDP: source (received) or destination (send) */
    uint16_t port;                    /**< UDP: source / destination port */
    /* private (in_use in port's padding: RAM) */
    uint8_t WISP_PRIV(in_use);                   /**< taken (the pool is scanned for a free one) */
    struct wisp_netconn_api *WISP_PRIV(api);     /**< owner, for the frees */
};

/** One netconn. type, socket, callback and pcb are lwIP's field names (for
 *  reading; pcb only in the core context; socket is 16 bits here, an int in
 *  lwIP). The rest is private. Lives in the pool of struct wisp_netconn_api.
 *  44 bytes on a 32-bit target (RAM per connection, issue 9). DSCP and
 *  TTL live in the PCB only: a listener passes its own on to the
 *  connections it accepts (the core copies them), as lwIP does. */
struct wisp_netconn {
    int16_t socket;                   /**< for the socket layer; -1 = none (a slot index, or
                                           -1 - n: n receive events before the socket existed) */
    uint8_t type;                     /**< enum wisp_netconn_type (a byte: RAM per connection) */
    /* ---- private ---- (the bytes first: short loads on Thumb) */
    /* zeroed when the slot is taken (conn_alloc_locked): everything up to api */
    uint8_t WISP_PRIV(layered);                  /**< wisp_netconn_set_layered (set before sharing) */
    uint8_t WISP_PRIV(state);                    /**< core context only: NC_S_* (netconn.c) */
    uint8_t WISP_PRIV(cflags);                   /**< core context only: NC_C_* (netconn.c) */
    uint8_t WISP_PRIV(flags);                    /**< under the api lock: NC_F_* (netconn.c) */
    wisp_err_t WISP_PRIV(pending_err);           /**< under the api lock */
    wisp_netconn_callback callback;
    union {
        struct wisp_tcp_pcb *tcp;     /**< connection or listener (core context only) */
        struct wisp_udp_pcb *udp;
        void *ip;
    } pcb;
    /* under the api lock */
    uint32_t WISP_PRIV(recv_timeout), WISP_PRIV(send_timeout); /**< ms, 0 = forever */
    /* by role: a listener's accept queue, or a connection's wait for accept
     * (a netconn never is both: a listener is never accepted, an accepted
     * one never listens) */
    union {
        struct {
            uint8_t WISP_PRIV(backlog);          /**< under the api lock; <= 255 (netconn.h) */
            uint8_t WISP_PRIV(accept_pending);   /**< under the api lock */
        } WISP_PRIV(l);
        uint16_t WISP_PRIV(accept_polls);        /**< core context only: poll periods spent
                                                      waiting for accept (while unaccepted) */
    } WISP_PRIV(role);
    /* under the api lock: users and the bits share one 16-bit unit, the
     * bytes follow (no padding: RAM per connection) */
    unsigned WISP_PRIV(users) : 11;              /**< threads inside calls on this netconn (< 2048; a
                                                      layered netconn's callers are not counted) */
    unsigned WISP_PRIV(in_use) : 1;
    unsigned WISP_PRIV(unaccepted) : 1;          /**< queued on a listener, not taken by accept yet */
    unsigned WISP_PRIV(sem_lent) : 1;            /**< a waiter uses sem */
    unsigned WISP_PRIV(writing) : 1;             /**< a writer has its turn */
    unsigned WISP_PRIV(wkick) : 1;               /**< a broadcast since the writer's last do_write */
    wisp_err_t WISP_PRIV(connect_result);
    wisp_err_t WISP_PRIV(conn_err);              /**< the connection error the stack reported (kept) */
    uint8_t WISP_PRIV(rx_items);                 /**< short TCP data items in mbox, <= 4 (netconn.c nc_rx_take) */
    /* kept while the slot is free: the slot's OS objects (made once) */
    struct wisp_netconn_api *WISP_PRIV(api);
    wisp_sys_mbox_t WISP_PRIV(mbox);             /**< received items / accepted netconns; the
                                                      netconn's own address is the wake-up message */
    wisp_sys_sem_t WISP_PRIV(sem);               /**< every other wait: writers, connect, delete (netconn.c) */
};

/** The netconn layer of one stack thread. Large (the pools are inside):
 *  allocate it statically or on the heap. All fields are private. */
struct wisp_netconn_api {
    struct wisp_tcpip *WISP_PRIV(tcpip);
    wisp_sys_mutex_t WISP_PRIV(lock);            /**< pools, flags of every netconn (a leaf lock) */
    struct nc_waiter *WISP_PRIV(waiters);        /**< under lock: threads waiting for a broadcast on
                                                      any netconn (netconn.c nc_wait_locked) */
    struct wisp_netconn_stats WISP_PRIV(st);
    uint16_t WISP_PRIV(n_ready);                 /**< slots whose OS objects exist */
    struct wisp_netconn WISP_PRIV(conns)[WISP_NETCONN_COUNT];
    struct wisp_netbuf WISP_PRIV(bufs)[WISP_NETBUF_COUNT];
};

#endif /* WISP_PRIV_NETCONN_H */
