/**
 * @file echo_netconn.c
 * TCP echo on port 7 with the netconn API, in the style of lwIP contrib's
 * tcpecho.c (one client at a time), with receive timeouts so that the
 * service can end when asked to.
 */
#include "lwip/opt.h"
#include "lwip/api.h"
#include "lwip/sys.h"

#include "lwip_style.h"

static void echo_serve(struct netconn *newconn)
{
  struct netbuf *buf;
  void *data;
  u16_t len;
  err_t err;

  netconn_set_recvtimeout(newconn, LWIP_STYLE_POLL_MS);
  for (;;) {
    err = netconn_recv(newconn, &buf);
    if (err == ERR_TIMEOUT) {
      if (lwip_style_stopping()) {
        break;
      }
      continue;
    }
    if (err != ERR_OK) {
      break;                       /* closed by the peer, or reset */
    }
    do {
      netbuf_data(buf, &data, &len);
      err = netconn_write(newconn, data, len, NETCONN_COPY);
    } while (err == ERR_OK && netbuf_next(buf) >= 0);
    netbuf_delete(buf);
    if (err != ERR_OK) {
      break;
    }
  }
  netconn_close(newconn);
  netconn_delete(newconn);
}

void netconn_echo_server(void *arg)
{
  struct netconn *conn, *newconn;
  err_t err;
  LWIP_UNUSED_ARG(arg);

  conn = netconn_new(NETCONN_TCP);
  if (conn == NULL) {
    lwip_style_thread_done();
    return;
  }
  if (netconn_bind(conn, IP_ADDR_ANY, LWIP_STYLE_ECHO_PORT) != ERR_OK || netconn_listen(conn) != ERR_OK) {
    netconn_delete(conn);
    lwip_style_thread_done();
    return;
  }
  netconn_set_recvtimeout(conn, LWIP_STYLE_POLL_MS);
  while (!lwip_style_stopping()) {
    err = netconn_accept(conn, &newconn);
    if (err == ERR_OK) {
      echo_serve(newconn);
    } else if (err != ERR_TIMEOUT) {
      break;
    }
  }
  netconn_close(conn);
  netconn_delete(conn);
  lwip_style_thread_done();
}
