/**
 * @file netconn_server.c
 * The loop of the netconn services (echo_netconn.c, discard_netconn.c):
 * listen on a port, serve one client at a time -- every netbuf received
 * goes to the service's function, then is deleted; the connection is
 * closed when the peer closed or reset it, or the function failed -- with
 * receive and accept timeouts so that the service ends when asked to
 * (lwip_style_stopping). Ends with lwip_style_thread_done.
 */
#include "lwip/opt.h"
#include "lwip/api.h"
#include "lwip/sys.h"

#include "lwip_style.h"

static void serve(struct netconn *newconn, lwip_style_netbuf_fn on_data)
{
  struct netbuf *buf;
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
    err = on_data(newconn, buf);
    netbuf_delete(buf);
    if (err != ERR_OK) {
      break;
    }
  }
  netconn_close(newconn);
  netconn_delete(newconn);
}

void lwip_style_netconn_server(u16_t port, lwip_style_netbuf_fn on_data)
{
  struct netconn *conn, *newconn;
  err_t err;

  conn = netconn_new(NETCONN_TCP);
  if (conn == NULL) {
    lwip_style_thread_done(port == LWIP_STYLE_ECHO_PORT ? "netconn echo" : "netconn discard");
    return;
  }
  if (netconn_bind(conn, IP_ADDR_ANY, port) != ERR_OK || netconn_listen(conn) != ERR_OK) {
    netconn_delete(conn);
    lwip_style_thread_done(port == LWIP_STYLE_ECHO_PORT ? "netconn echo" : "netconn discard");
    return;
  }
  netconn_set_recvtimeout(conn, LWIP_STYLE_POLL_MS);
  while (!lwip_style_stopping()) {
    err = netconn_accept(conn, &newconn);
    if (err == ERR_OK) {
      serve(newconn, on_data);
    } else if (err != ERR_TIMEOUT) {
      break;
    }
  }
  netconn_close(conn);
  netconn_delete(conn);
  lwip_style_thread_done(port == LWIP_STYLE_ECHO_PORT ? "netconn echo" : "netconn discard");
}
