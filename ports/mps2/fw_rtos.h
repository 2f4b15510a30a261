/**
 * @file fw_rtos.h
 * What the FreeRTOS image of mps2-an385 (app_freertos.c) shares with its
 * seed 000 bench (seed000.c). Not part of the wisp library.
 */
#ifndef WISP_MPS2_FW_RTOS_H
#define WISP_MPS2_FW_RTOS_H

#include <stddef.h>
#include <stdint.h>

#include "wisp/wisp.h"
#include "wisp/tcpip.h"
#include "wisp/netconn.h"
#include "console.h" /* fw_say: here from any task (a mutex serialises the lines), never from an ISR */

/** FREE_RUN: 25 MHz ticks of QEMU's virtual clock (32 bits, wraps every
 *  171 s; differences of a few seconds are exact). Any task. */
uint32_t fw_cycles(void);

/** Bytes of the stack's pools in use now (sum of used x element size),
 *  read under the core lock. */
uint32_t fw_pool_bytes(void);

/** The environment of the bench. */
struct seed000_env {
    struct wisp_tcpip *tcpip;
    struct wisp_netconn_api *api;
    size_t heap_per_netconn_slot; /**< FreeRTOS heap each netconn slot took at wisp_netconn_api_init */
};

/** Run seed 000 (connect/accept time, goodput for 128/512/1024/1460-byte
 *  writes, RAM per connection) for the socket and the netconn API over the
 *  loopback interface, and print the tables ("seed000: " lines). Blocks
 *  the calling task for some seconds. Returns 0 when every measurement
 *  ran, else the number of failed steps. */
int seed000_run(const struct seed000_env *env);

#endif /* WISP_MPS2_FW_RTOS_H */
