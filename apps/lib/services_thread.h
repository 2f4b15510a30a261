/**
 * @file services_thread.h
 * What the two thread-based service sets (services_netconn.c on the
 * netconn API, services_socket.c on the BSD socket API) share: a
 * connection slot's admission state, its progress and idle checks, the
 * admission of a new connection (reclaim.h's choice, retried while a
 * reclaim frees a slot), the per-service accounting of a finished
 * connection and the life of a slot's worker thread. Public calls of
 * wisp/sys.h only.
 *
 * Worker threads: a slot's thread is made on the slot's first connection
 * and then serves the slot's connections one after the other (no thread
 * per connection): the accept thread reserves the slot (wisp_svc_admit),
 * fills it, marks it running (under lock) and signals the slot's
 * semaphore (a new thread finds its first connection running). The worker
 * marks the slot free (under lock) when its connection is accounted and
 * waits for the next one (wisp_svc_worker_next). request_stop sets the stop flag and, under the
 * same lock, signals the semaphore of every slot that has a worker: a
 * worker ends when the stop flag is set and its slot is free, and is
 * joined by the set's stop.
 *
 * lock and stop are the service set's mutex and stop flag (stop is read
 * under lock only).
 */
#ifndef WISP_APPS_SERVICES_THREAD_H
#define WISP_APPS_SERVICES_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wisp/sys.h"
#include "services.h"

/** Slot states (wisp_svc_conn.state, under lock). */
enum { WISP_SVC_SLOT_FREE = 0, WISP_SVC_SLOT_RESERVED, WISP_SVC_SLOT_RUNNING };

/** Why a worker's connection ends, beyond the connection's own error
 *  (wisp_svc_conn.end). */
enum { WISP_SVC_END_NONE = 0, WISP_SVC_END_IDLE, WISP_SVC_END_STUCK, WISP_SVC_END_RECLAIM };

/** Accept-thread tries (10 ms apart) to get the slot a reclaim frees,
 *  for a service set whose blocking calls time out after poll_ms. */
#define WISP_SVC_ADMIT_TRIES(poll_ms) (3u * (poll_ms) / 10u + 1u)

/** The admission state of one connection slot (embedded in the slots of
 *  both service sets). */
struct wisp_svc_conn {
    uint8_t state;    /**< under lock: free, reserved, running */
    uint8_t evict;    /**< under lock: reclaim it (set by the accept thread) */
    uint8_t worker;   /**< under lock: the slot's thread exists (join it at stop) */
    uint8_t end;      /**< the worker's: why its connection ends (private) */
    uint32_t ip;      /**< remote IPv4 address, network order (set before the slot runs) */
    uint32_t last_ms; /**< under lock: last progress (wisp_sys_now_ms) */
};

/** The stop flag, read under lock. */
bool wisp_svc_stopping(wisp_sys_mutex_t *lock, const uint8_t *stop);

/** A server thread ends: the last thing it does with its service set;
 *  *threads counts the threads not done. */
void wisp_svc_thread_done(wisp_sys_mutex_t *lock, unsigned *threads);

/** A worker, lock held: wait on go, the slot's semaphore (lock released
 *  meanwhile), until its slot runs a connection -- true -- or the set
 *  stops with the slot free -- false (the worker then ends). Returns with
 *  lock held. */
bool wisp_svc_worker_next(wisp_sys_mutex_t *lock, const uint8_t *stop, const struct wisp_svc_conn *c,
                          wisp_sys_sem_t *go);

/** Hand the connection of slot c (reserved by wisp_svc_admit, filled by
 *  the caller) to the slot's worker: signal go, or on the slot's first use
 *  make go and the worker (thread, running fn(arg), named name). Counts
 *  the connection in st (and the thread in *threads) and marks the slot
 *  running, under lock. False: no worker could be made; the slot is still
 *  reserved and the caller frees it (state free, under lock). */
bool wisp_svc_hand_off(wisp_sys_mutex_t *lock, struct wisp_tcp_service_stats *st, unsigned *threads,
                       struct wisp_svc_conn *c, wisp_sys_sem_t *go, wisp_sys_thread_t *thread, const char *name,
                       wisp_sys_thread_fn fn, void *arg);

/** Source ports of services that answer every datagram: echoing to one of
 *  them would make two servers bounce a datagram forever. */
bool wisp_svc_reflector_port(uint16_t port);

/** The connection made progress (received data, the stack took ours).
 *  WISP_ERR_ABRT when it is to end now: reclaimed (c->end) or stop --
 *  looked at here too, so a peer that keeps a little data flowing is not
 *  missed by the checks after timeouts. */
wisp_err_t wisp_svc_progress(wisp_sys_mutex_t *lock, const uint8_t *stop, struct wisp_svc_conn *c);

/** After a call that timed out or could not finish: WISP_OK to go on,
 *  WISP_ERR_ABRT on stop or reclaim, WISP_ERR_TIMEOUT at the idle timeout
 *  idle_ms (c->end says which). writing: the thread waits for the peer to
 *  read. */
wisp_err_t wisp_svc_conn_check(wisp_sys_mutex_t *lock, const uint8_t *stop, uint32_t idle_ms,
                               struct wisp_svc_conn *c, bool writing);

/** Admission of a connection from ip (network order) to one of n slots,
 *  whose wisp_svc_conn the first is at first and the others stride bytes
 *  apart: up to tries tries, 10 ms apart, while a reclaim that frees a
 *  slot for it is under way (reclaim.h's choice with opt's per_source and
 *  reclaim_ms). Returns the index of the slot now reserved for it, or -1
 *  (also on stop); *capped: its address is at its cap. A free slot whose
 *  worker exists goes first (threads are made only when those are busy). */
int wisp_svc_admit(wisp_sys_mutex_t *lock, const uint8_t *stop, const struct wisp_services_opts *opt,
                   struct wisp_svc_conn *first, size_t stride, unsigned n, uint32_t ip, unsigned tries,
                   bool *capped);

/** A worker's connection ended with how (its end in c->end), after
 *  bytes_rx / bytes_tx: the counters of its service (active, closed,
 *  aborted, resets, timeouts, reclaimed, bytes), and the slot is free for
 *  the accept thread again; takes lock. */
void wisp_svc_conn_done(wisp_sys_mutex_t *lock, struct wisp_tcp_service_stats *st, struct wisp_svc_conn *c,
                        wisp_err_t how, uint64_t bytes_rx, uint64_t bytes_tx);

#endif /* WISP_APPS_SERVICES_THREAD_H */
