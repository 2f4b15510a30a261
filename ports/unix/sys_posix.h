/**
 * @file sys_posix.h
 * Handle structs of the POSIX sys port (ports/unix/sys_posix.c), included
 * by wisp/sys.h through WISP_SYS_PORT_HEADER. Contents are private to the
 * port; see wisp/sys.h for the interface.
 */
#ifndef WISP_SYS_POSIX_H
#define WISP_SYS_POSIX_H

#include <pthread.h>
#include <stdint.h>

struct wisp_sys_thread {
    pthread_t tid;
    void (*fn)(void *arg);
    void *arg;
    char name[16];            /**< Linux limits thread names to 15 chars */
#if WISP_SYS_DEBUG_PROBE
    /* blocked-thread probe (sys_posix.c): under the port's debug lock */
    struct wisp_sys_thread *dbg_next; /**< list of known threads */
    const void *dbg_obj;      /**< object blocked on, NULL = running */
    int dbg_kind;             /**< enum wisp_sys_wait_kind */
    int dbg_listed;
#endif
};

struct wisp_sys_mutex {
    pthread_mutex_t mtx;
    const void *owner;        /**< holder's thread token, atomic access */
};

struct wisp_sys_sem {
    pthread_mutex_t mtx;
    pthread_cond_t cond;      /**< on CLOCK_MONOTONIC */
    unsigned count;
};

struct wisp_sys_mbox {
    pthread_mutex_t mtx;
    pthread_cond_t not_empty, not_full;   /**< on CLOCK_MONOTONIC */
    void **ring;              /**< capacity slots (malloc'd) */
    unsigned cap, head, count;
};

#endif /* WISP_SYS_POSIX_H */
