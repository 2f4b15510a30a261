/**
 * @file sys_freertos.h
 * Handle structs of the FreeRTOS sys port (ports/freertos/sys_freertos.c),
 * included by wisp/sys.h through WISP_SYS_PORT_HEADER "sys_freertos.h".
 * Contents are private to the port; see wisp/sys.h for the interface and
 * docs/porting.md ("FreeRTOS") for the mapping and the kernel settings the
 * port needs.
 *
 * Every handle is one pointer, as the kernel's own handles are: the mutex,
 * semaphore and mailbox hold the kernel's queue handle (SemaphoreHandle_t /
 * QueueHandle_t are both "struct QueueDefinition *"), the thread a small
 * control block of the port (task handle, entry point, join semaphore)
 * allocated from the FreeRTOS heap. The kernel's headers are not included
 * here, so code that only embeds wisp's handles (netconn, sockets, the
 * application) needs neither FreeRTOSConfig.h nor the kernel's include path.
 *
 * The kernel objects come from the FreeRTOS heap (pvPortMalloc:
 * configSUPPORT_DYNAMIC_ALLOCATION 1, heap_4 recommended); a new() that
 * finds the heap empty returns WISP_ERR_MEM.
 */
#ifndef WISP_SYS_FREERTOS_H
#define WISP_SYS_FREERTOS_H

/** Stack of a thread created with stack_size 0 (bytes; rounded up to
 *  whole StackType_t words). Range: configMINIMAL_STACK_SIZE words ..
 *  what the heap holds. Default 4096: a netconn/socket application thread
 *  formatting text (snprintf) and calling into the stack under the core
 *  lock (the core runs in the caller's thread with WISP_TCPIP_CORE_LOCKING)
 *  needs 2..3 KB on Cortex-M with newlib; measure with
 *  uxTaskGetStackHighWaterMark and shrink. */
#ifndef WISP_SYS_FREERTOS_STACK_DEFAULT
#define WISP_SYS_FREERTOS_STACK_DEFAULT 4096u
#endif

/** FreeRTOS priority of a thread created with prio 0. A prio > 0 passed to
 *  wisp_sys_thread_new() is used as the FreeRTOS priority itself (clamped
 *  to configMAX_PRIORITIES - 1). Default 1 (tskIDLE_PRIORITY + 1): every
 *  wisp thread at the same level, above idle; give the stack thread a
 *  higher one through struct wisp_tcpip_config.prio if the application
 *  threads compute a lot. */
#ifndef WISP_SYS_FREERTOS_PRIO_DEFAULT
#define WISP_SYS_FREERTOS_PRIO_DEFAULT 1
#endif

struct QueueDefinition;               /* the kernel's queue (queue.c) */
struct wisp_sys_freertos_thread;      /* the port's thread block (sys_freertos.c) */

struct wisp_sys_thread {
    struct wisp_sys_freertos_thread *blk;
};

struct wisp_sys_mutex {
    struct QueueDefinition *h;        /**< xSemaphoreCreateMutex() */
};

struct wisp_sys_sem {
    struct QueueDefinition *h;        /**< xSemaphoreCreateCounting() */
};

struct wisp_sys_mbox {
    struct QueueDefinition *h;        /**< xQueueCreate(capacity, sizeof(void *)) */
};

#endif /* WISP_SYS_FREERTOS_H */
