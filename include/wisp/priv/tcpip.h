/**
 * @file priv/tcpip.h
 * Private tier: the layout of the structures of wisp/tcpip.h that a user
 * allocates or that the stack instance holds. Not API: applications
 * use the functions of wisp/tcpip.h; the members are named through
 * WISP_PRIV() (wisp/arch.h), so code outside the library (no
 * WISP_PRIVATE_ACCESS) cannot use them by accident. May change in
 * any release.
 */
#ifndef WISP_PRIV_TCPIP_H
#define WISP_PRIV_TCPIP_H

#include "wisp/tcpip.h"

/** A mailbox message (internal; public for sizing only). */
struct wisp_tcpip_msg {
    struct wisp_tcpip_msg *WISP_PRIV(next_free);
    uint8_t WISP_PRIV(type);
    wisp_err_t WISP_PRIV(result);
    wisp_tcpip_fn WISP_PRIV(fn);
    void *WISP_PRIV(arg);                     /**< MSG_INPUT: the frame */
    union {
        wisp_sys_sem_t *WISP_PRIV(done);      /**< MSG_CALL: signalled when it ran */
        struct wisp_dev *WISP_PRIV(dev);      /**< MSG_INPUT: the receiving device */
    } WISP_PRIV(to);
};

/** One stack thread. Large (message records inside): allocate it
 *  statically or on the heap. All fields are private. */
struct wisp_tcpip {
    struct wisp_stack *WISP_PRIV(stack);
    /* the bytes first (short loads on Thumb) -- under the core lock: */
    uint8_t WISP_PRIV(sleeping);              /**< the thread waits on the mailbox */
    uint8_t WISP_PRIV(sleep_forever);         /**< ... without timeout */
    uint8_t WISP_PRIV(wake_posted);           /**< the wake message is in the mailbox */
    /* under post_lock: */
    uint8_t WISP_PRIV(stop_req);              /**< the thread leaves after the current message */
    uint8_t WISP_PRIV(stop_posted);           /**< the stop message was posted */
    uint8_t WISP_PRIV(closed);                /**< stopped: every post fails */
    wisp_sys_mutex_t WISP_PRIV(core);         /**< the core lock */
    wisp_sys_mutex_t WISP_PRIV(post_lock);    /**< free messages, closed, in_flight */
    wisp_sys_mbox_t WISP_PRIV(mbox);
    wisp_sys_thread_t WISP_PRIV(thread);
    struct wisp_tcpip_cfg WISP_PRIV(cfg);
    /* under the core lock */
    uint32_t WISP_PRIV(sleep_due);            /**< stack clock time the thread sleeps until */
    uint32_t WISP_PRIV(max_wait);             /**< effective cap (WISP_SYS_FOREVER = none) */
    /* under post_lock */
    unsigned WISP_PRIV(in_flight);            /**< blocking posts in progress */
    struct wisp_tcpip_msg *WISP_PRIV(free_msgs);
    struct wisp_tcpip_stats WISP_PRIV(st);    /**< calls..polls: core lock; the rest: post_lock */
    struct wisp_tcpip_msg WISP_PRIV(wake), WISP_PRIV(stop_msg);
    struct wisp_tcpip_msg WISP_PRIV(msgs)[WISP_TCPIP_MSG_COUNT];
};

#endif /* WISP_PRIV_TCPIP_H */
