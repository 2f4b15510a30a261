/**
 * @file priv/sockets.h
 * Private tier: the layout of the structures of wisp/sockets.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/sockets.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_SOCKETS_H
#define WISP_PRIV_SOCKETS_H

#include "wisp/sockets.h"

/** The state flags of a socket (internal): one word, so a call copies
 *  them at once. All of it is written under the table lock. The order is
 *  the one that gives the smallest code (the flags tested or set together
 *  share a byte). */
struct wisp_sock_flags {
    unsigned freeing : 1, connect_failed : 1, reserved : 1, closing : 1;
    unsigned established : 1, connecting : 1, dead : 1, bound : 1;
    unsigned sendevent : 1, errevent : 1, rd_shut : 1, wr_shut : 1;
    unsigned listening : 1, rd_eof : 1, has_last : 1, nonblock : 1;
    unsigned rx_busy : 1, tx_busy : 1; /**< a thread reads / writes it now (one per direction) */
};

/** The socket option flags (struct wisp_sock opts). */
#define WISP_SOCK_O_REUSEADDR 0x01u
#define WISP_SOCK_O_KEEPALIVE 0x02u
#define WISP_SOCK_O_BROADCAST 0x04u
#define WISP_SOCK_O_NODELAY 0x08u
#define WISP_SOCK_O_LINGER 0x10u  /**< SO_LINGER l_onoff */
#define WISP_SOCK_O_CUBIC 0x20u   /**< TCP_CONGESTION: enum wisp_tcp_cc, 0 or 1 */
#define WISP_SOCK_O_SNDTIMEO 0x40u /**< SO_SNDTIMEO is set (its value: the netconn's send timeout) */

/** A socket's SO_SNDBUF / SO_RCVBUF bound: setsockopt clamps it to
 *  WISP_TCP_SND_BUF / WISP_TCP_WND, so 16 bits hold it when both fit
 *  (RAM per socket). */
#if WISP_TCP_SND_BUF <= 0xffff && WISP_TCP_WND <= 0xffff
typedef uint16_t wisp_sock_buf_t;
#else
typedef uint32_t wisp_sock_buf_t;
#endif

/** One socket (internal; public for sizing only). Its type (stream or
 *  datagram) is its netconn's (wisp_netconn_type). */
struct wisp_sock {
    struct wisp_netconn *WISP_PRIV(conn);       /**< NULL: free entry; its api is the stack the socket lives on */
    /* receive state: owned by the thread that holds f.rx_busy */
    union {
        struct wisp_pbuf *p;                    /**< TCP: partly read data chain */
        struct wisp_netbuf *buf;                /**< UDP: datagram kept by MSG_PEEK / FIONREAD */
    } WISP_PRIV(last);                          /**< by type: NULL / NULL = nothing kept */
    uint16_t WISP_PRIV(lastoff);                /**< bytes of last.p already read (< its tot_len) */
    /* everything below: under the table lock; the bytes most calls read
     * or write first (short offsets, short code) */
    uint8_t WISP_PRIV(rx_err);                  /**< pending connection error (next send / recv / SO_ERROR), an errno */
    uint8_t WISP_PRIV(last_err);                /**< last error of any call (wisp_socket_errno), an errno */
    struct wisp_sock_flags WISP_PRIV(f);
    /* the options accept() copies from the listener, tos .. linger_s
     * (SO_RCVTIMEO / SO_SNDTIMEO: the netconn's recv_timeout /
     * send_timeout, not copied here) */
    uint8_t WISP_PRIV(tos), WISP_PRIV(ttl);
    uint8_t WISP_PRIV(keepcnt);                 /**< TCP_KEEPCNT, 1..127 (Linux's bounds) */
    uint8_t WISP_PRIV(opts);                    /**< WISP_SOCK_O_* */
    wisp_sock_buf_t WISP_PRIV(sndbuf), WISP_PRIV(rcvbuf);  /**< TCP: SO_SNDBUF / SO_RCVBUF bound in bytes, 0 = the stack's default */
    uint16_t WISP_PRIV(keepidle_s);             /**< 1..32767 (Linux's bounds) */
    uint16_t WISP_PRIV(keepintvl_s);            /**< 1..32767 (Linux's bounds) */
    uint16_t WISP_PRIV(maxseg);                 /**< TCP_MAXSEG, 0 = none */
    uint16_t WISP_PRIV(linger_s);
    /* end of the inherited options */
    uint32_t WISP_PRIV(rcv_bytes);              /**< bytes announced by RCVPLUS, not yet taken */
    int16_t WISP_PRIV(rcvevent);                /**< items waiting in the netconn (data, connections) */
    uint16_t WISP_PRIV(users);                  /**< threads inside a call on this socket */
};

/** The socket table: descriptors WISP_SOCKET_OFFSET ..
 *  WISP_SOCKET_OFFSET + WISP_SOCKET_COUNT - 1. Allocate it statically or
 *  on the heap; fields are private. */
struct wisp_sockets {
    wisp_sys_mutex_t WISP_PRIV(lock);           /**< the table lock: entries, events, waiters */
    struct wisp_netconn_api *WISP_PRIV(default_api);
    struct wisp_select_wait *WISP_PRIV(waiters);/**< threads in select/poll or waiting for their turn */
    struct wisp_sock WISP_PRIV(sock)[WISP_SOCKET_COUNT];
};

#endif /* WISP_PRIV_SOCKETS_H */
