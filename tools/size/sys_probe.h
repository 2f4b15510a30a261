/**
 * @file sys_probe.h
 * OS handles of the size probe's stand-in RTOS port (tools/size/sys_probe.c):
 * each handle is one pointer, as the handles of an RTOS port are (a FreeRTOS
 * QueueHandle_t, SemaphoreHandle_t, TaskHandle_t). Used only to measure the
 * "full" image with tools/size-report.sh; the port's code is the
 * application's side of the link and is not counted as the stack's.
 */
#ifndef WISP_SYS_PROBE_H
#define WISP_SYS_PROBE_H

struct wisp_sys_thread {
    void *handle;
};
struct wisp_sys_mutex {
    void *handle;
};
struct wisp_sys_sem {
    void *handle;
};
struct wisp_sys_mbox {
    void *handle;
};

#endif
