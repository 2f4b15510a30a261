/**
 * @file glue_wisp.c
 * The lwip-style application's glue on wisp (its lwIP compatibility
 * layer): the TAP driver is wisp's (ports/unix tapdev), run by a receive
 * thread that feeds the stack under LOCK_TCPIP_CORE(); transmission is
 * direct (the thread holding the core writes the frame). At the end the
 * stack is shut down and every pool must be back at its baseline.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "lwip/opt.h"
#include "lwip/sys.h"
#include "lwip/tcpip.h"
#include "lwip/netif.h"
#include "tapdev.h"

#include "lwip_style.h"

static struct wisp_tapdev tap;   /* 64 KB: static */
static volatile int rx_stop;
static sys_sem_t rx_done;

static void rx_thread(void *arg)
{
  (void)arg;
  while (!rx_stop) {
    struct pollfd pfd;
    pfd.fd = tap.fd;
    pfd.events = wisp_tapdev_poll_events(&tap);
    pfd.revents = 0;
    if (poll(&pfd, 1, 100) > 0) {
      LOCK_TCPIP_CORE();
      (void)wisp_tapdev_handle(&tap, pfd.revents);
      UNLOCK_TCPIP_CORE();
    }
  }
  sys_sem_signal(&rx_done);
}

err_t lwip_style_netif_init(struct netif *netif)
{
  static const u8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
  char err[128];
  if (wisp_tapdev_open(&tap, wisp_lwip_stack(), (const char *)netif->state, err, sizeof err) != 0) {
    fprintf(stderr, "lwip-style: %s\n", err);
    return ERR_IF;
  }
  netif->name[0] = 't';
  netif->name[1] = 'p';
  netif->mtu = 1500;
  netif->hwaddr_len = 6;
  memcpy(netif->hwaddr, mac, 6);
  netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
  netif->wisp_dev = &tap.dev;
  if (sys_sem_new(&rx_done, 0) != ERR_OK || sys_thread_new("tap-rx", rx_thread, NULL, 0, 0) == NULL) {
    wisp_tapdev_close(&tap);
    return ERR_MEM;
  }
  return ERR_OK;
}

int lwip_style_port_check(void)
{
  printf("lwip-style: stack wisp (lwIP compatibility layer), TCP_MSS %d, TCP_WND %d, TCP_SND_BUF %d\n",
         (int)TCP_MSS, (int)TCP_WND, (int)TCP_SND_BUF);
  return 0;
}

void lwip_style_netif_stop(struct netif *netif)
{
  (void)netif;
  rx_stop = 1;
  (void)sys_arch_sem_wait(&rx_done, 5000);
}

int lwip_style_port_finish(void)
{
  struct wisp_lwip_stats st;
  unsigned before = wisp_lwip_pools_in_use();
  int left;
  wisp_lwip_get_stats(&st);
  left = wisp_lwip_shutdown();
  wisp_tapdev_close(&tap);
  printf("lwip-style: tap rx %lu frames, tx %lu frames; compat records exhausted tcp %lu udp %lu\n",
         (unsigned long)tap.rx_frames, (unsigned long)tap.tx_frames, (unsigned long)st.tcp_rec_exhausted,
         (unsigned long)st.udp_rec_exhausted);
  if (left != 0) {
    printf("pools: LEAK, %d sockets / netconns still open (%u elements in use before shutdown)\n", left, before);
    return 1;
  }
  printf("pools: all back at baseline (%u elements in use before shutdown: TIME-WAIT and closing)\n", before);
  return 0;
}
