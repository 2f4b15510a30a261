/**
 * @file sockets_posix_names.h
 * Opt-in: the standard BSD socket names (socket, bind, recv, struct
 * sockaddr_in, AF_INET, SOCK_STREAM, EAGAIN, FD_SET, poll, ...) mapped onto
 * wisp's prefixed socket API (wisp/sockets.h), so that portable socket code
 * compiles unchanged on a target that has no socket headers of its own
 * (a microcontroller with newlib or picolibc, bare RTOS).
 *
 * It is NOT for systems that have <sys/socket.h>, <netinet/in.h>,
 * <arpa/inet.h>, <poll.h>, <sys/select.h> or <fcntl.h>: it defines the same
 * names (as macros), so do not include those in the same file. On the
 * Linux host a file that wants wisp sockets by the standard names includes
 * only this header for the socket part (test/unit/test_sockets_posix.c
 * does exactly that).
 *
 * How the names are mapped:
 *  - functions by function-like macros (`#define recv(s, m, l, f)
 *    wisp_recv(s, m, l, f)`), so a struct member or a variable named like a
 *    function is left alone; fcntl() and ioctl() are variadic;
 *  - read(), write(), readv(), writev() and close() as well: in a file that
 *    includes this header they work on wisp sockets only (not on files);
 *  - types and struct tags by object-like macros (`struct sockaddr_in` is
 *    `struct wisp_sockaddr_in`, `socklen_t` is `wisp_socklen_t`,
 *    `ssize_t` is `wisp_ssize_t`, `struct timeval` is `struct
 *    wisp_timeval`, `fd_set` is `wisp_fd_set`);
 *  - constants are #undef'ed first and redefined to wisp's values. The
 *    errno names (EAGAIN, EINPROGRESS, ...) therefore get Linux's values
 *    -- the values wisp stores into errno -- even when the C library's
 *    <errno.h> was included earlier with different numbers.
 * Include it LAST, after every C library header: a C library header
 * included afterwards would see the macros (e.g. its own struct timeval
 * would be renamed).
 *
 * Name resolution (getaddrinfo, freeaddrinfo, gai_strerror, gethostbyname,
 * gethostbyname_r, h_errno, struct addrinfo, struct hostent, EAI_*, AI_*)
 * maps onto wisp/netdb.h (do not include <netdb.h> in the same file).
 *
 * Not mapped (no wisp equivalent): AF_INET6 addresses, socketpair,
 * sendfile.
 */
#ifndef WISP_SOCKETS_POSIX_NAMES_H
#define WISP_SOCKETS_POSIX_NAMES_H

#include "wisp/sockets.h"

/* ------------------------------------------------------------ types */
#undef socklen_t
#define socklen_t wisp_socklen_t
#undef sa_family_t
#define sa_family_t wisp_sa_family_t
#undef in_port_t
#define in_port_t wisp_in_port_t
#undef in_addr_t
#define in_addr_t wisp_in_addr_t
#undef ssize_t
#define ssize_t wisp_ssize_t
#undef nfds_t
#define nfds_t wisp_nfds_t
#undef fd_set
#define fd_set wisp_fd_set
#define sockaddr wisp_sockaddr
#define sockaddr_in wisp_sockaddr_in
#define sockaddr_storage wisp_sockaddr_storage
#define in_addr wisp_in_addr
#define iovec wisp_iovec
#define msghdr wisp_msghdr
#define linger wisp_linger
#define timeval wisp_timeval
#define pollfd wisp_pollfd
#define tcp_info wisp_sock_tcp_info

/* -------------------------------------------------------- functions */
#define socket(d, t, p) wisp_socket(d, t, p)
#define bind(s, a, l) wisp_bind(s, a, l)
#define listen(s, b) wisp_listen(s, b)
#define accept(s, a, l) wisp_accept(s, a, l)
#define connect(s, a, l) wisp_connect(s, a, l)
#define send(s, d, l, f) wisp_send(s, d, l, f)
#define recv(s, m, l, f) wisp_recv(s, m, l, f)
#define sendto(s, d, l, f, a, al) wisp_sendto(s, d, l, f, a, al)
#define recvfrom(s, m, l, f, a, al) wisp_recvfrom(s, m, l, f, a, al)
#define sendmsg(s, m, f) wisp_sendmsg(s, m, f)
#define recvmsg(s, m, f) wisp_recvmsg(s, m, f)
#define read(s, m, l) wisp_read(s, m, l)
#define write(s, d, l) wisp_write(s, d, l)
#define readv(s, v, n) wisp_readv(s, v, n)
#define writev(s, v, n) wisp_writev(s, v, n)
#define shutdown(s, h) wisp_shutdown(s, h)
#define close(s) wisp_close(s)
#define getsockname(s, a, l) wisp_getsockname(s, a, l)
#define getpeername(s, a, l) wisp_getpeername(s, a, l)
#define setsockopt(s, lv, o, v, l) wisp_setsockopt(s, lv, o, v, l)
#define getsockopt(s, lv, o, v, l) wisp_getsockopt(s, lv, o, v, l)
#define fcntl(...) wisp_fcntl(__VA_ARGS__)
#define ioctl(...) wisp_ioctl(__VA_ARGS__)
#define select(n, r, w, e, t) wisp_select(n, r, w, e, t)
#define poll(f, n, t) wisp_poll(f, n, t)
#define inet_pton(af, src, dst) wisp_inet_pton(af, src, dst)
#define inet_ntop(af, src, dst, size) wisp_inet_ntop(af, src, dst, size)
#undef htons
#undef ntohs
#undef htonl
#undef ntohl
#define htons(x) wisp_htons(x)
#define ntohs(x) wisp_ntohs(x)
#define htonl(x) wisp_htonl(x)
#define ntohl(x) wisp_ntohl(x)

/* ----------------------------------------------------- fd_set macros */
#undef FD_SETSIZE
#define FD_SETSIZE WISP_FD_SETSIZE
#undef FD_SET
#undef FD_CLR
#undef FD_ISSET
#undef FD_ZERO
#define FD_SET(n, p) WISP_FD_SET(n, p)
#define FD_CLR(n, p) WISP_FD_CLR(n, p)
#define FD_ISSET(n, p) WISP_FD_ISSET(n, p)
#define FD_ZERO(p) WISP_FD_ZERO(p)

/* -------------------------------------------------------- constants */
#undef AF_UNSPEC
#undef AF_INET
#undef AF_INET6
#undef PF_UNSPEC
#undef PF_INET
#undef PF_INET6
#define AF_UNSPEC WISP_AF_UNSPEC
#define AF_INET WISP_AF_INET
#define AF_INET6 WISP_AF_INET6_SOCK
#define PF_UNSPEC WISP_AF_UNSPEC
#define PF_INET WISP_AF_INET
#define PF_INET6 WISP_AF_INET6_SOCK

#undef SOCK_STREAM
#undef SOCK_DGRAM
#undef SOCK_RAW
#undef SOCK_NONBLOCK
#undef SOCK_CLOEXEC
#define SOCK_STREAM WISP_SOCK_STREAM
#define SOCK_DGRAM WISP_SOCK_DGRAM
#define SOCK_RAW WISP_SOCK_RAW
#define SOCK_NONBLOCK WISP_SOCK_NONBLOCK
#define SOCK_CLOEXEC WISP_SOCK_CLOEXEC

#undef IPPROTO_IP
#undef IPPROTO_ICMP
#undef IPPROTO_TCP
#undef IPPROTO_UDP
#define IPPROTO_IP WISP_IPPROTO_IP
#define IPPROTO_ICMP WISP_IPPROTO_ICMP
#define IPPROTO_TCP WISP_IPPROTO_TCP
#define IPPROTO_UDP WISP_IPPROTO_UDP

#undef INADDR_ANY
#undef INADDR_BROADCAST
#undef INADDR_NONE
#undef INADDR_LOOPBACK
#undef INET_ADDRSTRLEN
#define INADDR_ANY WISP_INADDR_ANY
#define INADDR_BROADCAST WISP_INADDR_BROADCAST
#define INADDR_NONE WISP_INADDR_NONE
#define INADDR_LOOPBACK WISP_INADDR_LOOPBACK
#define INET_ADDRSTRLEN WISP_INET_ADDRSTRLEN

#undef SOL_SOCKET
#undef SO_DEBUG
#undef SO_REUSEADDR
#undef SO_TYPE
#undef SO_ERROR
#undef SO_DONTROUTE
#undef SO_BROADCAST
#undef SO_SNDBUF
#undef SO_RCVBUF
#undef SO_KEEPALIVE
#undef SO_OOBINLINE
#undef SO_LINGER
#undef SO_REUSEPORT
#undef SO_RCVLOWAT
#undef SO_SNDLOWAT
#undef SO_RCVTIMEO
#undef SO_SNDTIMEO
#undef SO_ACCEPTCONN
#define SOL_SOCKET WISP_SOL_SOCKET
#define SO_DEBUG WISP_SO_DEBUG
#define SO_REUSEADDR WISP_SO_REUSEADDR
#define SO_TYPE WISP_SO_TYPE
#define SO_ERROR WISP_SO_ERROR
#define SO_DONTROUTE WISP_SO_DONTROUTE
#define SO_BROADCAST WISP_SO_BROADCAST
#define SO_SNDBUF WISP_SO_SNDBUF
#define SO_RCVBUF WISP_SO_RCVBUF
#define SO_KEEPALIVE WISP_SO_KEEPALIVE
#define SO_OOBINLINE WISP_SO_OOBINLINE
#define SO_LINGER WISP_SO_LINGER
#define SO_REUSEPORT WISP_SO_REUSEPORT
#define SO_RCVLOWAT WISP_SO_RCVLOWAT
#define SO_SNDLOWAT WISP_SO_SNDLOWAT
#define SO_RCVTIMEO WISP_SO_RCVTIMEO
#define SO_SNDTIMEO WISP_SO_SNDTIMEO
#define SO_ACCEPTCONN WISP_SO_ACCEPTCONN

#undef TCP_NODELAY
#undef TCP_MAXSEG
#undef TCP_KEEPIDLE
#undef TCP_KEEPINTVL
#undef TCP_KEEPCNT
#define TCP_NODELAY WISP_TCPOPT_NODELAY
#define TCP_MAXSEG WISP_TCPOPT_MAXSEG
#define TCP_KEEPIDLE WISP_TCPOPT_KEEPIDLE
#define TCP_KEEPINTVL WISP_TCPOPT_KEEPINTVL
#define TCP_KEEPCNT WISP_TCPOPT_KEEPCNT
#undef TCP_INFO
#undef TCPI_OPT_TIMESTAMPS
#undef TCPI_OPT_SACK
#undef TCPI_OPT_WSCALE
#define TCP_INFO WISP_TCPOPT_INFO
#undef TCP_CONGESTION
#undef TCP_CA_NAME_MAX
#define TCP_CONGESTION WISP_TCPOPT_CONGESTION
#define TCP_CA_NAME_MAX WISP_TCP_CA_NAME_MAX
#define TCPI_OPT_TIMESTAMPS WISP_TCPI_OPT_TIMESTAMPS
#define TCPI_OPT_SACK WISP_TCPI_OPT_SACK
#define TCPI_OPT_WSCALE WISP_TCPI_OPT_WSCALE

#undef IP_TOS
#undef IP_TTL
#define IP_TOS WISP_IP_TOS
#define IP_TTL WISP_IP_TTL

#undef MSG_OOB
#undef MSG_PEEK
#undef MSG_DONTROUTE
#undef MSG_TRUNC
#undef MSG_DONTWAIT
#undef MSG_WAITALL
#undef MSG_NOSIGNAL
#undef MSG_MORE
#define MSG_OOB WISP_MSG_OOB
#define MSG_PEEK WISP_MSG_PEEK
#define MSG_DONTROUTE WISP_MSG_DONTROUTE
#define MSG_TRUNC WISP_MSG_TRUNC
#define MSG_DONTWAIT WISP_MSG_DONTWAIT
#define MSG_WAITALL WISP_MSG_WAITALL
#define MSG_NOSIGNAL WISP_MSG_NOSIGNAL
#define MSG_MORE WISP_MSG_MORE

#undef SHUT_RD
#undef SHUT_WR
#undef SHUT_RDWR
#define SHUT_RD WISP_SHUT_RD
#define SHUT_WR WISP_SHUT_WR
#define SHUT_RDWR WISP_SHUT_RDWR

#undef F_GETFL
#undef F_SETFL
#undef O_NONBLOCK
#undef O_RDWR
#define F_GETFL WISP_F_GETFL
#define F_SETFL WISP_F_SETFL
#define O_NONBLOCK WISP_O_NONBLOCK
#define O_RDWR WISP_O_RDWR

#undef FIONREAD
#undef FIONBIO
#define FIONREAD WISP_FIONREAD
#define FIONBIO WISP_FIONBIO

#undef POLLIN
#undef POLLPRI
#undef POLLOUT
#undef POLLERR
#undef POLLHUP
#undef POLLNVAL
#undef POLLRDNORM
#undef POLLRDBAND
#undef POLLWRNORM
#undef POLLWRBAND
#define POLLIN WISP_POLLIN
#define POLLPRI WISP_POLLPRI
#define POLLOUT WISP_POLLOUT
#define POLLERR WISP_POLLERR
#define POLLHUP WISP_POLLHUP
#define POLLNVAL WISP_POLLNVAL
#define POLLRDNORM WISP_POLLRDNORM
#define POLLRDBAND WISP_POLLRDBAND
#define POLLWRNORM WISP_POLLWRNORM
#define POLLWRBAND WISP_POLLWRBAND

/* errno names: Linux values, what wisp stores into errno */
#undef EPERM
#undef ENOENT
#undef EINTR
#undef EIO
#undef EBADF
#undef EAGAIN
#undef EWOULDBLOCK
#undef ENOMEM
#undef EACCES
#undef EFAULT
#undef EBUSY
#undef EEXIST
#undef ENODEV
#undef EINVAL
#undef ENFILE
#undef EMFILE
#undef ENOSPC
#undef EPIPE
#undef EDOM
#undef ERANGE
#undef ENOSYS
#undef ENOTSOCK
#undef EDESTADDRREQ
#undef EMSGSIZE
#undef EPROTOTYPE
#undef ENOPROTOOPT
#undef EPROTONOSUPPORT
#undef ESOCKTNOSUPPORT
#undef EOPNOTSUPP
#undef ENOTSUP
#undef EPFNOSUPPORT
#undef EAFNOSUPPORT
#undef EADDRINUSE
#undef EADDRNOTAVAIL
#undef ENETDOWN
#undef ENETUNREACH
#undef ENETRESET
#undef ECONNABORTED
#undef ECONNRESET
#undef ENOBUFS
#undef EISCONN
#undef ENOTCONN
#undef ESHUTDOWN
#undef ETIMEDOUT
#undef ECONNREFUSED
#undef EHOSTDOWN
#undef EHOSTUNREACH
#undef EALREADY
#undef EINPROGRESS
#define EPERM WISP_EPERM
#define ENOENT WISP_ENOENT
#define EINTR WISP_EINTR
#define EIO WISP_EIO
#define EBADF WISP_EBADF
#define EAGAIN WISP_EAGAIN
#define EWOULDBLOCK WISP_EWOULDBLOCK
#define ENOMEM WISP_ENOMEM
#define EACCES WISP_EACCES
#define EFAULT WISP_EFAULT
#define EBUSY WISP_EBUSY
#define EEXIST WISP_EEXIST
#define ENODEV WISP_ENODEV
#define EINVAL WISP_EINVAL
#define ENFILE WISP_ENFILE
#define EMFILE WISP_EMFILE
#define ENOSPC WISP_ENOSPC
#define EPIPE WISP_EPIPE
#define EDOM WISP_EDOM
#define ERANGE WISP_ERANGE
#define ENOSYS WISP_ENOSYS
#define ENOTSOCK WISP_ENOTSOCK
#define EDESTADDRREQ WISP_EDESTADDRREQ
#define EMSGSIZE WISP_EMSGSIZE
#define EPROTOTYPE WISP_EPROTOTYPE
#define ENOPROTOOPT WISP_ENOPROTOOPT
#define EPROTONOSUPPORT WISP_EPROTONOSUPPORT
#define ESOCKTNOSUPPORT WISP_ESOCKTNOSUPPORT
#define EOPNOTSUPP WISP_EOPNOTSUPP
#define ENOTSUP WISP_ENOTSUP
#define EPFNOSUPPORT WISP_EPFNOSUPPORT
#define EAFNOSUPPORT WISP_EAFNOSUPPORT
#define EADDRINUSE WISP_EADDRINUSE
#define EADDRNOTAVAIL WISP_EADDRNOTAVAIL
#define ENETDOWN WISP_ENETDOWN
#define ENETUNREACH WISP_ENETUNREACH
#define ENETRESET WISP_ENETRESET
#define ECONNABORTED WISP_ECONNABORTED
#define ECONNRESET WISP_ECONNRESET
#define ENOBUFS WISP_ENOBUFS
#define EISCONN WISP_EISCONN
#define ENOTCONN WISP_ENOTCONN
#define ESHUTDOWN WISP_ESHUTDOWN
#define ETIMEDOUT WISP_ETIMEDOUT
#define ECONNREFUSED WISP_ECONNREFUSED
#define EHOSTDOWN WISP_EHOSTDOWN
#define EHOSTUNREACH WISP_EHOSTUNREACH
#define EALREADY WISP_EALREADY
#define EINPROGRESS WISP_EINPROGRESS

/* ---------------------------------------- name resolution (netdb.h) */
#include "wisp/netdb.h"
#define addrinfo wisp_addrinfo
#define hostent wisp_hostent
#define getaddrinfo(n, s, h, r) wisp_getaddrinfo(n, s, h, r)
#define freeaddrinfo(a) wisp_freeaddrinfo(a)
#define gai_strerror(e) wisp_gai_strerror(e)
#define gethostbyname(n) wisp_gethostbyname(n)
#define gethostbyname_r(n, r, b, l, res, e) wisp_gethostbyname_r(n, r, b, l, res, e)
#undef h_errno
#define h_errno (wisp_h_errno())
#undef h_addr
#define h_addr h_addr_list[0]

#undef EAI_BADFLAGS
#undef EAI_NONAME
#undef EAI_AGAIN
#undef EAI_FAIL
#undef EAI_FAMILY
#undef EAI_SOCKTYPE
#undef EAI_SERVICE
#undef EAI_MEMORY
#undef EAI_SYSTEM
#undef EAI_OVERFLOW
#define EAI_BADFLAGS WISP_EAI_BADFLAGS
#define EAI_NONAME WISP_EAI_NONAME
#define EAI_AGAIN WISP_EAI_AGAIN
#define EAI_FAIL WISP_EAI_FAIL
#define EAI_FAMILY WISP_EAI_FAMILY
#define EAI_SOCKTYPE WISP_EAI_SOCKTYPE
#define EAI_SERVICE WISP_EAI_SERVICE
#define EAI_MEMORY WISP_EAI_MEMORY
#define EAI_SYSTEM WISP_EAI_SYSTEM
#define EAI_OVERFLOW WISP_EAI_OVERFLOW

#undef AI_PASSIVE
#undef AI_CANONNAME
#undef AI_NUMERICHOST
#undef AI_V4MAPPED
#undef AI_ALL
#undef AI_ADDRCONFIG
#undef AI_NUMERICSERV
#define AI_PASSIVE WISP_AI_PASSIVE
#define AI_CANONNAME WISP_AI_CANONNAME
#define AI_NUMERICHOST WISP_AI_NUMERICHOST
#define AI_V4MAPPED WISP_AI_V4MAPPED
#define AI_ALL WISP_AI_ALL
#define AI_ADDRCONFIG WISP_AI_ADDRCONFIG
#define AI_NUMERICSERV WISP_AI_NUMERICSERV

#undef HOST_NOT_FOUND
#undef TRY_AGAIN
#undef NO_RECOVERY
#undef NO_DATA
#define HOST_NOT_FOUND WISP_HOST_NOT_FOUND
#define TRY_AGAIN WISP_TRY_AGAIN
#define NO_RECOVERY WISP_NO_RECOVERY
#define NO_DATA WISP_NO_DATA

#endif /* WISP_SOCKETS_POSIX_NAMES_H */
