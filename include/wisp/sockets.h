/**
 * @file sockets.h
 * BSD socket API on top of the netconn API (wisp/netconn.h), with wisp's
 * own prefixed names (wisp_socket, wisp_recv, struct wisp_sockaddr_in,
 * WISP_SOCK_STREAM, WISP_EAGAIN, ...). Programs written against the
 * standard names include wisp/sockets_posix_names.h as well, which maps
 * them onto these (for targets without system socket headers).
 *
 * Layout and values: the structs have the standard layout (struct
 * wisp_sockaddr_in is a struct sockaddr_in: family, port and address in
 * network order, 8 bytes of zero) and every constant has the Linux value
 * (AF_INET 2, SOL_SOCKET 1, SO_RCVTIMEO 20, EAGAIN 11, EINPROGRESS 115,
 * FIONBIO 0x5421, POLLIN 1, ...), so code and captures read the same on the
 * Linux host and on a microcontroller.
 *
 * Descriptors. A descriptor is WISP_SOCKET_OFFSET + an index into the
 * socket table, a struct wisp_sockets the application provides and
 * installs once with wisp_sockets_init(): descriptors are process-wide by
 * the definition of the BSD API, so sockets.c keeps a process-wide pointer
 * to the table (one of the library's two; the other is netdb.c's resolver
 * table, wisp/netdb.h; the core has none). One table serves every stack of the process: wisp_socket()
 * creates a socket on the default netconn layer (struct wisp_netconn_api,
 * one per stack thread) given to wisp_sockets_init(); wisp_socket_on() on
 * any other. select() and poll() accept sockets of different stacks in one
 * call.
 *
 * No socket tax: every call is a direct call of the netconn function in
 * the caller's thread (no extra thread hop; with WISP_TCPIP_CORE_LOCKING
 * there is no message at all), and no second round of bookkeeping: the
 * socket's netconn is layered (wisp_netconn_set_layered), so netconn
 * neither counts the callers nor serialises the writers again, and a
 * send() takes one table-lock round trip in, the core lock, one out -- no
 * more lock traffic than netconn_write. send() hands the caller's buffer
 * to wisp_netconn_write_layered() with NETCONN_COPY, which copies it into
 * the stack's send buffers (the copy netconn makes anyway); recv() copies from
 * the received pbuf chain (netconn_recv_tcp_pbuf_flags) straight into the
 * caller's buffer (the one unavoidable copy), keeping the rest of a partly
 * read chain for the next call; the chains it consumed are freed, and the
 * receive window reopened by the bytes consumed, in one entry into the
 * core per call (NETCONN_NOAUTORCVD, wisp_netconn_tcp_consumed, which also
 * has the stack offer data a full receive mailbox refused). There is no
 * intermediate buffer and
 * no socket-layer thread. UDP datagrams come as netbufs.
 *
 * Errors. Functions return -1 (or NULL) and report a WISP_E* value:
 *  - to the calling thread through WISP_SOCKET_ERRNO_SET (opt.h); by
 *    default that is the C library's errno, which is per thread with
 *    pthreads (so on the Linux host plain `errno` works and has the same
 *    values) and per task with newlib's reentrancy support on an RTOS;
 *    wisp_errno() reads it back;
 *  - and per socket: wisp_socket_errno(fd) is the socket's last error,
 *    whichever thread caused it (for ports without thread-local storage).
 *  Successful calls do not clear errno (POSIX); a pending asynchronous
 *  error (a refused non-blocking connect, a reset) is returned once by
 *  getsockopt(SO_ERROR) and then cleared.
 *  A reset (as Linux): the error is pending once, for whichever comes
 *  first of send() (WISP_ECONNRESET; WISP_EPIPE only after shutdown
 *  (SHUT_WR) or once the error was reported), recv() (the data received
 *  before the reset first, then WISP_ECONNRESET, then 0) and SO_ERROR;
 *  poll() reports POLLERR while it is pending, POLLIN and POLLHUP (and
 *  POLLOUT) from the reset on. A send and a recv blocked in the socket (in
 *  two threads) when the reset arrives both fail with it (a third thread
 *  still waiting for its turn behind one of them is a later call: EPIPE /
 *  0). A send that wrote some bytes before the reset returns their count;
 *  the error goes to the next call.
 *
 * Threads. Every call may be made from any thread except the stack thread
 * and the core context (they would block the core). A socket may be used
 * by several threads at once: typically one reading and one writing
 * (reads and writes do not wait for each other). Two threads reading the
 * same socket at the same time are serialised (the second waits for the
 * first, within its own SO_RCVTIMEO), likewise two writers.
 *
 * close() while another thread is blocked in the same socket (recv,
 * accept, connect, send, select/poll on it, or waiting for its turn): the
 * socket's connection is closed at once (TCP: FIN after the queued data,
 * RST with SO_LINGER {1, 0}), the blocked thread wakes and its call fails with
 * WISP_EBADF -- the descriptor it used no longer exists, which is what any
 * later call with it would report too (select/poll report the descriptor
 * as ready; the call on it then fails with EBADF). The table entry is
 * reused only after every thread has left the socket.
 *
 * Supported: AF_INET; SOCK_STREAM (TCP), SOCK_DGRAM (UDP); options
 * SO_RCVTIMEO, SO_SNDTIMEO, SO_REUSEADDR, SO_KEEPALIVE, SO_RCVBUF,
 * SO_SNDBUF, SO_ERROR, SO_LINGER, SO_TYPE, SO_ACCEPTCONN, SO_BROADCAST
 * (without it, sendto 255.255.255.255 fails with EACCES; subnet-directed
 * broadcasts are not recognised by the socket layer and are sent),
 * TCP_NODELAY, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_MAXSEG,
 * TCP_INFO (getsockopt), TCP_CONGESTION, IP_TOS (the DSCP
 * also picks the transmit queue: DSCP >= WISP_EMERG_DSCP_MIN goes to the
 * emergency queue, see netif.h), IP_TTL; fcntl F_GETFL/F_SETFL
 * (O_NONBLOCK); ioctl FIONBIO, FIONREAD; flags MSG_DONTWAIT, MSG_PEEK,
 * MSG_WAITALL, MSG_MORE, MSG_NOSIGNAL (no signals exist: EPIPE is always
 * returned without one), MSG_TRUNC (recv on datagrams). An accepted socket
 * inherits the listener's options (timeouts, keepalive settings,
 * TCP_NODELAY, SO_LINGER, IP_TOS, IP_TTL, SO_SNDBUF, SO_RCVBUF, TCP_MAXSEG,
 * TCP_CONGESTION),
 * as on BSD and Linux; not O_NONBLOCK (the SYN-ACK, sent before accept,
 * still carries the stack's default window and MSS). SO_REUSEADDR is accepted and reported but changes nothing:
 * wisp always lets a port held only by TIME-WAIT or closing connections
 * be bound again (tcp.h). Not supported
 * (WISP_EAFNOSUPPORT / WISP_EPROTONOSUPPORT / WISP_ENOPROTOOPT /
 * WISP_EOPNOTSUPP): AF_INET6, SOCK_RAW, MSG_OOB, control messages.
 */
#ifndef WISP_SOCKETS_H
#define WISP_SOCKETS_H

#include "wisp/opt.h"
#include "wisp/arch.h"
#include "wisp/tcpip.h"

/* ------------------------------------------------------------ basic types */

typedef uint32_t wisp_socklen_t;     /**< socklen_t */
typedef uint16_t wisp_sa_family_t;   /**< sa_family_t */
typedef uint16_t wisp_in_port_t;     /**< in_port_t (network order in structs) */
typedef uint32_t wisp_in_addr_t;     /**< in_addr_t (network order) */
typedef ptrdiff_t wisp_ssize_t;      /**< ssize_t (same width as size_t) */
typedef unsigned long wisp_nfds_t;   /**< nfds_t */

/* ---------------------------------------------------- address families */

#define WISP_AF_UNSPEC 0
#define WISP_AF_INET 2
#define WISP_PF_UNSPEC WISP_AF_UNSPEC
#define WISP_PF_INET WISP_AF_INET
/** AF_INET6's value, for recognising it (sockets answer
 *  WISP_EAFNOSUPPORT; not addr.h's WISP_AF_INET6 address tag). */
#define WISP_AF_INET6_SOCK 10

#define WISP_SOCK_STREAM 1
#define WISP_SOCK_DGRAM 2
#define WISP_SOCK_RAW 3
/** Flags that may be or-ed into socket()'s type (Linux). */
#define WISP_SOCK_NONBLOCK 04000
#define WISP_SOCK_CLOEXEC 02000000   /**< accepted and ignored (no exec) */

#define WISP_IPPROTO_IP 0
#define WISP_IPPROTO_ICMP 1
#define WISP_IPPROTO_TCP 6
#define WISP_IPPROTO_UDP 17

#define WISP_INADDR_ANY ((wisp_in_addr_t)0x00000000u)
#define WISP_INADDR_BROADCAST ((wisp_in_addr_t)0xffffffffu)
#define WISP_INADDR_NONE ((wisp_in_addr_t)0xffffffffu)
/** 127.0.0.1 in host order (like INADDR_LOOPBACK: use htonl). */
#define WISP_INADDR_LOOPBACK ((wisp_in_addr_t)0x7f000001u)

#define WISP_INET_ADDRSTRLEN 16

/* ------------------------------------------------------------- structs */

struct wisp_in_addr {
    wisp_in_addr_t s_addr;           /**< network order */
};

/** struct sockaddr: 16 bytes. */
struct wisp_sockaddr {
    wisp_sa_family_t sa_family;
    char sa_data[14];
};

/** struct sockaddr_in: 16 bytes, standard layout. */
struct wisp_sockaddr_in {
    wisp_sa_family_t sin_family;     /**< WISP_AF_INET */
    wisp_in_port_t sin_port;         /**< network order */
    struct wisp_in_addr sin_addr;    /**< network order */
    unsigned char sin_zero[8];
};

/** struct sockaddr_storage: 128 bytes, 8-byte aligned. */
struct wisp_sockaddr_storage {
    wisp_sa_family_t ss_family;
    char ss_pad1_[6];
    uint64_t ss_align_;
    char ss_pad2_[112];
};

struct wisp_iovec {
    void *iov_base;
    size_t iov_len;
};

/** struct msghdr (glibc layout). Control messages are not supported:
 *  msg_controllen is set to 0 by recvmsg. */
struct wisp_msghdr {
    void *msg_name;
    wisp_socklen_t msg_namelen;
    struct wisp_iovec *msg_iov;
    size_t msg_iovlen;
    void *msg_control;
    size_t msg_controllen;
    int msg_flags;
};

struct wisp_linger {
    int l_onoff;
    int l_linger;                    /**< seconds */
};

struct wisp_timeval {
    long tv_sec;
    long tv_usec;
};

struct wisp_pollfd {
    int fd;
    short events;
    short revents;
};

/* ---------------------------------------------------- options and flags */

#define WISP_SOL_SOCKET 1
#define WISP_SO_DEBUG 1
#define WISP_SO_REUSEADDR 2
#define WISP_SO_TYPE 3
#define WISP_SO_ERROR 4
#define WISP_SO_DONTROUTE 5
#define WISP_SO_BROADCAST 6
#define WISP_SO_SNDBUF 7
#define WISP_SO_RCVBUF 8
#define WISP_SO_KEEPALIVE 9
#define WISP_SO_OOBINLINE 10
#define WISP_SO_LINGER 13
#define WISP_SO_REUSEPORT 15
#define WISP_SO_RCVLOWAT 18
#define WISP_SO_SNDLOWAT 19
#define WISP_SO_RCVTIMEO 20
#define WISP_SO_SNDTIMEO 21
#define WISP_SO_ACCEPTCONN 30

/* level WISP_IPPROTO_TCP */
#define WISP_TCPOPT_NODELAY 1
#define WISP_TCPOPT_MAXSEG 2
#define WISP_TCPOPT_KEEPIDLE 4          /**< seconds */
#define WISP_TCPOPT_KEEPINTVL 5         /**< seconds */
#define WISP_TCPOPT_KEEPCNT 6
#define WISP_TCPOPT_INFO 11             /**< struct wisp_sock_tcp_info (getsockopt only) */
#define WISP_TCPOPT_CONGESTION 13       /**< congestion control by name: "reno", "cubic" */
#define WISP_TCP_CA_NAME_MAX 16         /**< TCP_CONGESTION name buffer (Linux's TCP_CA_NAME_MAX) */

/** TCP_INFO's struct tcp_info: Linux's layout and units up to
 *  tcpi_total_retrans (104 bytes); a shorter optlen gets the first
 *  optlen bytes (as Linux). Filled: state (Linux TCP_* numbers: 1
 *  ESTABLISHED .. 10 LISTEN, 11 CLOSING), retransmits and backoff
 *  (consecutive RTO retransmissions of the oldest segment), options
 *  (WISP_TCPI_OPT_*), wscale, rto / rtt / rttvar (microseconds), snd_mss
 *  (data bytes per segment), rcv_mss and advmss (the connection's MSS),
 *  pmtu (MSS + 40), unacked (segments in flight, SACKed ones excluded),
 *  snd_ssthresh and snd_cwnd (segments), rcv_space (the receive window),
 *  rcv_ssthresh (the receive buffer), total_retrans (segments
 *  retransmitted). The others are 0. */
struct wisp_sock_tcp_info {
    uint8_t tcpi_state;
    uint8_t tcpi_ca_state;
    uint8_t tcpi_retransmits;
    uint8_t tcpi_probes;
    uint8_t tcpi_backoff;
    uint8_t tcpi_options;
    uint8_t tcpi_wscale;     /**< snd_wscale in the low nibble, rcv_wscale in the high one (Linux bitfields) */
    uint8_t tcpi_flags_;     /**< delivery_rate_app_limited etc.: 0 */
    uint32_t tcpi_rto;
    uint32_t tcpi_ato;
    uint32_t tcpi_snd_mss;
    uint32_t tcpi_rcv_mss;
    uint32_t tcpi_unacked;
    uint32_t tcpi_sacked;
    uint32_t tcpi_lost;
    uint32_t tcpi_retrans;
    uint32_t tcpi_fackets;
    uint32_t tcpi_last_data_sent;
    uint32_t tcpi_last_ack_sent;
    uint32_t tcpi_last_data_recv;
    uint32_t tcpi_last_ack_recv;
    uint32_t tcpi_pmtu;
    uint32_t tcpi_rcv_ssthresh;
    uint32_t tcpi_rtt;
    uint32_t tcpi_rttvar;
    uint32_t tcpi_snd_ssthresh;
    uint32_t tcpi_snd_cwnd;
    uint32_t tcpi_advmss;
    uint32_t tcpi_reordering;
    uint32_t tcpi_rcv_rtt;
    uint32_t tcpi_rcv_space;
    uint32_t tcpi_total_retrans;
};
#define WISP_TCPI_OPT_TIMESTAMPS 1
#define WISP_TCPI_OPT_SACK 2
#define WISP_TCPI_OPT_WSCALE 4

/* level WISP_IPPROTO_IP */
#define WISP_IP_TOS 1
#define WISP_IP_TTL 2

#define WISP_MSG_OOB 0x01
#define WISP_MSG_PEEK 0x02
#define WISP_MSG_DONTROUTE 0x04
#define WISP_MSG_TRUNC 0x20
#define WISP_MSG_DONTWAIT 0x40
#define WISP_MSG_WAITALL 0x100
#define WISP_MSG_NOSIGNAL 0x4000
#define WISP_MSG_MORE 0x8000

#define WISP_SHUT_RD 0
#define WISP_SHUT_WR 1
#define WISP_SHUT_RDWR 2

#define WISP_F_GETFL 3
#define WISP_F_SETFL 4
#define WISP_O_NONBLOCK 04000
#define WISP_O_RDWR 02

#define WISP_FIONREAD 0x541B
#define WISP_FIONBIO 0x5421

#define WISP_POLLIN 0x001
#define WISP_POLLPRI 0x002
#define WISP_POLLOUT 0x004
#define WISP_POLLERR 0x008
#define WISP_POLLHUP 0x010
#define WISP_POLLNVAL 0x020
#define WISP_POLLRDNORM 0x040
#define WISP_POLLRDBAND 0x080
#define WISP_POLLWRNORM 0x100
#define WISP_POLLWRBAND 0x200

/* --------------------------------------------- errno values (Linux's) */

#define WISP_EPERM 1
#define WISP_ENOENT 2
#define WISP_EINTR 4
#define WISP_EIO 5
#define WISP_EBADF 9
#define WISP_EAGAIN 11
#define WISP_EWOULDBLOCK WISP_EAGAIN
#define WISP_ENOMEM 12
#define WISP_EACCES 13
#define WISP_EFAULT 14
#define WISP_EBUSY 16
#define WISP_EEXIST 17
#define WISP_ENODEV 19
#define WISP_EINVAL 22
#define WISP_ENFILE 23
#define WISP_EMFILE 24
#define WISP_ENOSPC 28
#define WISP_EPIPE 32
#define WISP_EDOM 33
#define WISP_ERANGE 34
#define WISP_ENOSYS 38
#define WISP_ENOTSOCK 88
#define WISP_EDESTADDRREQ 89
#define WISP_EMSGSIZE 90
#define WISP_EPROTOTYPE 91
#define WISP_ENOPROTOOPT 92
#define WISP_EPROTONOSUPPORT 93
#define WISP_ESOCKTNOSUPPORT 94
#define WISP_EOPNOTSUPP 95
#define WISP_ENOTSUP WISP_EOPNOTSUPP
#define WISP_EPFNOSUPPORT 96
#define WISP_EAFNOSUPPORT 97
#define WISP_EADDRINUSE 98
#define WISP_EADDRNOTAVAIL 99
#define WISP_ENETDOWN 100
#define WISP_ENETUNREACH 101
#define WISP_ENETRESET 102
#define WISP_ECONNABORTED 103
#define WISP_ECONNRESET 104
#define WISP_ENOBUFS 105
#define WISP_EISCONN 106
#define WISP_ENOTCONN 107
#define WISP_ESHUTDOWN 108
#define WISP_ETIMEDOUT 110
#define WISP_ECONNREFUSED 111
#define WISP_EHOSTDOWN 112
#define WISP_EHOSTUNREACH 113
#define WISP_EALREADY 114
#define WISP_EINPROGRESS 115

/* --------------------------------------------------------------- fd_set */

/** Largest descriptor + 1 that select() handles. */
#define WISP_FD_SETSIZE (WISP_SOCKET_OFFSET + WISP_SOCKET_COUNT)

typedef struct wisp_fd_set {
    uint32_t bits[(WISP_FD_SETSIZE + 31) / 32];
} wisp_fd_set;

/* Descriptors outside 0..WISP_FD_SETSIZE-1 are ignored by the macros. */
#define WISP_FD_VALID_(n) ((n) >= 0 && (n) < WISP_FD_SETSIZE)
#define WISP_FD_SET(n, p) \
    ((void)(WISP_FD_VALID_(n) ? ((p)->bits[(unsigned)(n) / 32u] |= (1u << ((unsigned)(n) % 32u))) : 0u))
#define WISP_FD_CLR(n, p) \
    ((void)(WISP_FD_VALID_(n) ? ((p)->bits[(unsigned)(n) / 32u] &= ~(1u << ((unsigned)(n) % 32u))) : 0u))
#define WISP_FD_ISSET(n, p) \
    (WISP_FD_VALID_(n) ? (((p)->bits[(unsigned)(n) / 32u] >> ((unsigned)(n) % 32u)) & 1u) != 0u : 0)
#define WISP_FD_ZERO(p) memset((p), 0, sizeof(*(p)))

/* -------------------------------------------------------- socket table */

struct wisp_netconn;
struct wisp_netconn_api;
struct wisp_netbuf;
struct wisp_pbuf;
struct wisp_select_wait;

struct wisp_sock;

struct wisp_sockets;

/* ------------------------------------------------------- table set-up */

/** Install tbl as the process's socket table (all entries free) with
 *  default_api (a netconn layer, wisp/netconn.h) as the stack of
 *  wisp_socket(). Call once, before any other
 *  socket call, while no other thread uses sockets. WISP_OK, WISP_ERR_MEM
 *  (OS resources) or WISP_ERR_ALREADY (a table is installed). */
wisp_err_t wisp_sockets_init(struct wisp_sockets *tbl, struct wisp_netconn_api *default_api);
/** Uninstall the table. Returns the number of sockets that were still
 *  open (they are deleted: their netconns closed). Call after every
 *  thread stopped using sockets and before their stack threads stop. */
int wisp_sockets_deinit(void);
/** Number of sockets open (or closing) now. */
int wisp_sockets_in_use(void);

/** socket() on a given netconn layer / stack (wisp_socket uses the
 *  default one). */
int wisp_socket_on(struct wisp_netconn_api *api, int domain, int type, int protocol);
/** The errno value (WISP_E*) for a wisp_err_t, as the socket calls map it
 *  where the context does not decide otherwise (lwIP's err_to_errno):
 *  ERR_MEM ENOMEM, ERR_BUF ENOBUFS, ERR_TIMEOUT ETIMEDOUT, ERR_RTE
 *  EHOSTUNREACH, ERR_INPROGRESS EINPROGRESS, ERR_VAL EINVAL,
 *  ERR_WOULDBLOCK EAGAIN, ERR_USE EADDRINUSE, ERR_ALREADY EALREADY,
 *  ERR_ISCONN EISCONN, ERR_CONN ENOTCONN, ERR_IF ENETDOWN, ERR_ABRT
 *  ECONNABORTED, ERR_RST ECONNRESET, ERR_CLSD ENOTCONN, ERR_ARG EINVAL.
 *  (In context: a receive timeout is EAGAIN, a reset during connect
 *  ECONNREFUSED, a write on a closed connection EPIPE.) */
int wisp_err_to_errno(wisp_err_t err);

/** The calling thread's last socket error (WISP_SOCKET_ERRNO_GET). */
int wisp_errno(void);
/** The last error of any call on socket s (0 = none; -1 for a descriptor
 *  that is not an open socket). Not cleared by successful calls. */
int wisp_socket_errno(int s);

/* ------------------------------------------------------------ the API */
/* Semantics are POSIX's (IEEE Std 1003.1) unless noted. */

/** domain WISP_AF_INET; type WISP_SOCK_STREAM or WISP_SOCK_DGRAM, may be
 *  or-ed with WISP_SOCK_NONBLOCK / WISP_SOCK_CLOEXEC; protocol 0 or the
 *  matching IPPROTO. Errors: EAFNOSUPPORT, EPROTONOSUPPORT, EPROTOTYPE,
 *  EINVAL, EMFILE (table full), ENOBUFS (netconn or PCB pool empty). */
int wisp_socket(int domain, int type, int protocol);
/** EADDRINUSE, EADDRNOTAVAIL (not one of our addresses), EINVAL (already
 *  bound, bad length), EAFNOSUPPORT. */
int wisp_bind(int s, const struct wisp_sockaddr *name, wisp_socklen_t namelen);
/** backlog <= 0 is taken as 1, > 255 as 255. EOPNOTSUPP on datagram
 *  sockets; EINVAL when connected; ENOBUFS (no listener PCB). */
int wisp_listen(int s, int backlog);
/** EINVAL (not listening), EAGAIN (non-blocking, none pending; also after
 *  SO_RCVTIMEO), ECONNABORTED, EMFILE/ENOBUFS (the new connection is then
 *  closed). addr/addrlen may be NULL. The new socket is blocking. */
int wisp_accept(int s, struct wisp_sockaddr *addr, wisp_socklen_t *addrlen);
/** TCP: blocking waits for the handshake (ECONNREFUSED, ETIMEDOUT,
 *  EHOSTUNREACH, ECONNRESET); non-blocking returns EINPROGRESS, then the
 *  socket becomes writable and SO_ERROR tells the outcome; a second call
 *  meanwhile gives EALREADY, after success EISCONN. UDP: sets the peer
 *  (AF_UNSPEC disconnects). */
int wisp_connect(int s, const struct wisp_sockaddr *name, wisp_socklen_t namelen);
/** TCP: blocking sends everything (returns fewer bytes only when
 *  SO_SNDTIMEO expired after some were sent); non-blocking sends what
 *  fits (EAGAIN when nothing does). EPIPE after shutdown(SHUT_WR) or
 *  when the connection is gone, ENOTCONN before connect. UDP: one
 *  datagram; EMSGSIZE above 65507 bytes; EDESTADDRREQ unconnected. */
wisp_ssize_t wisp_send(int s, const void *data, size_t size, int flags);
wisp_ssize_t wisp_sendto(int s, const void *data, size_t size, int flags, const struct wisp_sockaddr *to,
                         wisp_socklen_t tolen);
/** Gather write of msg_iov (TCP: one write of all pieces; UDP: one
 *  datagram). msg_control is ignored. */
wisp_ssize_t wisp_sendmsg(int s, const struct wisp_msghdr *msg, int flags);
/** TCP: returns all the in-order data queued, up to len, however many
 *  segments it came in (with MSG_PEEK: the data of the first queued
 *  chain); waits for at least 1 byte unless non-blocking / MSG_DONTWAIT,
 *  or until SO_RCVTIMEO: EAGAIN; 0 at end
 *  of stream; ECONNRESET / ETIMEDOUT when the connection failed. UDP: one
 *  datagram, the rest of a longer one discarded (MSG_TRUNC in
 *  recvmsg's msg_flags; with the MSG_TRUNC flag the full length is
 *  returned). */
wisp_ssize_t wisp_recv(int s, void *mem, size_t len, int flags);
wisp_ssize_t wisp_recvfrom(int s, void *mem, size_t len, int flags, struct wisp_sockaddr *from,
                           wisp_socklen_t *fromlen);
/** Scatter read into msg_iov; msg_name gets the source (UDP);
 *  msg_controllen is set to 0. */
wisp_ssize_t wisp_recvmsg(int s, struct wisp_msghdr *msg, int flags);
/** recv/send with flags 0. */
wisp_ssize_t wisp_read(int s, void *mem, size_t len);
wisp_ssize_t wisp_write(int s, const void *data, size_t size);
/** recvmsg/sendmsg without address. iovcnt 1..WISP_SOCKET_IOV_MAX. */
wisp_ssize_t wisp_readv(int s, const struct wisp_iovec *iov, int iovcnt);
wisp_ssize_t wisp_writev(int s, const struct wisp_iovec *iov, int iovcnt);
/** SHUT_RD: later reads return 0 (data still arriving is discarded);
 *  SHUT_WR: FIN after queued data; SHUT_RDWR both. ENOTCONN when not
 *  connected. */
int wisp_shutdown(int s, int how);
/** Close the socket (see the file comment for blocked threads). With
 *  SO_LINGER on and a time of 0 a TCP connection is reset; otherwise
 *  close returns at once and queued data is still delivered in the
 *  background (SO_LINGER with a positive time is accepted and treated
 *  like that). EBADF for a descriptor that is not open. */
int wisp_close(int s);
int wisp_getsockname(int s, struct wisp_sockaddr *name, wisp_socklen_t *namelen);
/** ENOTCONN when not connected. */
int wisp_getpeername(int s, struct wisp_sockaddr *name, wisp_socklen_t *namelen);
/** Options: see the file comment. optval is an int (timeouts: struct
 *  wisp_timeval; SO_LINGER: struct wisp_linger); a shorter optlen is
 *  EINVAL, an unknown option ENOPROTOOPT. Values (Linux's semantics):
 *  - SO_SNDBUF (TCP): the value set, clamped to WISP_TCP_MSS ..
 *    WISP_TCP_SND_BUF (no error: Linux clamps too; a negative value is
 *    the maximum), bounds the bytes written and not yet acknowledged: a
 *    blocking send waits, a non-blocking one returns what fitted or
 *    EAGAIN, and poll/select report POLLOUT when half of it is free.
 *  - SO_RCVBUF (TCP): clamped to WISP_TCP_MSS .. WISP_TCP_WND, bounds the
 *    receive window (bytes received and not yet read). Set before
 *    connect it also bounds the SYN's window.
 *  - Both are reported doubled, as Linux does (Linux reserves the second
 *    half for bookkeeping; wisp's bookkeeping lives in its pools): set
 *    8192, read 16384; the default reads 2 * WISP_TCP_SND_BUF / 2 *
 *    WISP_TCP_WND. UDP sockets accept them without effect and report
 *    the largest datagram / the receive mailbox size.
 *  - TCP_MAXSEG: 0 (none) or 88..32767, else EINVAL (Linux); caps the MSS
 *    our SYN announces and the segments we send (set before connect; on
 *    an accepted socket it lowers the send MSS). Reads: the value set
 *    while not connected (else 536, Linux's default), then the data bytes
 *    per segment (MSS less the timestamp option), as Linux's mss_cache.
 *  - TCP_KEEPIDLE / TCP_KEEPINTVL seconds 1..32767, TCP_KEEPCNT 1..127,
 *    else EINVAL (Linux's MAX_TCP_KEEPIDLE / KEEPINTVL / KEEPCNT).
 *  - TCP_INFO (getsockopt only): struct wisp_sock_tcp_info.
 *  - TCP_CONGESTION: the congestion control of the connection by name
 *    ("reno": NewReno, "cubic": CUBIC RFC 9438 when WISP_TCP_CUBIC),
 *    optval a string of optlen bytes (a NUL may end it earlier); an
 *    unknown or not compiled-in name is ENOENT (Linux). Any state; a
 *    listener passes it to the connections it accepts. getsockopt stores
 *    the name NUL-padded to WISP_TCP_CA_NAME_MAX bytes, cut to optlen.
 *  IP_TOS takes the TOS byte (DSCP << 2; the ECN bits are ignored);
 *  IP_TTL 1..255. */
int wisp_setsockopt(int s, int level, int optname, const void *optval, wisp_socklen_t optlen);
int wisp_getsockopt(int s, int level, int optname, void *optval, wisp_socklen_t *optlen);
/** F_GETFL (returns O_RDWR | O_NONBLOCK when non-blocking) and F_SETFL
 *  (only O_NONBLOCK counts; other flags are ignored) with an int
 *  argument. Other commands: EINVAL. */
int wisp_fcntl(int s, int cmd, ...);
/** FIONBIO (int *: non-zero = non-blocking), FIONREAD (int *: bytes
 *  ready to read; for UDP the size of the next datagram). Other requests:
 *  EINVAL. */
int wisp_ioctl(int s, unsigned long request, ...);
/** Wait until a socket in readset is readable (data, end of stream, a
 *  pending connection, an error), one in writeset writable (send space,
 *  a finished non-blocking connect, an error), or one in exceptset has a
 *  pending error; timeout NULL = forever, {0,0} = poll. Returns the number
 *  of bits set, 0 on timeout; EBADF when a set holds a descriptor that is
 *  not an open socket; EINVAL for maxfdp1 < 0 or a negative timeout.
 *  Descriptors >= WISP_FD_SETSIZE are ignored. */
int wisp_select(int maxfdp1, wisp_fd_set *readset, wisp_fd_set *writeset, wisp_fd_set *exceptset,
                struct wisp_timeval *timeout);
/** poll(): events POLLIN/POLLRDNORM, POLLOUT/POLLWRNORM; revents also
 *  POLLERR (pending error), POLLHUP (both directions finished or reset),
 *  POLLNVAL (fd not an open socket). A negative fd is skipped. timeout ms,
 *  < 0 = forever. */
int wisp_poll(struct wisp_pollfd *fds, wisp_nfds_t nfds, int timeout);

/** AF_INET only (EAFNOSUPPORT otherwise): 1 = parsed into dst (struct
 *  wisp_in_addr, network order), 0 = not a dotted quad. */
int wisp_inet_pton(int af, const char *src, void *dst);
/** AF_INET only: dst, or NULL with ENOSPC when size is below 16 bytes
 *  needed for this address, EAFNOSUPPORT for other families. */
const char *wisp_inet_ntop(int af, const void *src, char *dst, wisp_socklen_t size);

/* the layout of the structures above (private tier) */
#include "wisp/priv/sockets.h"

#endif /* WISP_SOCKETS_H */
