/**
 * @file discard_netconn.c
 * TCP discard on port 9 (RFC 863) with the netconn API: one client at a
 * time, everything received is dropped; the connection is closed once the
 * peer closed its side (the loop: netconn_server.c). The receive-side
 * service of the benchmark suite (bench/run.sh), the same on both stacks.
 */
#include "lwip/opt.h"
#include "lwip/api.h"
#include "lwip/sys.h"

#include "lwip_style.h"

/* RFC 863: throw away any data received (the loop deletes buf). */
static err_t discard_data(struct netconn *conn, struct netbuf *buf)
{
  LWIP_UNUSED_ARG(conn);
  LWIP_UNUSED_ARG(buf);
  return ERR_OK;
}

void netconn_discard_server(void *arg)
{
  LWIP_UNUSED_ARG(arg);
  lwip_style_netconn_server(LWIP_STYLE_DISCARD_PORT, discard_data);
}
