/* Size probe options: a UDP-only firmware (no TCP; DHCP and DNS kept). */
#ifndef WISP_SIZE_OPTS_UDP_H
#define WISP_SIZE_OPTS_UDP_H
#include "opts_default.h"
#define WISP_TCP 0
#endif
