/**
 * @file FreeRTOSConfig.h
 * Example kernel configuration for wisp on FreeRTOS (ports/freertos).
 * Copy it next to your application and adjust the marked values; every
 * value is #ifndef-guarded so a board or test header may set its own
 * before including this one (the host tests do: test/freertos).
 *
 * What wisp's sys port (sys_freertos.c) requires -- it fails to compile
 * without them:
 *   configUSE_MUTEXES 1, configUSE_COUNTING_SEMAPHORES 1 (core lock,
 *   semaphores), configSUPPORT_DYNAMIC_ALLOCATION 1 (kernel objects come
 *   from the FreeRTOS heap), INCLUDE_vTaskDelete, INCLUDE_vTaskDelay,
 *   INCLUDE_vTaskSuspend (portMAX_DELAY = forever) and
 *   INCLUDE_xSemaphoreGetMutexHolder 1, a 32-bit tick.
 * What it assumes, documented in docs/porting.md "FreeRTOS":
 *   a 1 kHz tick (wisp_sys_now_ms() is then the tick count itself; other
 *   rates work, scaled in 64 bits), preemption on a target.
 *
 * Values for a Cortex-M3 at 25 MHz (QEMU mps2-an385); the ARM_CM3 port
 * also needs the three handler names mapped at the end.
 */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

/* ----------------------------------------------------------- scheduling */
#ifndef configCPU_CLOCK_HZ
#define configCPU_CLOCK_HZ 25000000UL       /* ADJUST: SysTick input clock */
#endif
#ifndef configTICK_RATE_HZ
#define configTICK_RATE_HZ 1000             /* ms resolution for wisp's timers */
#endif
#ifndef configUSE_PREEMPTION
#define configUSE_PREEMPTION 1
#endif
#ifndef configUSE_TIME_SLICING
#define configUSE_TIME_SLICING 1
#endif
#ifndef configMAX_PRIORITIES
#define configMAX_PRIORITIES 8              /* wisp: stack thread, apps, driver */
#endif
#ifndef configMINIMAL_STACK_SIZE
#define configMINIMAL_STACK_SIZE 128        /* words: the idle task */
#endif
#ifndef configMAX_TASK_NAME_LEN
#define configMAX_TASK_NAME_LEN 16
#endif
#ifndef configTICK_TYPE_WIDTH_IN_BITS
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS
#endif
#ifndef configIDLE_SHOULD_YIELD
#define configIDLE_SHOULD_YIELD 1
#endif
#ifndef configUSE_PORT_OPTIMISED_TASK_SELECTION
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 0
#endif

/* ------------------------------------------------ synchronisation: wisp */
#define configUSE_MUTEXES 1                 /* required: core lock, API locks */
#define configUSE_COUNTING_SEMAPHORES 1     /* required: wisp_sys_sem */
#ifndef configUSE_RECURSIVE_MUTEXES
#define configUSE_RECURSIVE_MUTEXES 0       /* wisp's mutexes are not recursive */
#endif
#ifndef configUSE_TASK_NOTIFICATIONS
#define configUSE_TASK_NOTIFICATIONS 1
#endif
#ifndef configQUEUE_REGISTRY_SIZE
#define configQUEUE_REGISTRY_SIZE 0
#endif
#ifndef configUSE_QUEUE_SETS
#define configUSE_QUEUE_SETS 0
#endif

/* ---------------------------------------------------------------- memory */
#define configSUPPORT_DYNAMIC_ALLOCATION 1  /* required: kernel objects on the FreeRTOS heap */
#ifndef configSUPPORT_STATIC_ALLOCATION
#define configSUPPORT_STATIC_ALLOCATION 0
#endif
#ifndef configTOTAL_HEAP_SIZE
/* ADJUST: heap_4's array. wisp's pools are static (struct wisp_stack);
 * this heap holds task stacks (WISP_SYS_FREERTOS_STACK_DEFAULT = 4 KB per
 * application thread), task control blocks and the queues of the stack
 * thread's and each netconn's mailboxes (capacity x 4 bytes + ~80). */
#define configTOTAL_HEAP_SIZE ((size_t)(64u * 1024u))
#endif

/* ----------------------------------------------------- hooks and checks */
#ifndef configUSE_IDLE_HOOK
#define configUSE_IDLE_HOOK 0
#endif
#ifndef configUSE_TICK_HOOK
#define configUSE_TICK_HOOK 0
#endif
#ifndef configUSE_MALLOC_FAILED_HOOK
#define configUSE_MALLOC_FAILED_HOOK 0      /* wisp reports WISP_ERR_MEM itself */
#endif
#ifndef configCHECK_FOR_STACK_OVERFLOW
#define configCHECK_FOR_STACK_OVERFLOW 0    /* 2 while sizing stacks (needs the hook) */
#endif
#ifndef configUSE_TRACE_FACILITY
#define configUSE_TRACE_FACILITY 0
#endif
#ifndef configGENERATE_RUN_TIME_STATS
#define configGENERATE_RUN_TIME_STATS 0
#endif
#ifndef configUSE_CO_ROUTINES
#define configUSE_CO_ROUTINES 0
#endif
#ifndef configUSE_TIMERS
#define configUSE_TIMERS 0                  /* wisp runs its timers in the stack thread */
#endif
#ifndef configASSERT
/* ADJUST: a target stops here (debugger); the host tests abort. */
#define configASSERT(x) do { if ((x) == 0) { for (;;) { } } } while (0)
#endif

/* ------------------------------------------------------ API to include */
#define INCLUDE_vTaskDelete 1               /* required: threads end */
#define INCLUDE_vTaskDelay 1                /* required: wisp_sys_sleep_ms */
#define INCLUDE_vTaskSuspend 1              /* required: portMAX_DELAY waits forever */
#define INCLUDE_xSemaphoreGetMutexHolder 1  /* required: wisp_sys_mutex_held */
#ifndef INCLUDE_xTaskGetSchedulerState
#define INCLUDE_xTaskGetSchedulerState 1
#endif
#ifndef INCLUDE_uxTaskGetStackHighWaterMark
#define INCLUDE_uxTaskGetStackHighWaterMark 1
#endif
#ifndef INCLUDE_vTaskPrioritySet
#define INCLUDE_vTaskPrioritySet 0
#endif
#ifndef INCLUDE_uxTaskPriorityGet
#define INCLUDE_uxTaskPriorityGet 0
#endif
#ifndef INCLUDE_xTaskDelayUntil
#define INCLUDE_xTaskDelayUntil 0
#endif

/* ---------------------------------------------- Cortex-M interrupt setup
 * Only for the GCC ARM_CM* ports. The priority of an ISR that calls a
 * FromISR kernel function (e.g. an Ethernet RX interrupt giving a driver
 * task's semaphore) must be numerically >= configMAX_SYSCALL_INTERRUPT_
 * PRIORITY. 3 priority bits on the Cortex-M3 of mps2-an385. */
#if defined(__ARM_ARCH) && !defined(configKERNEL_INTERRUPT_PRIORITY)
#define configPRIO_BITS 3
#define configKERNEL_INTERRUPT_PRIORITY (7 << (8 - configPRIO_BITS))      /* lowest */
#define configMAX_SYSCALL_INTERRUPT_PRIORITY (5 << (8 - configPRIO_BITS))
/* The port's handlers under CMSIS names (the vector table names these). */
#define vPortSVCHandler SVC_Handler
#define xPortPendSVHandler PendSV_Handler
#define xPortSysTickHandler SysTick_Handler
#endif

#endif /* FREERTOS_CONFIG_H */
