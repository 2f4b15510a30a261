/**
 * @file main.c
 * Start-up of the lwip-style application, as lwIP firmware does it:
 * tcpip_init with a done-callback, netif_add with the driver's init
 * function and tcpip_input, netif_set_default / _up / _link_up, DHCP
 * (dhcp_start, waiting for dhcp_supplied_address) or a static address;
 * then the services (threads, and the raw-API ones on the tcpip thread
 * through tcpip_callback). SIGTERM stops the services, removes the
 * interface and lets the glue check the stack (exit status 0 = clean).
 *
 * Options after the address: client=A.B.C.D:PORT:BYTES runs the raw-API
 * TCP client once the services are up (raw_client_start) and prints the
 * peer's reply; resolve=NAME looks NAME up with dns_gethostbyname (builds
 * with LWIP_DNS; with DHCP the lease's DNS server is used).
 *
 * Usage: lwip-style TAP-NAME (A.B.C.D/PREFIX | dhcp) [client=...] [resolve=NAME]
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L /* sigaction() under -std=c99 */
#endif
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/opt.h"
#include "lwip/tcpip.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "lwip/ip_addr.h"
#if LWIP_DHCP
#include "lwip/dhcp.h"
#endif

#include "lwip_style.h"

#define SERVICE_THREADS 3
#define THREADS_STOP_MS 10000

static volatile sig_atomic_t stop_flag;
/* The service threads post their name here when they end. A mailbox, not a
 * semaphore signalled once per thread: lwIP's semaphores are binary (the
 * unix port's count saturates at 1), so two threads ending together would
 * count as one. */
static sys_mbox_t threads_done;
static struct netif tap_netif;

static void on_signal(int sig)
{
  (void)sig;
  stop_flag = 1;
}

int lwip_style_stopping(void)
{
  return stop_flag != 0;
}

void lwip_style_thread_done(const char *name)
{
  sys_mbox_post(&threads_done, (void *)(uintptr_t)name);
}

static void tcpip_init_done(void *arg)
{
  sys_sem_signal((sys_sem_t *)arg);
}

/* "a.b.c.d/p" into address and mask; 0 on success */
static int parse_addr(const char *s, ip4_addr_t *addr, ip4_addr_t *mask)
{
  char buf[32];
  char *slash;
  unsigned long prefix;
  u32_t m;
  if (strlen(s) >= sizeof buf) {
    return -1;
  }
  strcpy(buf, s);
  slash = strchr(buf, '/');
  if (slash == NULL) {
    return -1;
  }
  *slash = '\0';
  prefix = strtoul(slash + 1, NULL, 10);
  if (prefix < 1 || prefix > 32 || !ip4addr_aton(buf, addr)) {
    return -1;
  }
  m = prefix == 32 ? 0xffffffffUL : ~(0xffffffffUL >> prefix);
  ip4_addr_set_u32(mask, lwip_htonl(m));
  return 0;
}

/* client=A.B.C.D:PORT:BYTES: one raw-API client run; 0 when the peer replied */
static int run_client(const char *spec)
{
  static struct raw_client_req req;
  char host[32];
  const char *c1 = strchr(spec, ':');
  const char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
  if (c1 == NULL || c2 == NULL || (size_t)(c1 - spec) >= sizeof host) {
    fprintf(stderr, "lwip-style: bad client=%s\n", spec);
    return -1;
  }
  memcpy(host, spec, (size_t)(c1 - spec));
  host[c1 - spec] = '\0';
  memset(&req, 0, sizeof req);
  if (!ipaddr_aton(host, &req.ip) || sys_sem_new(&req.done, 0) != ERR_OK) {
    return -1;
  }
  req.port = (u16_t)strtoul(c1 + 1, NULL, 10);
  req.n = (u32_t)strtoul(c2 + 1, NULL, 10);
  req.status = -1;
  if (tcpip_callback(raw_client_start, &req) != ERR_OK || sys_arch_sem_wait(&req.done, 30000) == SYS_ARCH_TIMEOUT) {
    printf("lwip-style: raw client: no result\n");
    fflush(stdout);
    return -1;   /* req stays static: a late callback finds valid memory */
  }
  printf("lwip-style: raw client: status %d, sent %lu bytes, reply: %s\n", req.status, (unsigned long)req.sent,
         req.reply);
  fflush(stdout);
  sys_sem_free(&req.done);
  return req.status;
}

/* resolve=NAME: one dns_gethostbyname; 0 when resolved (or no DNS here) */
static int run_resolve(const char *name)
{
  static struct dns_req r;
  char text[16];
  memset(&r, 0, sizeof r);
  r.name = name;
  r.status = -1;
  if (sys_sem_new(&r.done, 0) != ERR_OK) {
    return -1;
  }
  if (tcpip_callback(dns_start, &r) != ERR_OK || sys_arch_sem_wait(&r.done, 20000) == SYS_ARCH_TIMEOUT) {
    printf("lwip-style: resolve %s: no result\n", name);
    fflush(stdout);
    return -1;
  }
  if (r.status == -2) {
    printf("lwip-style: resolve %s: this build has no DNS (LWIP_DNS 0)\n", name);
  } else if (r.status == 0) {
    ipaddr_ntoa_r(&r.addr, text, sizeof text);
    printf("lwip-style: resolved %s %s\n", name, text);
  } else {
    printf("lwip-style: resolve %s: failed\n", name);
  }
  fflush(stdout);
  sys_sem_free(&r.done);
  return r.status == -1 ? -1 : 0;
}

int main(int argc, char **argv)
{
  ip4_addr_t addr, mask, gw;
  sys_sem_t sem;
  int use_dhcp, i, rc = 0;
  u32_t t0;
  char text[16];
  const char *client_arg = NULL, *resolve_arg = NULL;

  if (argc < 3) {
    fprintf(stderr, "usage: %s TAP-NAME (A.B.C.D/PREFIX | dhcp) [client=A.B.C.D:PORT:BYTES] [resolve=NAME]\n",
            argv[0]);
    return 2;
  }
  for (i = 3; i < argc; i++) {
    if (strncmp(argv[i], "client=", 7) == 0) {
      client_arg = argv[i] + 7;
    } else if (strncmp(argv[i], "resolve=", 8) == 0) {
      resolve_arg = argv[i] + 8;
    } else {
      fprintf(stderr, "lwip-style: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  use_dhcp = strcmp(argv[2], "dhcp") == 0;
  IP4_ADDR(&addr, 0, 0, 0, 0);
  IP4_ADDR(&mask, 0, 0, 0, 0);
  IP4_ADDR(&gw, 0, 0, 0, 0);
  if (!use_dhcp && parse_addr(argv[2], &addr, &mask) != 0) {
    fprintf(stderr, "lwip-style: bad address %s\n", argv[2]);
    return 2;
  }
#if !LWIP_DHCP
  if (use_dhcp) {
    fprintf(stderr, "lwip-style: this lwIP build has no DHCP (LWIP_DHCP 0)\n");
    return 3;
  }
#endif
  {
    /* sigaction, not signal(): under strict C99 glibc's signal() has
     * System V semantics (the handler is reset after one delivery), and
     * timeout(1) delivers SIGTERM twice (to the child and to its group):
     * the second one killed the process before its clean stop */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
  }

  if (sys_sem_new(&sem, 0) != ERR_OK || sys_mbox_new(&threads_done, SERVICE_THREADS) != ERR_OK) {
    return 1;
  }
  tcpip_init(tcpip_init_done, &sem);
  sys_sem_wait(&sem);
  if (lwip_style_port_check() != 0) {
    return 1;
  }

  LOCK_TCPIP_CORE();
  if (netif_add(&tap_netif, &addr, &mask, &gw, argv[1], lwip_style_netif_init, tcpip_input) == NULL) {
    UNLOCK_TCPIP_CORE();
    fprintf(stderr, "lwip-style: netif_add failed\n");
    return 1;
  }
  netif_set_default(&tap_netif);
  netif_set_up(&tap_netif);
  netif_set_link_up(&tap_netif);
#if LWIP_DHCP
  if (use_dhcp && dhcp_start(&tap_netif) != ERR_OK) {
    UNLOCK_TCPIP_CORE();
    fprintf(stderr, "lwip-style: dhcp_start failed\n");
    return 1;
  }
#endif
  UNLOCK_TCPIP_CORE();

#if LWIP_DHCP
  if (use_dhcp) {
    int bound = 0;
    for (i = 0; i < 300 && !bound && !stop_flag; i++) {   /* 30 s at most */
      LOCK_TCPIP_CORE();
      bound = dhcp_supplied_address(&tap_netif);
      UNLOCK_TCPIP_CORE();
      if (!bound) {
        sys_msleep(100);
      }
    }
    if (!bound) {
      fprintf(stderr, "lwip-style: no DHCP lease\n");
      return 1;
    }
  }
#endif

  if (sys_thread_new("nc-echo", netconn_echo_server, NULL, 0, 1) == NULL ||
      sys_thread_new("http", http_server, NULL, 0, 1) == NULL ||
      sys_thread_new("nc-discard", netconn_discard_server, NULL, 0, 1) == NULL) {
    fprintf(stderr, "lwip-style: cannot start the service threads\n");
    return 1;
  }
  if (tcpip_callback(raw_apps_start, &sem) != ERR_OK) {
    return 1;
  }
  sys_sem_wait(&sem);

  LOCK_TCPIP_CORE();
  ip4addr_ntoa_r(netif_ip4_addr(&tap_netif), text, sizeof text);
  UNLOCK_TCPIP_CORE();
  printf("lwip-style: ready %s\n", text);
  fflush(stdout);
  if (client_arg != NULL && run_client(client_arg) != 0) {
    rc = 1;
  }
  if (resolve_arg != NULL && run_resolve(resolve_arg) != 0) {
    rc = 1;
  }

  while (!stop_flag) {
    sys_msleep(50);
  }

  printf("lwip-style: stopping\n");
  fflush(stdout);
  if (tcpip_callback(raw_apps_stop, &sem) != ERR_OK || sys_arch_sem_wait(&sem, 5000) == SYS_ARCH_TIMEOUT) {
    fprintf(stderr, "lwip-style: raw services did not stop\n");
    rc = 1;
  }
  /* The threads look at the stop flag every LWIP_STYLE_POLL_MS; all of them
   * get THREADS_STOP_MS together (the raw stop's 5 s plus these 10 s stay
   * under the 20 s test_lwip_compat.sh gives the whole stop). */
  t0 = sys_now();
  for (i = 0; i < SERVICE_THREADS; i++) {
    void *name;
    u32_t spent = sys_now() - t0;
    if (spent >= THREADS_STOP_MS ||
        sys_arch_mbox_fetch(&threads_done, &name, THREADS_STOP_MS - spent) == SYS_ARCH_TIMEOUT) {
      fprintf(stderr, "lwip-style: %d service thread(s) did not stop within %d ms\n", SERVICE_THREADS - i,
              THREADS_STOP_MS);
      rc = 1;
      break;
    }
    printf("lwip-style: service %s stopped\n", (const char *)name);
  }
  LOCK_TCPIP_CORE();
#if LWIP_DHCP
  if (use_dhcp) {
    dhcp_release_and_stop(&tap_netif);
  }
#endif
  netif_set_link_down(&tap_netif);
  netif_set_down(&tap_netif);
  UNLOCK_TCPIP_CORE();
  lwip_style_netif_stop(&tap_netif);
  LOCK_TCPIP_CORE();
  netif_remove(&tap_netif);
  UNLOCK_TCPIP_CORE();
  if (lwip_style_port_finish() != 0) {
    rc = 1;
  }
  printf("lwip-style: stopped, status %d\n", rc);
  return rc;
}
