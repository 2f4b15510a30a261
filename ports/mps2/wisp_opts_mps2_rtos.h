/**
 * @file wisp_opts_mps2_rtos.h
 * Options of the FreeRTOS firmware image of mps2-an385 (app_freertos.c):
 * the pools of the bare-metal image (wisp_opts_mps2.h: the 8 KiB window
 * that fits the LAN9118's 10 KiB RX FIFO) plus the FreeRTOS sys port, and
 * the netconn/socket tables sized for the image's users: the service
 * threads of one API (3 listeners, 2 UDP services, up to 12 connections),
 * httpd and iperf on the raw API in the core context, and the seed 000
 * bench (a listener and up to 8 connections over loopback).
 */
#ifndef WISP_OPTS_MPS2_RTOS_H
#define WISP_OPTS_MPS2_RTOS_H

#include "wisp_opts_mps2.h"

#undef WISP_TCP_PCB_COUNT
#define WISP_TCP_PCB_COUNT 28
#undef WISP_TCP_LISTEN_COUNT
#define WISP_TCP_LISTEN_COUNT 10

#define WISP_SYS_PORT_HEADER "sys_freertos.h"
#define WISP_NETCONN_COUNT 32
#define WISP_SOCKET_COUNT 32
#define WISP_NETBUF_COUNT 24
#define WISP_SOCK_SERVICES_CONNS 12
#define WISP_NC_SERVICES_CONNS 12
/* Receive buffer and chargen write of a socket-service connection: 2 KiB
 * (default 16 KiB, 12 slots would be 192 KiB). The two UDP services keep
 * their fixed 64 KiB buffers (services_socket.h). */
#define WISP_SOCK_SERVICES_BUF 2048u

#endif /* WISP_OPTS_MPS2_RTOS_H */
