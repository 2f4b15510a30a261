/**
 * @file echo_netconn.c
 * TCP echo on port 7 with the netconn API, in the style of lwIP contrib's
 * tcpecho.c (one client at a time), with receive timeouts so that the
 * service can end when asked to (the loop: netconn_server.c).
 */
#include "lwip/opt.h"
#include "lwip/api.h"
#include "lwip/sys.h"

#include "lwip_style.h"

/* Write back every part of buf; the connection ends on an error. */
static err_t echo_data(struct netconn *conn, struct netbuf *buf)
{
  void *data;
  u16_t len;
  err_t err;

  do {
    netbuf_data(buf, &data, &len);
    err = netconn_write(conn, data, len, NETCONN_COPY);
  } while (err == ERR_OK && netbuf_next(buf) >= 0);
  return err;
}

void netconn_echo_server(void *arg)
{
  LWIP_UNUSED_ARG(arg);
  lwip_style_netconn_server(LWIP_STYLE_ECHO_PORT, echo_data);
}
