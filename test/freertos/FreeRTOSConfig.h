/**
 * @file FreeRTOSConfig.h (host tests)
 * Kernel configuration of the host tests of the FreeRTOS sys port: the
 * kernel's POSIX port (portable/ThirdParty/GCC/Posix), where every task is
 * a pthread and only the one the scheduler picked runs. The settings that
 * differ from the example (ports/freertos/example/FreeRTOSConfig.h, which
 * supplies the rest) and why:
 *
 *  - configUSE_PREEMPTION 0 (cooperative): the POSIX port switches tasks
 *    from its SIGALRM tick handler, which can suspend a task inside the C
 *    library while it holds one of libc's own locks (malloc, stdio, ASan's
 *    allocator); the next task that needs that lock then blocks in the
 *    host kernel, invisible to FreeRTOS, and with the tick masked (inside
 *    a kernel critical section, e.g. creating a task) nothing ever runs
 *    the holder again. Cooperatively, tasks switch only where they block
 *    on a FreeRTOS object, delay or yield -- never inside libc. Every wait
 *    of wisp's sys port blocks on a kernel object, so the port's behaviour
 *    is the same; what cooperative scheduling does not exercise is a
 *    preemption in the middle of wisp code (the target, with preemption
 *    on, does; the core lock and the API's state are written for that).
 *  - a heap big enough for hundreds of tasks' (unused) stacks: on the POSIX
 *    port a task runs on its pthread's stack, the FreeRTOS stack only holds
 *    the port's thread record;
 *  - configASSERT aborts with a message (the example loops forever).
 */
#ifndef WISP_HOST_FREERTOS_CONFIG_H
#define WISP_HOST_FREERTOS_CONFIG_H

/* (#ifndef: an experiment may pass -DconfigUSE_PREEMPTION=1) */
#ifndef configUSE_PREEMPTION
#define configUSE_PREEMPTION 0
#endif
#ifndef configUSE_TIME_SLICING
#define configUSE_TIME_SLICING configUSE_PREEMPTION
#endif
#define configCPU_CLOCK_HZ 1000000UL
#define configMINIMAL_STACK_SIZE 1024
#define configMAX_PRIORITIES 8
#define configTOTAL_HEAP_SIZE ((size_t)(64u * 1024u * 1024u))
#define configSTACK_DEPTH_TYPE size_t

#include <stdio.h>
#include <stdlib.h>
#define configASSERT(x)                                                                            \
    do {                                                                                           \
        if ((x) == 0) {                                                                            \
            fprintf(stderr, "FreeRTOS: configASSERT(%s) failed at %s:%d\n", #x, __FILE__, __LINE__); \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#include "../../ports/freertos/example/FreeRTOSConfig.h"

#endif
