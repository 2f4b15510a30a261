/* wisp/lwipopts_map.h: an lwIP firmware's lwipopts.h (lwipopts_sample.h)
 * turned into wisp options; every mapped value is checked at compile time
 * and printed. Built with WISP_OPTS_HEADER="wisp_opts_lwipopts.h". */
#include <stdio.h>

#include "wisp/opt.h"

#define CHECK(name, cond) typedef char check_##name[(cond) ? 1 : -1]
CHECK(mss, WISP_TCP_MSS == 1460);
CHECK(wnd, WISP_TCP_WND == 4 * 1460);
CHECK(sndbuf, WISP_TCP_SND_BUF == 6 * 1460);
CHECK(maxrtx, WISP_TCP_MAXRTX == 10);
CHECK(pcbs, WISP_TCP_PCB_COUNT == 10);
CHECK(listen, WISP_TCP_LISTEN_COUNT == 5);
CHECK(segs, WISP_TCP_SEG_COUNT == 32);
CHECK(udp, WISP_UDP_PCB_COUNT == 6);
CHECK(netconn, WISP_NETCONN_COUNT == 12 && WISP_SOCKET_COUNT == 12);
CHECK(netbuf, WISP_NETBUF_COUNT == 8);
CHECK(rx, WISP_PBUF_RX_COUNT == 24 && WISP_PBUF_BLOCK_SIZE == 1536);
CHECK(ref, WISP_PBUF_REF_COUNT == 16);
CHECK(dhcp_dns, WISP_DHCP == 1 && WISP_DNS == 1 && WISP_DNS_MAX_SERVERS == 2 && WISP_DNS_CACHE_SIZE == 6);
CHECK(arp, WISP_ARP_TABLE_SIZE == 10);
CHECK(mbox, WISP_TCPIP_MBOX_SIZE == 24 && WISP_TCPIP_CORE_LOCKING == 1);

int main(void)
{
  printf("lwipopts -> wisp: TCP_MSS %d TCP_WND %d TCP_SND_BUF %d pcbs %d/%d segs %d udp %d netconns %d "
         "rx blocks %d x %d ARP %d mbox %d: ok\n",
         (int)WISP_TCP_MSS, (int)WISP_TCP_WND, (int)WISP_TCP_SND_BUF, (int)WISP_TCP_PCB_COUNT,
         (int)WISP_TCP_LISTEN_COUNT, (int)WISP_TCP_SEG_COUNT, (int)WISP_UDP_PCB_COUNT, (int)WISP_NETCONN_COUNT,
         (int)WISP_PBUF_RX_COUNT, (int)WISP_PBUF_BLOCK_SIZE, (int)WISP_ARP_TABLE_SIZE, (int)WISP_TCPIP_MBOX_SIZE);
  return 0;
}
