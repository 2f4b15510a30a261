/**
 * @file discard_netconn.c
 * TCP discard on port 9 (RFC 863) with the netconn API: one client at a
 * time, everything received is dropped; the connection is closed once the
 * peer closed its side. The receive-side service of the benchmark suite
 * (bench/run.sh), the same on both stacks.
 */
#include "lwip/opt.h"
#include "lwip/api.h"
#include "lwip/sys.h"

#include "lwip_style.h"

static void discard_serve(struct netconn *newconn)
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
    netbuf_delete(buf);
  }
  netconn_close(newconn);
  netconn_delete(newconn);
}

void netconn_discard_server(void *arg)
{
  struct netconn *conn, *newconn;
  err_t err;
  LWIP_UNUSED_ARG(arg);

  conn = netconn_new(NETCONN_TCP);
  if (conn == NULL) {
    lwip_style_thread_done();
    return;
  }
  if (netconn_bind(conn, IP_ADDR_ANY, LWIP_STYLE_DISCARD_PORT) != ERR_OK || netconn_listen(conn) != ERR_OK) {
    netconn_delete(conn);
    lwip_style_thread_done();
    return;
  }
  netconn_set_recvtimeout(conn, LWIP_STYLE_POLL_MS);
  while (!lwip_style_stopping()) {
    err = netconn_accept(conn, &newconn);
    if (err == ERR_OK) {
      discard_serve(newconn);
    } else if (err != ERR_TIMEOUT) {
      break;
    }
  }
  netconn_close(conn);
  netconn_delete(conn);
  lwip_style_thread_done();
}
