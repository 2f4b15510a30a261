/**
 * @file netconn_echo.c
 * TCP and UDP echo servers written against lwIP's netconn API the way lwIP
 * users write them (the pattern of lwIP contrib's tcpecho.c / udpecho.c).
 * Nothing here is wisp-specific but the include lines: the lwIP shims in
 * include/lwip/ map every name onto wisp's netconn layer (wisp/netconn.h),
 * and the application points wisp_lwip_netconn_api at it.
 * test/unit/test_netconn.c runs both against a second wisp stack.
 */
#include "lwip/opt.h"

#if LWIP_NETCONN

#include "lwip/api.h"
#include "lwip/sys.h"

#include "netconn_echo.h"

void netconn_echo_thread(void *arg)
{
  struct netconn *conn, *newconn;
  err_t err;
  int clients = (arg != NULL) ? *(const int *)arg : -1;

  /* Create a new connection identifier. */
  conn = netconn_new(NETCONN_TCP);
  if (conn == NULL) {
    return;
  }
  /* Bind connection to well known port number 7. */
  err = netconn_bind(conn, IP_ADDR_ANY, 7);
  if (err != ERR_OK) {
    netconn_delete(conn);
    return;
  }
  /* Tell connection to go into listening mode. */
  netconn_listen(conn);

  while (clients != 0) {
    /* Grab new connection. */
    err = netconn_accept(conn, &newconn);
    /* Process the new connection. */
    if (err == ERR_OK) {
      struct netbuf *buf;
      void *data;
      u16_t len;

      while ((err = netconn_recv(newconn, &buf)) == ERR_OK) {
        do {
          netbuf_data(buf, &data, &len);
          err = netconn_write(newconn, data, len, NETCONN_COPY);
          if (err != ERR_OK) {
            break;
          }
        } while (netbuf_next(buf) >= 0);
        netbuf_delete(buf);
      }
      /* Close connection and discard connection identifier. */
      netconn_close(newconn);
      netconn_delete(newconn);
      if (clients > 0) {
        clients--;
      }
    } else if (err != ERR_TIMEOUT && err != ERR_WOULDBLOCK) {
      break;
    }
  }
  netconn_close(conn);
  netconn_delete(conn);
}

void netconn_udp_echo_thread(void *arg)
{
  struct netconn *conn;
  struct netbuf *buf;
  err_t err;
  int datagrams = (arg != NULL) ? *(const int *)arg : -1;

  conn = netconn_new(NETCONN_UDP);
  if (conn == NULL) {
    return;
  }
  if (netconn_bind(conn, IP_ADDR_ANY, 7) != ERR_OK) {
    netconn_delete(conn);
    return;
  }
  while (datagrams != 0) {
    err = netconn_recv(conn, &buf);
    if (err != ERR_OK) {
      break;
    }
    /* no need netconn_connect here, since the netbuf contains the address */
    err = netconn_send(conn, buf);
    netbuf_delete(buf);
    if (err != ERR_OK) {
      break;
    }
    if (datagrams > 0) {
      datagrams--;
    }
  }
  netconn_delete(conn);
}

#endif /* LWIP_NETCONN */
