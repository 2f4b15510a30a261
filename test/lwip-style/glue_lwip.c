/**
 * @file glue_lwip.c
 * The lwip-style application's glue on Debian's lwIP 2.1.3 (liblwip-dev):
 * a small TAP driver of our own (Debian's tapif corrupts its heap on
 * frames above ~590 bytes: glibc's <netinet/tcp.h>, which lwIP's
 * posix/inet.h includes, redefines TCP_MSS to 512 after lwIP's options
 * are read, so the library's memp.c sizes PBUF_POOL elements for a 512
 * byte MSS while its pbuf.c fills them for 1460), and a check at start
 * that the options the application was compiled with are the ones the
 * library was built with (a fresh PCB carries the values; the library's
 * PBUF_POOL element size is compared with what the headers say). This
 * driver receives into PBUF_RAM buffers (exactly sized), never PBUF_POOL.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <linux/if_tun.h>

#include "lwip/opt.h"
#include "lwip/sys.h"
#include "lwip/tcpip.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/memp.h"
#include "netif/ethernet.h"

#include "lwip_style.h"

#if TCP_MSS != 1460
#error "TCP_MSS is not the value Debian's liblwip was built with (1460): a system header redefined it?"
#endif

#define FRAME_MAX 1518
/* tcp_alloc: rcv_wnd = TCPWND_MIN16(TCP_WND) (tcp_priv.h) */
#define WND16 ((tcpwnd_size_t)(TCP_WND > 0xffff ? 0xffff : TCP_WND))

static int tap_fd = -1;
static volatile int rx_stop;
static sys_sem_t rx_done;
static unsigned long rx_frames, tx_frames, rx_drops, tx_drops;

static err_t tap_linkoutput(struct netif *netif, struct pbuf *p)
{
  unsigned char buf[FRAME_MAX];
  u16_t n;
  LWIP_UNUSED_ARG(netif);
  if (p->tot_len > sizeof buf) {
    tx_drops++;
    return ERR_BUF;
  }
  n = pbuf_copy_partial(p, buf, p->tot_len, 0);
  if (write(tap_fd, buf, n) != (ssize_t)n) {
    tx_drops++;
    return ERR_IF;
  }
  tx_frames++;
  return ERR_OK;
}

static void rx_thread(void *arg)
{
  struct netif *netif = (struct netif *)arg;
  unsigned char buf[2048];
  while (!rx_stop) {
    struct pollfd pfd;
    ssize_t n;
    struct pbuf *p;
    pfd.fd = tap_fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    if (poll(&pfd, 1, 100) <= 0) {
      continue;
    }
    n = read(tap_fd, buf, sizeof buf);
    if (n <= 0 || n > FRAME_MAX) {
      if (n > 0) {
        rx_drops++;
      }
      continue;
    }
    p = pbuf_alloc(PBUF_RAW, (u16_t)n, PBUF_RAM);
    if (p == NULL) {
      rx_drops++;
      continue;
    }
    pbuf_take(p, buf, (u16_t)n);
    if (netif->input(p, netif) != ERR_OK) {
      pbuf_free(p);
      rx_drops++;
      continue;
    }
    rx_frames++;
  }
  sys_sem_signal(&rx_done);
}

err_t lwip_style_netif_init(struct netif *netif)
{
  static const u8_t mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
  struct ifreq ifr;
  tap_fd = open("/dev/net/tun", O_RDWR);
  if (tap_fd < 0) {
    perror("lwip-style: /dev/net/tun");
    return ERR_IF;
  }
  memset(&ifr, 0, sizeof ifr);
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  strncpy(ifr.ifr_name, (const char *)netif->state, IFNAMSIZ - 1);
  if (ioctl(tap_fd, TUNSETIFF, &ifr) < 0) {
    perror("lwip-style: TUNSETIFF");
    close(tap_fd);
    tap_fd = -1;
    return ERR_IF;
  }
  netif->name[0] = 't';
  netif->name[1] = 'p';
  netif->output = etharp_output;
  netif->linkoutput = tap_linkoutput;
  netif->mtu = 1500;
  netif->hwaddr_len = 6;
  memcpy(netif->hwaddr, mac, 6);
  netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
  if (sys_sem_new(&rx_done, 0) != ERR_OK) {
    return ERR_MEM;
  }
  sys_thread_new("tap-rx", rx_thread, netif, 0, 0);
  return ERR_OK;
}

int lwip_style_port_check(void)
{
  struct tcp_pcb *pcb;
  struct pbuf *p;
  unsigned pool_lib, pool_hdr;
  int ok = 1;

  LOCK_TCPIP_CORE();
  pcb = tcp_new();
  if (pcb == NULL) {
    ok = 0;
  } else {
    /* what tcp_alloc() of the library stored, read through the layout the
     * application was compiled with */
    if (tcp_sndbuf(pcb) != TCP_SND_BUF || pcb->ttl != TCP_TTL || pcb->prio != TCP_PRIO_NORMAL ||
        pcb->rcv_wnd != WND16 || pcb->state != CLOSED) {
      fprintf(stderr, "lwip-style: lwIP options mismatch: snd_buf %u (want %u), ttl %u, prio %u, rcv_wnd %u (want %u)\n",
              (unsigned)tcp_sndbuf(pcb), (unsigned)TCP_SND_BUF, (unsigned)pcb->ttl, (unsigned)pcb->prio,
              (unsigned)pcb->rcv_wnd, (unsigned)WND16);
      ok = 0;
    }
    tcp_close(pcb);
  }
  UNLOCK_TCPIP_CORE();
  p = pbuf_alloc(PBUF_RAW, FRAME_MAX, PBUF_RAM);
  if (p == NULL || p->tot_len != FRAME_MAX || p->len != FRAME_MAX || p->ref != 1) {
    fprintf(stderr, "lwip-style: lwIP pbuf layout mismatch\n");
    ok = 0;
  }
  if (p != NULL) {
    pbuf_free(p);
  }
  /* PBUF_POOL: what the library allocates per element against what its
   * headers (and pbuf.c) expect. Not used by this driver; reported. */
  pool_lib = memp_pools[MEMP_PBUF_POOL]->size;
  pool_hdr = LWIP_MEM_ALIGN_SIZE(LWIP_MEM_ALIGN_SIZE(sizeof(struct pbuf)) + LWIP_MEM_ALIGN_SIZE(PBUF_POOL_BUFSIZE));
  printf("lwip-style: lwIP PBUF_POOL element: %u bytes in the library, %u by its headers%s\n", (unsigned)pool_lib,
         (unsigned)pool_hdr, pool_lib == pool_hdr ? "" : " (Debian's TCP_MSS mix-up: this driver receives into PBUF_RAM)");
  printf("lwip-style: stack lwIP %s (Debian liblwip), TCP_MSS %d, TCP_WND %d, TCP_SND_BUF %d, "
         "LWIP_WND_SCALE %d, TCP options %s\n",
         LWIP_VERSION_STRING, (int)TCP_MSS, (int)TCP_WND, (int)TCP_SND_BUF, (int)LWIP_WND_SCALE,
         ok ? "match the library (PCB fields)" : "MISMATCH");
  return ok ? 0 : 1;
}

void lwip_style_netif_stop(struct netif *netif)
{
  LWIP_UNUSED_ARG(netif);
  rx_stop = 1;
  (void)sys_arch_sem_wait(&rx_done, 5000);
}

int lwip_style_port_finish(void)
{
  if (tap_fd >= 0) {
    close(tap_fd);
    tap_fd = -1;
  }
  printf("lwip-style: tap rx %lu frames (%lu dropped), tx %lu frames (%lu dropped)\n", rx_frames, rx_drops,
         tx_frames, tx_drops);
  return 0;
}
