/**
 * @file services_thread.c
 * The parts of the thread-based services shared by services_netconn.c and
 * services_socket.c (see services_thread.h).
 */
#include "services_thread.h"

#include "reclaim.h"
#include "services_socket.h" /* both sets' slot counts (it includes services_netconn.h) */

/* Slots of the larger set. */
#define SVC_CONNS_MAX \
    (WISP_NC_SERVICES_CONNS > WISP_SOCK_SERVICES_CONNS ? WISP_NC_SERVICES_CONNS : WISP_SOCK_SERVICES_CONNS)

bool wisp_svc_stopping(wisp_sys_mutex_t *lock, const uint8_t *stop)
{
    bool s;
    wisp_sys_mutex_lock(lock);
    s = *stop != 0;
    wisp_sys_mutex_unlock(lock);
    return s;
}

void wisp_svc_thread_done(wisp_sys_mutex_t *lock, unsigned *threads)
{
    wisp_sys_mutex_lock(lock);
    (*threads)--;
    wisp_sys_mutex_unlock(lock);
}

bool wisp_svc_worker_next(wisp_sys_mutex_t *lock, const uint8_t *stop, const struct wisp_svc_conn *c,
                          wisp_sys_sem_t *go)
{
    /* Every change that matters here is made under lock and followed by a
     * signal of go (a handoff: running; request_stop: the stop flag), and
     * the count keeps a signal given before the wait: none is missed. A
     * wake that finds neither (the handoff's own signal after the worker
     * took its connection already, or a reservation not yet handed over)
     * waits again. */
    for (;;) {
        if (c->state == WISP_SVC_SLOT_RUNNING) {
            return true;
        }
        if (*stop && c->state == WISP_SVC_SLOT_FREE) {
            return false;
        }
        wisp_sys_mutex_unlock(lock);
        (void)wisp_sys_sem_wait(go, WISP_SYS_FOREVER);
        wisp_sys_mutex_lock(lock);
    }
}

bool wisp_svc_reflector_port(uint16_t port)
{
    return port == 7u || port == 9u || port == 13u || port == 17u || port == 19u || port == 37u;
}

wisp_err_t wisp_svc_progress(wisp_sys_mutex_t *lock, const uint8_t *stop, struct wisp_svc_conn *c)
{
    bool s, evict;
    wisp_sys_mutex_lock(lock);
    c->last_ms = wisp_sys_now_ms();
    s = *stop != 0;
    evict = c->evict != 0;
    wisp_sys_mutex_unlock(lock);
    if (evict) {
        c->end = WISP_SVC_END_RECLAIM;
    }
    return (evict || s) ? WISP_ERR_ABRT : WISP_OK;
}

wisp_err_t wisp_svc_conn_check(wisp_sys_mutex_t *lock, const uint8_t *stop, uint32_t idle_ms,
                               struct wisp_svc_conn *c, bool writing)
{
    bool s, evict, idle;
    wisp_sys_mutex_lock(lock);
    s = *stop != 0;
    evict = c->evict != 0;
    idle = wisp_sys_now_ms() - c->last_ms >= idle_ms;
    wisp_sys_mutex_unlock(lock);
    if (evict) {
        c->end = WISP_SVC_END_RECLAIM;
        return WISP_ERR_ABRT;
    }
    if (s) {
        return WISP_ERR_ABRT;
    }
    if (idle) {
        c->end = writing ? WISP_SVC_END_STUCK : WISP_SVC_END_IDLE;
        return WISP_ERR_TIMEOUT;
    }
    return WISP_OK;
}

static struct wisp_svc_conn *conn_at(struct wisp_svc_conn *first, size_t stride, unsigned i)
{
    return (struct wisp_svc_conn *)(void *)((unsigned char *)first + (size_t)i * stride);
}

/* One admission try, under the lock: a reserved slot's index, or -1 with
 * *wait true while a reclaim that frees one for it is under way. */
static int admit_locked(const struct wisp_services_opts *opt, struct wisp_svc_conn *first, size_t stride,
                        unsigned n, uint32_t ip, bool *capped, bool *wait)
{
    struct wisp_reclaim_rec r[SVC_CONNS_MAX];
    struct wisp_svc_conn *found = NULL;
    uint32_t now = wisp_sys_now_ms();
    unsigned i;
    int v = -1;

    *wait = false;
    if (n > sizeof r / sizeof r[0]) {
        n = sizeof r / sizeof r[0];
    }
    for (i = 0; i < n; i++) {
        const struct wisp_svc_conn *c = conn_at(first, stride, i);
        r[i].used = c->state == WISP_SVC_SLOT_RESERVED || c->state == WISP_SVC_SLOT_RUNNING;
        r[i].takeable = c->state == WISP_SVC_SLOT_RUNNING && !c->evict;
        r[i].ip = c->ip;
        r[i].idle_ms = now - c->last_ms;
        if (c->state == WISP_SVC_SLOT_RUNNING && c->evict) {
            *wait = true; /* a reclaim under way frees a slot: one at a time */
        }
    }
    *capped = wisp_reclaim_count(r, n, ip) >= opt->per_source;
    /* a free slot with its worker waiting first: a new thread only when
     * those are all busy */
    for (i = 0; i < n && found == NULL && !*capped; i++) {
        const struct wisp_svc_conn *c = conn_at(first, stride, i);
        if (c->state == WISP_SVC_SLOT_FREE && c->worker) {
            found = conn_at(first, stride, i);
            v = (int)i;
        }
    }
    for (i = 0; i < n && found == NULL && !*capped; i++) {
        if (conn_at(first, stride, i)->state == WISP_SVC_SLOT_FREE) {
            found = conn_at(first, stride, i);
            v = (int)i;
        }
    }
    if (found != NULL) {
        *wait = false;
        found->state = WISP_SVC_SLOT_RESERVED;
        found->evict = 0;
        found->ip = ip;
        found->last_ms = now;
        return v;
    }
    if (*wait) {
        return -1;
    }
    v = wisp_reclaim_pick(r, n, ip, *capped, opt->reclaim_ms);
    if (v >= 0) {
        conn_at(first, stride, (unsigned)v)->evict = 1; /* its thread resets it within a poll */
        *wait = true;
    }
    return -1;
}

int wisp_svc_admit(wisp_sys_mutex_t *lock, const uint8_t *stop, const struct wisp_services_opts *opt,
                   struct wisp_svc_conn *first, size_t stride, unsigned n, uint32_t ip, unsigned tries,
                   bool *capped)
{
    bool wait = false;
    unsigned t;
    int v = -1;

    *capped = false;
    for (t = 0; t < tries; t++) {
        if (t > 0) {
            wisp_sys_sleep_ms(10);
        }
        wisp_sys_mutex_lock(lock);
        v = *stop ? -1 : admit_locked(opt, first, stride, n, ip, capped, &wait);
        wisp_sys_mutex_unlock(lock);
        if (v >= 0 || !wait) {
            break;
        }
    }
    return v;
}

bool wisp_svc_hand_off(wisp_sys_mutex_t *lock, struct wisp_tcp_service_stats *st, unsigned *threads,
                       struct wisp_svc_conn *c, wisp_sys_sem_t *go, wisp_sys_thread_t *thread, const char *name,
                       wisp_sys_thread_fn fn, void *arg)
{
    /* worker is written (under lock) only by the accept thread holding
     * the slot's reservation, and at stop after the accept threads ended:
     * this reads our own or one the admission's lock ordered. */
    bool worker = c->worker != 0;

    if (!worker && wisp_sys_sem_new(go, 0) != WISP_OK) {
        return false;
    }
    wisp_sys_mutex_lock(lock);
    st->connections++;
    st->active++;
    if (!worker) {
        (*threads)++;
        c->worker = 1;
    }
    c->state = WISP_SVC_SLOT_RUNNING;
    wisp_sys_mutex_unlock(lock);
    if (worker) {
        wisp_sys_sem_signal(go);
        return true;
    }
    if (wisp_sys_thread_new(thread, name, fn, arg, 0, 0) == WISP_OK) {
        return true;
    }
    wisp_sys_mutex_lock(lock); /* request_stop signals go under lock only */
    st->connections--;
    st->active--;
    (*threads)--;
    c->worker = 0;
    c->state = WISP_SVC_SLOT_RESERVED;
    wisp_sys_mutex_unlock(lock);
    wisp_sys_sem_free(go);
    return false;
}

void wisp_svc_conn_done(wisp_sys_mutex_t *lock, struct wisp_tcp_service_stats *st, struct wisp_svc_conn *c,
                        wisp_err_t how, uint64_t bytes_rx, uint64_t bytes_tx)
{
    uint8_t end = c->end;

    wisp_sys_mutex_lock(lock);
    st->active--;
    if (end == WISP_SVC_END_RECLAIM) {
        st->reclaimed++;
        st->aborted++;
    } else if (end == WISP_SVC_END_IDLE || end == WISP_SVC_END_STUCK) {
        st->timeouts++;
        if (end == WISP_SVC_END_IDLE) {
            st->closed++;
        } else {
            st->aborted++;
        }
    } else if (how == WISP_OK) {
        st->closed++;
    } else if (how == WISP_ERR_ABRT) {
        st->aborted++;
    } else {
        st->resets++;
    }
    st->bytes_rx += bytes_rx;
    st->bytes_tx += bytes_tx;
    c->state = WISP_SVC_SLOT_FREE; /* the accept thread may fill it again */
    wisp_sys_mutex_unlock(lock);
}
