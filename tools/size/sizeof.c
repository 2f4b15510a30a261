/* RAM of the instance structs (tools/size-report.sh): one global array per
 * struct, read back with nm -S. Compiled with the image's options. */
#include "wisp/wisp.h"
#include "wisp/dhcp.h"
#include "wisp/tcpip.h"
#include "wisp/netconn.h"
#include "wisp/sockets.h"
char wisp_sizeof_stack[sizeof(struct wisp_stack)];
char wisp_sizeof_netif[sizeof(struct wisp_netif)];
char wisp_sizeof_udp_pcb[sizeof(struct wisp_udp_pcb)];
char wisp_sizeof_dhcp[sizeof(struct wisp_dhcp)];
#if WISP_TCP
char wisp_sizeof_tcp_pcb[sizeof(struct wisp_tcp_pcb)];
char wisp_sizeof_netconn[sizeof(struct wisp_netconn)];
char wisp_sizeof_socket[sizeof(struct wisp_sock)];
char wisp_sizeof_os_handle[sizeof(wisp_sys_sem_t)];
#endif
