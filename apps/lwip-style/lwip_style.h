/**
 * @file lwip_style.h
 * A small lwIP application (the way lwIP firmware is written: tcpip_init,
 * netif_add, DHCP or a static address, a netconn service, a socket service
 * with select(), raw-API services) that compiles unchanged against Debian's
 * lwIP 2.1.3 and against wisp's lwIP compatibility layer
 * (include/lwip/ headers, compat/lwip/). Only the network driver and the
 * start/stop checks of each stack differ: one glue file per stack
 * (test/lwip-style/glue_lwip.c, glue_wisp.c). Run by
 * test/interop/test_lwip_compat.sh on both stacks with the same checks.
 *
 * Services: TCP echo on port 7 (netconn, one client at a time, as lwIP
 * contrib's tcpecho), TCP discard on port 9 (netconn, one client at a time), HTTP on port 80 (sockets + select, or poll where
 * the lwIP build has no select), TCP echo on port 7007 and UDP echo on
 * port 7 (raw API, as contrib's tcpecho_raw / udpecho_raw).
 */
#ifndef LWIP_STYLE_H
#define LWIP_STYLE_H

#include "lwip/opt.h"
#include "lwip/err.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "lwip/ip_addr.h"

#define LWIP_STYLE_ECHO_PORT 7
#define LWIP_STYLE_DISCARD_PORT 9
#define LWIP_STYLE_RAW_ECHO_PORT 7007
#define LWIP_STYLE_HTTP_PORT 80
/** How often blocked services look at the stop flag (ms). */
#define LWIP_STYLE_POLL_MS 200

/* services (apps/lwip-style) */
void netconn_echo_server(void *arg);   /* thread */
void netconn_discard_server(void *arg); /* thread: TCP discard on port 9 */
void http_server(void *arg);           /* thread */
void raw_apps_start(void *arg);        /* tcpip thread: arg = sys_sem_t * signalled when done */
void raw_apps_stop(void *arg);         /* tcpip thread: arg = sys_sem_t * signalled when done */
/** A raw-API TCP client run (raw_client_start, on the tcpip thread):
 *  connect to ip:port, send n bytes of http_data_byte(), half-close, read
 *  the peer's one-line reply until it closes. done is signalled at the
 *  end; status 0 = reply complete. */
struct raw_client_req {
  ip_addr_t ip;
  u16_t port;
  u32_t n;
  sys_sem_t done;
  int status;
  u32_t sent;
  char reply[96];
};
void raw_client_start(void *arg);        /* tcpip thread: arg = struct raw_client_req * */
/** A DNS lookup (dns_start, on the tcpip thread; LWIP_DNS builds). */
struct dns_req {
  const char *name;
  ip_addr_t addr;
  sys_sem_t done;
  int status;                             /* 0 = resolved */
};
void dns_start(void *arg);               /* tcpip thread: arg = struct dns_req * */

/** The body byte at offset i of GET /data/<n> (the test recomputes it). */
char http_data_byte(unsigned long i);

/* netconn_server.c: the loop of the netconn services (thread body; ends
 * with lwip_style_thread_done). on_data gets every netbuf received (the
 * loop deletes it); anything but ERR_OK closes the connection. */
struct netconn;
struct netbuf;
typedef err_t (*lwip_style_netbuf_fn)(struct netconn *conn, struct netbuf *buf);
void lwip_style_netconn_server(u16_t port, lwip_style_netbuf_fn on_data);

/* main.c */
int lwip_style_stopping(void);
/** A service thread ends: name (a string literal) goes to main, which waits
 * for all of them after SIGTERM. */
void lwip_style_thread_done(const char *name);

/* the glue of each stack (test/lwip-style/glue_*.c) */
/** Driver init function for netif_add: a TAP interface named by
 *  netif->state. */
err_t lwip_style_netif_init(struct netif *netif);
/** After tcpip_init: check the stack's effective options, print them. 0 ok. */
int lwip_style_port_check(void);
/** Stop the driver's receive thread (before netif_remove). */
void lwip_style_netif_stop(struct netif *netif);
/** After netif_remove: release the driver, check what the stack can
 *  check (pools back at baseline). 0 ok. */
int lwip_style_port_finish(void);

#endif /* LWIP_STYLE_H */
