/**
 * @file rtos_probe_cm3.c
 * A FreeRTOS application measured (not run) by tools/freertos-cm3.sh for
 * Cortex-M3: the "full" size probe's application (tools/size/probe_full.c,
 * compiled with -DPROBE_FULL_NO_MAIN: the stack thread, DHCP, a netconn echo
 * server, a socket server with select, a socket client with getaddrinfo,
 * the driver's receive loop) run from one task, the kernel started. Linked
 * with --gc-sections and no startup code or vector table, so the figure is
 * what main() pulls in: the kernel with the ARM_CM3 port and heap_4, wisp's
 * core, OS layer and APIs, the FreeRTOS sys port. Public headers only.
 */
#include "wisp/wisp.h"

#include "FreeRTOS.h"
#include "task.h"

/* tools/size/probe_full.c: brings the stack up, starts the application
 * threads, then runs the receive loop; never returns. */
void probe_full_run(void);

static void app_task(void *arg)
{
    (void)arg;
    probe_full_run();
}

int main(void);
int main(void)
{
    /* the application runs in a task: it blocks on kernel objects
     * (wisp_tcpip_call of the init callback, the sockets' semaphores) */
    xTaskCreate(app_task, "app", 1024, NULL, 1, NULL);
    vTaskStartScheduler();
    for (;;) {
    }
}
