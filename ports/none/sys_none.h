/**
 * @file sys_none.h
 * Handle structs of the no-OS sys port (ports/none/sys_none.c), included by
 * wisp/sys.h through WISP_SYS_PORT_HEADER "sys_none.h".
 *
 * No-OS ("bare metal") mode: one context, no threads. The application's
 * main loop is the stack's core context: it feeds received frames with
 * wisp_dev_input(), calls wisp_stack_poll() when wisp_stack_next_timeout()
 * says a timer is due, and uses the raw API (wisp_udp_*, wisp_tcp_*). There
 * is no stack thread (wisp_tcpip_start fails with WISP_ERR_VAL) and
 * therefore no netconn/socket API.
 *
 * The sys functions still exist so that code written against wisp/sys.h
 * compiles and runs in both modes: mutexes are single-context flags
 * (locking a locked one is a bug: WISP_ASSERT in debug builds),
 * semaphores and mailboxes are plain counters and rings whose waits spin
 * on wisp_sys_now_ms() until the timeout (something else -- an interrupt
 * handler the board wraps in its own critical section -- may signal).
 *
 * The board provides the clock: uint32_t wisp_sys_now_ms(void), monotonic
 * milliseconds (SysTick counter, RTC, ...). sys_none.c does not define it.
 */
#ifndef WISP_SYS_NONE_H
#define WISP_SYS_NONE_H

#include <stdint.h>

/** Most messages a mailbox can hold here (no heap: the ring is inside the
 *  handle). wisp_sys_mbox_new with a larger capacity fails (WISP_ERR_MEM).
 *  Default 16. */
#ifndef WISP_SYS_NONE_MBOX_MAX
#define WISP_SYS_NONE_MBOX_MAX 16
#endif

struct wisp_sys_thread {
    uint8_t unused;
};

struct wisp_sys_mutex {
    volatile uint8_t locked;
};

struct wisp_sys_sem {
    volatile unsigned count;
};

struct wisp_sys_mbox {
    void *slot[WISP_SYS_NONE_MBOX_MAX];
    volatile unsigned count;
    unsigned head, cap;
};

#endif /* WISP_SYS_NONE_H */
