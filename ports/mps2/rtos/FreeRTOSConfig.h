/**
 * @file FreeRTOSConfig.h
 * Kernel configuration of the FreeRTOS firmware image of mps2-an385
 * (app_freertos.c): the values that differ from wisp's example
 * configuration (ports/freertos/example/FreeRTOSConfig.h, included at the
 * end; every value there is #ifndef-guarded).
 *
 *  - heap_4 of 256 KiB: task stacks (4 KiB per wisp thread, the service
 *    threads of the socket/netconn layers come and go with connections),
 *    the kernel objects of every netconn slot and of the stack thread;
 *  - the idle hook sleeps in WFI (app_freertos.c): an idle image waits for
 *    the next interrupt (SysTick at 1 kHz, the LAN9118) instead of spinning
 *    (MPS2-AN385.md pitfall 7: a busy guest starves the host);
 *  - stack overflow check 2 and configASSERT report on the UART and end
 *    QEMU through semihosting (status 2 / 3) instead of hanging.
 */
#ifndef WISP_MPS2_FREERTOS_CONFIG_H
#define WISP_MPS2_FREERTOS_CONFIG_H

#define configTOTAL_HEAP_SIZE ((size_t)(256u * 1024u))
#define configUSE_IDLE_HOOK 1
#define configCHECK_FOR_STACK_OVERFLOW 2
#define configMINIMAL_STACK_SIZE 160

#ifndef __ASSEMBLER__
void fw_rtos_assert(const char *file, int line);
#endif
#define configASSERT(x) do { if ((x) == 0) { fw_rtos_assert(__FILE__, __LINE__); } } while (0)

#include "../../freertos/example/FreeRTOSConfig.h"

#endif /* WISP_MPS2_FREERTOS_CONFIG_H */
