/**
 * @file netconn_echo.h
 * lwIP-style echo servers (apps/examples/netconn_echo.c): thread functions
 * as an lwIP application starts them with sys_thread_new().
 */
#ifndef NETCONN_ECHO_H
#define NETCONN_ECHO_H

/** TCP echo server on port 7. arg: NULL = serve forever, else a pointer to
 *  an int: the number of clients to serve before closing the listener and
 *  returning. */
void netconn_echo_thread(void *arg);

/** UDP echo server on port 7: echoes each datagram to its sender. arg:
 *  NULL = forever, else a pointer to an int: the number of datagrams to
 *  echo before returning. */
void netconn_udp_echo_thread(void *arg);

#endif /* NETCONN_ECHO_H */
