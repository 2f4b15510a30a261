/**
 * @file lwip_app.c
 * The lwIP compatibility layer (wisp/lwip_app.h): lwIP 2.1's application-
 * level names on wisp's public API. No private access: this file is an
 * application of wisp like any other.
 *
 * The raw API's per-PCB records: wisp gives a callback the PCB's one
 * argument; lwIP's callbacks differ in signature (tcp_sent's u16_t length,
 * udp_recv without the datagram's IP information), so every TCP / UDP PCB
 * made through this layer has a record holding the application's
 * callbacks and argument, and wisp's argument is that record. A record is
 * freed when its PCB is: tcp_close (accepted), tcp_abort and every other
 * end of the PCB come through wisp's error callback, which the layer
 * always installs; udp_remove. All of them are touched in the core context
 * only (like the PCBs), so they need no lock.
 */
#include <string.h>

#include "wisp/lwip_app.h"

#ifdef WISP_LWIP_DEFAULT_RAND
uint32_t WISP_LWIP_DEFAULT_RAND(void *ctx);
#endif

#define TCP_RECS (WISP_TCP_PCB_COUNT + WISP_TCP_LISTEN_COUNT)
#define UDP_RECS WISP_UDP_PCB_COUNT
#define DNS_RECS 8
#define CB_RECS WISP_TCPIP_MBOX_SIZE

struct tcp_rec {
    struct wisp_tcp_pcb *pcb;   /* NULL = free */
    void *arg;
    tcp_recv_fn recv;
    tcp_sent_fn sent;
    tcp_err_fn err;
    tcp_poll_fn poll;
    tcp_accept_fn accept;
    tcp_connected_fn connected;
};

struct udp_rec {
    struct wisp_udp_pcb *pcb;   /* NULL = free */
    udp_recv_fn recv;
    void *arg;
};

struct dns_rec {
    dns_found_callback found;   /* NULL = free */
    void *arg;
};

struct cb_rec {
    tcpip_callback_fn fn;       /* NULL = free */
    void *ctx;
};

struct wisp_lwip_thread {
    wisp_sys_thread_t t;
    lwip_thread_fn fn;
    void *arg;
    uint8_t state;              /* 0 free, 1 running, 2 returned (to join) */
};

struct wisp_lwip {
    struct wisp_stack stack;
    struct wisp_tcpip tcpip;
    struct wisp_netconn_api ncapi;
    struct wisp_sockets socks;
    bool up;
    uint32_t (*rand_fn)(void *ctx);
    void *rand_ctx;
    wisp_sys_mutex_t lock;       /* threads, callback records */
    wisp_sys_mutex_t prot;       /* SYS_ARCH_PROTECT */
    struct tcp_rec tcp[TCP_RECS];
    struct udp_rec udp[UDP_RECS];
    struct dns_rec dns[DNS_RECS];
    struct cb_rec cb[CB_RECS];
    struct wisp_lwip_thread thr[WISP_LWIP_MAX_THREADS];
    ip_addr_t dns_server[WISP_DNS_MAX_SERVERS > 0 ? WISP_DNS_MAX_SERVERS : 1];
    struct wisp_lwip_stats st;
};

/* lwIP's API is process-wide: the layer's one instance (see lwip_app.h). */
static struct wisp_lwip g_lwip;
#define L (&g_lwip)

struct wisp_netconn_api *wisp_lwip_netconn_api;
struct netif *netif_default;

static WISP_LWIP_THREAD_LOCAL int t_core_held;
static WISP_LWIP_THREAD_LOCAL int t_prot_depth;

/* ------------------------------------------------------------ instance */

void wisp_lwip_set_rand(uint32_t (*rand_fn)(void *ctx), void *ctx)
{
    L->rand_fn = rand_fn;
    L->rand_ctx = ctx;
}

struct wisp_stack *wisp_lwip_stack(void)
{
    return L->up ? &L->stack : NULL;
}

struct wisp_tcpip *wisp_lwip_tcpip(void)
{
    return L->up ? &L->tcpip : NULL;
}

struct wisp_netconn_api *wisp_lwip_netconn(void)
{
    return L->up ? &L->ncapi : NULL;
}

bool wisp_lwip_in_core(void)
{
    return t_core_held != 0 || (L->up && wisp_tcpip_on_stack_thread(&L->tcpip));
}

void wisp_lwip_lock(void)
{
    wisp_tcpip_lock(&L->tcpip);
    t_core_held = 1;
}

void wisp_lwip_unlock(void)
{
    t_core_held = 0;
    wisp_tcpip_unlock(&L->tcpip);
}

/* Enter the core for a call made from any thread: true when the lock was
 * taken (give it to core_leave). */
static bool core_enter(void)
{
    if (wisp_lwip_in_core()) {
        return false;
    }
    wisp_lwip_lock();
    return true;
}

static void core_leave(bool taken)
{
    if (taken) {
        wisp_lwip_unlock();
    }
}

void wisp_lwip_get_stats(struct wisp_lwip_stats *out)
{
    bool k = core_enter();
    *out = L->st;
    core_leave(k);
}

static uint32_t lwip_now(void *ctx)
{
    (void)ctx;
    return wisp_sys_now_ms();
}

static wisp_err_t run_cb(struct wisp_stack *s, void *arg)
{
    struct cb_rec *r = (struct cb_rec *)arg;
    tcpip_callback_fn fn;
    void *ctx;
    (void)s;
    wisp_sys_mutex_lock(&L->lock);
    fn = r->fn;
    ctx = r->ctx;
    r->fn = NULL;
    wisp_sys_mutex_unlock(&L->lock);
    if (fn != NULL) {
        fn(ctx);
    }
    return WISP_OK;
}

err_t tcpip_callback(tcpip_callback_fn function, void *ctx)
{
    struct cb_rec *r = NULL;
    unsigned i;
    wisp_err_t e;
    if (function == NULL || !L->up) {
        return ERR_ARG;
    }
    wisp_sys_mutex_lock(&L->lock);
    for (i = 0; i < CB_RECS; i++) {
        if (L->cb[i].fn == NULL) {
            r = &L->cb[i];
            r->fn = function;
            r->ctx = ctx;
            break;
        }
    }
    wisp_sys_mutex_unlock(&L->lock);
    if (r == NULL) {
        return ERR_MEM;
    }
    e = wisp_tcpip_callback(&L->tcpip, run_cb, r);
    if (e != WISP_OK) {
        wisp_sys_mutex_lock(&L->lock);
        r->fn = NULL;
        wisp_sys_mutex_unlock(&L->lock);
    }
    return e;
}

err_t tcpip_try_callback(tcpip_callback_fn function, void *ctx)
{
    return tcpip_callback(function, ctx);
}

void tcpip_init(tcpip_init_done_fn initfunc, void *arg)
{
    struct wisp_config cfg;
    wisp_err_t e;

    WISP_ASSERT(!L->up);
    memset(&cfg, 0, sizeof cfg);
    cfg.now_ms = lwip_now;
    cfg.rand = L->rand_fn;
    cfg.rand_ctx = L->rand_ctx;
#ifdef WISP_LWIP_DEFAULT_RAND
    if (cfg.rand == NULL) {
        cfg.rand = WISP_LWIP_DEFAULT_RAND;
    }
#endif
    /* lwIP asserts when it cannot start; so does this layer. */
    WISP_ASSERT(cfg.rand != NULL); /* wisp_lwip_set_rand() first */
    e = wisp_sys_init();
    WISP_ASSERT(e == WISP_OK);
    e = wisp_sys_mutex_new(&L->lock);
    WISP_ASSERT(e == WISP_OK);
    e = wisp_sys_mutex_new(&L->prot);
    WISP_ASSERT(e == WISP_OK);
    e = wisp_stack_init(&L->stack, &cfg);
    WISP_ASSERT(e == WISP_OK);
    e = wisp_tcpip_start(&L->tcpip, &L->stack, NULL);
    WISP_ASSERT(e == WISP_OK);
    e = wisp_netconn_api_init(&L->ncapi, &L->tcpip);
    WISP_ASSERT(e == WISP_OK);
    wisp_lwip_netconn_api = &L->ncapi;
    e = wisp_sockets_init(&L->socks, &L->ncapi);
    WISP_ASSERT(e == WISP_OK);
    (void)e;
    L->up = true;
    if (initfunc != NULL) {
        e = tcpip_callback(initfunc, arg);
        WISP_ASSERT(e == WISP_OK);
    }
}

static unsigned recs_in_use(void)
{
    unsigned i, n = 0;
    for (i = 0; i < TCP_RECS; i++) {
        n += L->tcp[i].pcb != NULL;
    }
    for (i = 0; i < UDP_RECS; i++) {
        n += L->udp[i].pcb != NULL;
    }
    for (i = 0; i < DNS_RECS; i++) {
        n += L->dns[i].found != NULL;
    }
    return n;
}

unsigned wisp_lwip_pools_in_use(void)
{
    unsigned n;
    struct wisp_netconn_stats ns;
    bool k;
    if (!L->up) {
        return 0;
    }
    wisp_netconn_api_stats(&L->ncapi, &ns);
    k = core_enter();
    n = wisp_stack_pools_in_use(&L->stack) + recs_in_use();
    core_leave(k);
    return n + (unsigned)wisp_sockets_in_use() + ns.conns_used + ns.bufs_used;
}

int wisp_lwip_shutdown(void)
{
    int left;
    unsigned i, running;
    if (!L->up) {
        return 0;
    }
    left = wisp_sockets_deinit();
    if (wisp_netconn_api_deinit(&L->ncapi) != WISP_OK) {
        left++;
    }
    wisp_tcpip_stop(&L->tcpip);
    wisp_stack_deinit(&L->stack);
    /* single-threaded again: everything must be back */
    left += (int)(wisp_stack_pools_in_use(&L->stack) + recs_in_use());
    wisp_sys_mutex_lock(&L->lock);
    for (i = 0; i < WISP_LWIP_MAX_THREADS; i++) {
        if (L->thr[i].state == 2) {
            (void)wisp_sys_thread_join(&L->thr[i].t);
            L->thr[i].state = 0;
        }
    }
    /* callbacks the stopped thread never ran: their records go */
    memset(L->cb, 0, sizeof L->cb);
    for (i = 0, running = 0; i < WISP_LWIP_MAX_THREADS; i++) {
        running += L->thr[i].state != 0;
    }
    wisp_sys_mutex_unlock(&L->lock);
    wisp_lwip_netconn_api = NULL;
    netif_default = NULL;
    L->up = false;
    if (running == 0) {
        /* (a thread still running would take L->lock when it returns) */
        wisp_sys_mutex_free(&L->lock);
        wisp_sys_mutex_free(&L->prot);
    }
    return left;
}

/* ----------------------------------------------------------------- sys */

err_t sys_sem_new(sys_sem_t *sem, u8_t count)
{
    wisp_err_t e = wisp_sys_sem_new(&sem->sem, count);
    sem->valid = e == WISP_OK;
    return e;
}

void sys_sem_signal(sys_sem_t *sem)
{
    wisp_sys_sem_signal(&sem->sem);
}

u32_t sys_arch_sem_wait(sys_sem_t *sem, u32_t timeout)
{
    uint32_t t0 = wisp_sys_now_ms();
    /* lwIP: 0 = forever */
    if (wisp_sys_sem_wait(&sem->sem, timeout == 0 ? WISP_SYS_FOREVER : timeout) != WISP_OK) {
        return SYS_ARCH_TIMEOUT;
    }
    return wisp_sys_now_ms() - t0;
}

void sys_sem_free(sys_sem_t *sem)
{
    wisp_sys_sem_free(&sem->sem);
    sem->valid = 0;
}

err_t sys_mutex_new(sys_mutex_t *mutex)
{
    wisp_err_t e = wisp_sys_mutex_new(&mutex->mutex);
    mutex->valid = e == WISP_OK;
    return e;
}

void sys_mutex_lock(sys_mutex_t *mutex)
{
    wisp_sys_mutex_lock(&mutex->mutex);
}

void sys_mutex_unlock(sys_mutex_t *mutex)
{
    wisp_sys_mutex_unlock(&mutex->mutex);
}

void sys_mutex_free(sys_mutex_t *mutex)
{
    wisp_sys_mutex_free(&mutex->mutex);
    mutex->valid = 0;
}

err_t sys_mbox_new(sys_mbox_t *mbox, int size)
{
    wisp_err_t e = wisp_sys_mbox_new(&mbox->mbox, size > 0 ? (unsigned)size : 1u);
    mbox->valid = e == WISP_OK;
    return e;
}

void sys_mbox_post(sys_mbox_t *mbox, void *msg)
{
    wisp_sys_mbox_post(&mbox->mbox, msg);
}

err_t sys_mbox_trypost(sys_mbox_t *mbox, void *msg)
{
    return wisp_sys_mbox_trypost(&mbox->mbox, msg) == WISP_OK ? ERR_OK : ERR_MEM;
}

u32_t sys_arch_mbox_fetch(sys_mbox_t *mbox, void **msg, u32_t timeout)
{
    uint32_t t0 = wisp_sys_now_ms();
    void *m = NULL;
    if (wisp_sys_mbox_fetch(&mbox->mbox, &m, timeout == 0 ? WISP_SYS_FOREVER : timeout) != WISP_OK) {
        if (msg != NULL) {
            *msg = NULL;
        }
        return SYS_ARCH_TIMEOUT;
    }
    if (msg != NULL) {
        *msg = m;
    }
    return wisp_sys_now_ms() - t0;
}

u32_t sys_arch_mbox_tryfetch(sys_mbox_t *mbox, void **msg)
{
    void *m = NULL;
    if (wisp_sys_mbox_tryfetch(&mbox->mbox, &m) != WISP_OK) {
        return SYS_MBOX_EMPTY;
    }
    if (msg != NULL) {
        *msg = m;
    }
    return 0;
}

void sys_mbox_free(sys_mbox_t *mbox)
{
    wisp_sys_mbox_free(&mbox->mbox);
    mbox->valid = 0;
}

static void thread_main(void *arg)
{
    struct wisp_lwip_thread *r = (struct wisp_lwip_thread *)arg;
    r->fn(r->arg);
    wisp_sys_mutex_lock(&L->lock);
    r->state = 2;
    wisp_sys_mutex_unlock(&L->lock);
}

sys_thread_t sys_thread_new(const char *name, lwip_thread_fn thread, void *arg, int stacksize, int prio)
{
    struct wisp_lwip_thread *r = NULL;
    unsigned i;
    if (thread == NULL || !L->up) {
        return NULL;
    }
    wisp_sys_mutex_lock(&L->lock);
    for (i = 0; i < WISP_LWIP_MAX_THREADS && r == NULL; i++) {
        if (L->thr[i].state == 2) {
            /* returned: join it so its record can be reused */
            (void)wisp_sys_thread_join(&L->thr[i].t);
            L->thr[i].state = 0;
        }
        if (L->thr[i].state == 0) {
            r = &L->thr[i];
            r->state = 1;
        }
    }
    if (r == NULL) {
        L->st.thread_exhausted++;
        wisp_sys_mutex_unlock(&L->lock);
        return NULL;
    }
    r->fn = thread;
    r->arg = arg;
    if (wisp_sys_thread_new(&r->t, name, thread_main, r, stacksize > 0 ? (size_t)stacksize : 0u, prio) != WISP_OK) {
        r->state = 0;
        r = NULL;
    }
    wisp_sys_mutex_unlock(&L->lock);
    return r;
}

sys_prot_t sys_arch_protect(void)
{
    if (t_prot_depth++ == 0) {
        wisp_sys_mutex_lock(&L->prot);
    }
    return 0;
}

void sys_arch_unprotect(sys_prot_t pval)
{
    (void)pval;
    if (t_prot_depth > 0 && --t_prot_depth == 0) {
        wisp_sys_mutex_unlock(&L->prot);
    }
}

/* ---------------------------------------------------------------- pbuf */

static const enum wisp_pbuf_kind kind_of[] = { WISP_PBUF_RAM, WISP_PBUF_ROM, WISP_PBUF_REF, WISP_PBUF_POOL };

struct pbuf *pbuf_alloc(pbuf_layer layer, u16_t length, pbuf_type type)
{
    struct pbuf *p;
    bool k;
    if (!L->up || (unsigned)type > (unsigned)PBUF_POOL) {
        return NULL;
    }
    k = core_enter();
    p = wisp_pbuf_alloc(&L->stack, (enum wisp_pbuf_layer)layer, length, kind_of[type]);
    core_leave(k);
    return p;
}

u8_t wisp_lwip_pbuf_free(struct pbuf *p)
{
    unsigned n;
    bool k;
    if (p == NULL) {
        return 0;
    }
    k = core_enter();
    n = wisp_pbuf_free(p);
    core_leave(k);
    return (u8_t)(n > 255u ? 255u : n);
}

void wisp_lwip_pbuf_ref(struct pbuf *p)
{
    bool k;
    if (p == NULL) {
        return;
    }
    k = core_enter();
    wisp_pbuf_ref(p);
    core_leave(k);
}

void pbuf_cat(struct pbuf *head, struct pbuf *tail)
{
    bool k;
    if (head == NULL || tail == NULL) {
        return;
    }
    k = core_enter();
    wisp_pbuf_cat(head, tail);
    core_leave(k);
}

void pbuf_chain(struct pbuf *head, struct pbuf *tail)
{
    bool k;
    if (head == NULL || tail == NULL) {
        return;
    }
    k = core_enter();
    wisp_pbuf_chain(head, tail);
    core_leave(k);
}

err_t pbuf_copy(struct pbuf *p_to, const struct pbuf *p_from)
{
    const struct pbuf *q;
    u16_t off = 0;
    if (p_to == NULL || p_from == NULL || p_to->tot_len < p_from->tot_len) {
        return ERR_ARG;
    }
    for (q = p_from; q != NULL; q = q->next) {
        if (wisp_pbuf_copy_in(p_to, q->payload, q->len, off) != WISP_OK) {
            return ERR_ARG;
        }
        off = (u16_t)(off + q->len);
    }
    return ERR_OK;
}

struct pbuf *pbuf_clone(pbuf_layer l, pbuf_type type, struct pbuf *p)
{
    struct pbuf *q = pbuf_alloc(l, p->tot_len, type);
    if (q != NULL && pbuf_copy(q, p) != ERR_OK) {
        (void)wisp_lwip_pbuf_free(q);
        q = NULL;
    }
    return q;
}

void pbuf_put_at(struct pbuf *p, u16_t offset, u8_t data)
{
    if (p != NULL && offset < p->tot_len) {
        (void)wisp_pbuf_copy_in(p, &data, 1, offset);
    }
}

u16_t pbuf_memcmp(const struct pbuf *p, u16_t offset, const void *s2, u16_t n)
{
    const u8_t *b = (const u8_t *)s2;
    u16_t i;
    for (i = 0; i < n; i++) {
        int c = wisp_pbuf_get_u8(p, (u16_t)(offset + i));
        if (c < 0 || (u8_t)c != b[i]) {
            return (u16_t)(i + 1u);
        }
    }
    return 0;
}

/* ----------------------------------------------------------------- tcp */

static struct tcp_rec *tcp_rec_of(const struct wisp_tcp_pcb *pcb)
{
    unsigned i;
    for (i = 0; pcb != NULL && i < TCP_RECS; i++) {
        if (L->tcp[i].pcb == pcb) {
            return &L->tcp[i];
        }
    }
    return NULL;
}

static void t_err(void *arg, wisp_err_t err)
{
    struct tcp_rec *r = (struct tcp_rec *)arg;
    tcp_err_fn fn = r->err;
    void *uarg = r->arg;
    memset(r, 0, sizeof *r);   /* the PCB is gone: so is its record */
    if (fn != NULL) {
        fn(uarg, err);
    }
}

/* A record for pcb (whose wisp argument and error callback it becomes),
 * or NULL (counted). */
static struct tcp_rec *tcp_rec_new(struct wisp_tcp_pcb *pcb, void *uarg)
{
    unsigned i;
    for (i = 0; i < TCP_RECS; i++) {
        if (L->tcp[i].pcb == NULL) {
            struct tcp_rec *r = &L->tcp[i];
            memset(r, 0, sizeof *r);
            r->pcb = pcb;
            r->arg = uarg;
            wisp_tcp_arg(pcb, r);
            wisp_tcp_err(pcb, t_err);
            return r;
        }
    }
    L->st.tcp_rec_exhausted++;
    return NULL;
}

struct tcp_pcb *tcp_new(void)
{
    struct wisp_tcp_pcb *pcb;
    if (!L->up) {
        return NULL;
    }
    pcb = wisp_tcp_new(&L->stack);
    if (pcb != NULL && tcp_rec_new(pcb, NULL) == NULL) {
        (void)wisp_tcp_close(pcb); /* CLOSED: freed at once */
        pcb = NULL;
    }
    return pcb;
}

struct tcp_pcb *tcp_new_ip_type(u8_t type)
{
    return type == IPADDR_TYPE_V6 ? NULL : tcp_new();
}

void tcp_arg(struct tcp_pcb *pcb, void *arg)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    if (r != NULL) {
        r->arg = arg;
    }
}

struct tcp_pcb *tcp_listen_with_backlog_and_err(struct tcp_pcb *pcb, u8_t backlog, err_t *err)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    wisp_err_t e = WISP_OK;
    struct wisp_tcp_pcb *l = wisp_tcp_listen(pcb, backlog, &e);
    if (l != NULL && r != NULL) {
        /* the record follows the PCB: pcb was freed, l takes its place */
        r->pcb = l;
        wisp_tcp_arg(l, r);
        wisp_tcp_err(l, t_err);
    }
    if (err != NULL) {
        *err = l != NULL ? ERR_OK : e;
    }
    return l;
}

struct tcp_pcb *tcp_listen_with_backlog(struct tcp_pcb *pcb, u8_t backlog)
{
    return tcp_listen_with_backlog_and_err(pcb, backlog, NULL);
}

static wisp_err_t t_accept(void *arg, struct wisp_tcp_pcb *newpcb, wisp_err_t err)
{
    struct tcp_rec *lr = (struct tcp_rec *)arg;
    struct tcp_rec *r;
    err_t ret;
    if (lr->accept == NULL) {
        return ERR_VAL;
    }
    /* lwIP: the new PCB starts with the listener's argument */
    r = tcp_rec_new(newpcb, lr->arg);
    if (r == NULL) {
        return ERR_MEM;  /* wisp aborts newpcb */
    }
    ret = lr->accept(lr->arg, newpcb, err);
    if (ret != ERR_OK && ret != ERR_ABRT && r->pcb == newpcb) {
        /* refused: wisp aborts it; the record goes now, quietly */
        wisp_tcp_err(newpcb, NULL);
        memset(r, 0, sizeof *r);
    }
    return ret;
}

void tcp_accept(struct tcp_pcb *pcb, tcp_accept_fn accept)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    if (r == NULL) {
        return;
    }
    r->accept = accept;
    wisp_tcp_accept(pcb, accept != NULL ? t_accept : NULL);
}

static wisp_err_t t_recv(void *arg, struct wisp_tcp_pcb *pcb, struct wisp_pbuf *p, wisp_err_t err)
{
    struct tcp_rec *r = (struct tcp_rec *)arg;
    return r->recv(r->arg, pcb, p, err);
}

void tcp_recv(struct tcp_pcb *pcb, tcp_recv_fn recv)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    if (r == NULL) {
        return;
    }
    r->recv = recv;
    wisp_tcp_recv(pcb, recv != NULL ? t_recv : NULL);
}

static wisp_err_t t_sent(void *arg, struct wisp_tcp_pcb *pcb, uint32_t len)
{
    struct tcp_rec *r = (struct tcp_rec *)arg;
    /* lwIP reports acknowledged bytes in u16_t pieces */
    while (len > 0) {
        u16_t n = (u16_t)(len > 0xffffu ? 0xffffu : len);
        err_t e = r->sent(r->arg, pcb, n);
        if (e != ERR_OK || r->pcb != pcb || r->sent == NULL) {
            return e;
        }
        len -= n;
    }
    return ERR_OK;
}

void tcp_sent(struct tcp_pcb *pcb, tcp_sent_fn sent)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    if (r == NULL) {
        return;
    }
    r->sent = sent;
    wisp_tcp_sent(pcb, sent != NULL ? t_sent : NULL);
}

void tcp_err(struct tcp_pcb *pcb, tcp_err_fn err)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    if (r != NULL) {
        r->err = err;  /* wisp's error callback stays t_err */
    }
}

static wisp_err_t t_poll(void *arg, struct wisp_tcp_pcb *pcb)
{
    struct tcp_rec *r = (struct tcp_rec *)arg;
    return r->poll(r->arg, pcb);
}

void tcp_poll(struct tcp_pcb *pcb, tcp_poll_fn poll, u8_t interval)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    unsigned iv = (unsigned)interval * 500u / WISP_TCP_POLL_UNIT_MS;
    if (r == NULL) {
        return;
    }
    r->poll = poll;
    wisp_tcp_poll(pcb, poll != NULL ? t_poll : NULL, (uint8_t)(iv > 255u ? 255u : iv));
}

static wisp_err_t t_connected(void *arg, struct wisp_tcp_pcb *pcb, wisp_err_t err)
{
    struct tcp_rec *r = (struct tcp_rec *)arg;
    return r->connected(r->arg, pcb, err);
}

err_t tcp_connect(struct tcp_pcb *pcb, const ip_addr_t *ipaddr, u16_t port, tcp_connected_fn connected)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    if (r == NULL) {
        return ERR_ARG;
    }
    r->connected = connected;
    return wisp_tcp_connect(pcb, ipaddr, port, connected != NULL ? t_connected : NULL);
}

err_t tcp_write(struct tcp_pcb *pcb, const void *dataptr, u16_t len, u8_t apiflags)
{
    wisp_err_t e = wisp_tcp_write(pcb, dataptr, len, apiflags);
    return e == WISP_ERR_VAL ? ERR_MEM : e;
}

err_t tcp_close(struct tcp_pcb *pcb)
{
    struct tcp_rec *r = tcp_rec_of(pcb);
    err_t e = wisp_tcp_close(pcb);
    if (e == ERR_OK && r != NULL) {
        memset(r, 0, sizeof *r);   /* no callback after close */
    }
    return e;
}

err_t tcp_shutdown(struct tcp_pcb *pcb, int shut_rx, int shut_tx)
{
    if (shut_rx && shut_tx) {
        return tcp_close(pcb);  /* lwIP: both = close */
    }
    return wisp_tcp_shutdown(pcb, shut_rx != 0, shut_tx != 0);
}

void tcp_abort(struct tcp_pcb *pcb)
{
    wisp_tcp_abort(pcb);   /* t_err frees the record, calls the application's */
}

u16_t tcp_mss(const struct tcp_pcb *pcb)
{
    struct wisp_tcp_info i;
    wisp_tcp_get_info(pcb, &i);
    return i.mss;
}

/* ----------------------------------------------------------------- udp */

static struct udp_rec *udp_rec_of(const struct wisp_udp_pcb *pcb)
{
    unsigned i;
    for (i = 0; pcb != NULL && i < UDP_RECS; i++) {
        if (L->udp[i].pcb == pcb) {
            return &L->udp[i];
        }
    }
    return NULL;
}

struct udp_pcb *udp_new(void)
{
    struct wisp_udp_pcb *pcb;
    struct udp_rec *r;
    unsigned i;
    if (!L->up) {
        return NULL;
    }
    pcb = wisp_udp_new(&L->stack);
    if (pcb == NULL) {
        return NULL;
    }
    r = NULL;
    for (i = 0; i < UDP_RECS && r == NULL; i++) {
        if (L->udp[i].pcb == NULL) {
            r = &L->udp[i];
        }
    }
    if (r == NULL) {
        L->st.udp_rec_exhausted++;
        wisp_udp_remove(pcb);
        return NULL;
    }
    memset(r, 0, sizeof *r);
    r->pcb = pcb;
    return pcb;
}

struct udp_pcb *udp_new_ip_type(u8_t type)
{
    return type == IPADDR_TYPE_V6 ? NULL : udp_new();
}

void udp_remove(struct udp_pcb *pcb)
{
    struct udp_rec *r = udp_rec_of(pcb);
    if (r != NULL) {
        memset(r, 0, sizeof *r);
    }
    wisp_udp_remove(pcb);
}

static void u_recv(void *arg, struct wisp_udp_pcb *pcb, struct wisp_pbuf *p, const wisp_ipaddr_t *src, uint16_t port,
                   const struct wisp_ip_info *ip)
{
    struct udp_rec *r = (struct udp_rec *)arg;
    (void)ip;
    r->recv(r->arg, pcb, p, src, port);
}

void udp_recv(struct udp_pcb *pcb, udp_recv_fn recv, void *recv_arg)
{
    struct udp_rec *r = udp_rec_of(pcb);
    if (r == NULL) {
        return;
    }
    r->recv = recv;
    r->arg = recv_arg;
    wisp_udp_recv(pcb, recv != NULL ? u_recv : NULL, r);
}

/* --------------------------------------------------------------- netif */

static void netif_refresh(struct netif *n)
{
    bool k = core_enter();
    ip4_addr_set_u32(&n->ip_addr, wisp_netif_ip4_addr(&n->wisp_nif));
    ip4_addr_set_u32(&n->netmask, wisp_netif_ip4_mask(&n->wisp_nif));
    ip4_addr_set_u32(&n->gw, wisp_netif_ip4_gw(&n->wisp_nif));
    core_leave(k);
}

static u32_t addr_or_0(const ip4_addr_t *a)
{
    return a != NULL ? ip4_addr_get_u32(a) : 0u;
}

struct netif *netif_add(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask,
                        const ip4_addr_t *gw, void *state, netif_init_fn init, netif_input_fn input)
{
    char name[WISP_NETIF_NAME_MAX + 1];
    wisp_err_t e;
    if (netif == NULL || init == NULL || !L->up) {
        return NULL;
    }
    memset(netif, 0, sizeof *netif);
    netif->state = state;
    netif->input = input;
    netif->mtu = 1500;
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    if (init(netif) != ERR_OK || netif->wisp_dev == NULL) {
        return NULL;
    }
    name[0] = netif->name[0];
    name[1] = netif->name[1];
    name[2] = (char)('0' + netif->num % 10u);
    name[3] = '\0';
    e = wisp_netif_add(&L->stack, &netif->wisp_nif, name, netif->wisp_dev,
                       (netif->flags & NETIF_FLAG_ETHARP) ? &wisp_link_eth : &wisp_link_rawip,
                       netif->hwaddr_len > 0 ? netif->hwaddr : NULL, netif->hwaddr_len, netif->mtu);
    if (e != WISP_OK) {
        return NULL;
    }
    netif->flags = (u8_t)(netif->flags & ~(NETIF_FLAG_UP | NETIF_FLAG_LINK_UP));
    wisp_netif_set_ip4(&netif->wisp_nif, addr_or_0(ipaddr), addr_or_0(netmask), addr_or_0(gw));
    netif_refresh(netif);
    return netif;
}

struct netif *netif_add_noaddr(struct netif *netif, void *state, netif_init_fn init, netif_input_fn input)
{
    return netif_add(netif, NULL, NULL, NULL, state, init, input);
}

void netif_remove(struct netif *netif)
{
#if WISP_DHCP
    wisp_dhcp_stop(&netif->wisp_dhcp, false);
#endif
    wisp_netif_remove(&netif->wisp_nif);
    if (netif_default == netif) {
        netif_default = NULL;
    }
}

void netif_set_addr(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask, const ip4_addr_t *gw)
{
    wisp_netif_set_ip4(&netif->wisp_nif, addr_or_0(ipaddr), addr_or_0(netmask), addr_or_0(gw));
    netif_refresh(netif);
}

void netif_set_ipaddr(struct netif *netif, const ip4_addr_t *ipaddr)
{
    netif_refresh(netif);
    netif_set_addr(netif, ipaddr, &netif->netmask, &netif->gw);
}

void netif_set_netmask(struct netif *netif, const ip4_addr_t *netmask)
{
    netif_refresh(netif);
    netif_set_addr(netif, &netif->ip_addr, netmask, &netif->gw);
}

void netif_set_gw(struct netif *netif, const ip4_addr_t *gw)
{
    netif_refresh(netif);
    netif_set_addr(netif, &netif->ip_addr, &netif->netmask, gw);
}

void netif_set_default(struct netif *netif)
{
    /* wisp routes off-link traffic through the interface that has a
     * gateway; the default is recorded for the application */
    netif_default = netif;
}

void netif_set_up(struct netif *netif)
{
    if (netif->flags & NETIF_FLAG_UP) {
        return;
    }
    netif->flags |= NETIF_FLAG_UP;
    wisp_netif_set_up(&netif->wisp_nif, true);
    if (netif->status_callback != NULL) {
        netif->status_callback(netif);
    }
}

void netif_set_down(struct netif *netif)
{
    if (!(netif->flags & NETIF_FLAG_UP)) {
        return;
    }
    netif->flags = (u8_t)(netif->flags & ~NETIF_FLAG_UP);
    wisp_netif_set_up(&netif->wisp_nif, false);
    if (netif->status_callback != NULL) {
        netif->status_callback(netif);
    }
}

void netif_set_link_up(struct netif *netif)
{
    if (netif->flags & NETIF_FLAG_LINK_UP) {
        return;
    }
    netif->flags |= NETIF_FLAG_LINK_UP;
    wisp_netif_set_link(&netif->wisp_nif, true);
    if (netif->link_callback != NULL) {
        netif->link_callback(netif);
    }
}

void netif_set_link_down(struct netif *netif)
{
    if (!(netif->flags & NETIF_FLAG_LINK_UP)) {
        return;
    }
    netif->flags = (u8_t)(netif->flags & ~NETIF_FLAG_LINK_UP);
    wisp_netif_set_link(&netif->wisp_nif, false);
    if (netif->link_callback != NULL) {
        netif->link_callback(netif);
    }
}

const ip4_addr_t *netif_ip4_addr(struct netif *netif)
{
    netif_refresh(netif);
    return &netif->ip_addr;
}

const ip4_addr_t *netif_ip4_netmask(struct netif *netif)
{
    netif_refresh(netif);
    return &netif->netmask;
}

const ip4_addr_t *netif_ip4_gw(struct netif *netif)
{
    netif_refresh(netif);
    return &netif->gw;
}

/* lwIP's convention: an error return leaves p with the caller (it frees
 * it). Here only arguments that cannot be used return one; a frame the
 * stack thread cannot take (mailbox full, stopping) is freed by wisp and
 * counted in tcpip.input.drop, so that case returns ERR_OK. */
err_t tcpip_input(struct pbuf *p, struct netif *inp)
{
    if (p == NULL || inp == NULL || inp->wisp_dev == NULL || !L->up) {
        return ERR_ARG;
    }
    if (wisp_lwip_in_core()) {
        wisp_dev_input(inp->wisp_dev, p);
        return ERR_OK;
    }
    (void)wisp_tcpip_input(&L->tcpip, inp->wisp_dev, p);  /* consumed either way */
    return ERR_OK;
}

/* ------------------------------------------------------------ netifapi */

err_t netifapi_netif_add(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask,
                         const ip4_addr_t *gw, void *state, netif_init_fn init, netif_input_fn input)
{
    struct netif *n;
    bool k = core_enter();
    n = netif_add(netif, ipaddr, netmask, gw, state, init, input);
    core_leave(k);
    return n != NULL ? ERR_OK : ERR_IF;
}

err_t netifapi_netif_set_addr(struct netif *netif, const ip4_addr_t *ipaddr, const ip4_addr_t *netmask,
                              const ip4_addr_t *gw)
{
    bool k = core_enter();
    netif_set_addr(netif, ipaddr, netmask, gw);
    core_leave(k);
    return ERR_OK;
}

/* the one-argument netif calls */
static err_t netifapi_run(void (*fn)(struct netif *), struct netif *netif)
{
    bool k;
    if (netif == NULL) {
        return ERR_ARG;
    }
    k = core_enter();
    fn(netif);
    core_leave(k);
    return ERR_OK;
}

err_t netifapi_netif_remove(struct netif *netif)
{
    return netifapi_run(netif_remove, netif);
}

err_t netifapi_netif_set_up(struct netif *netif)
{
    return netifapi_run(netif_set_up, netif);
}

err_t netifapi_netif_set_down(struct netif *netif)
{
    return netifapi_run(netif_set_down, netif);
}

err_t netifapi_netif_set_default(struct netif *netif)
{
    netif_default = netif;
    return ERR_OK;
}

err_t netifapi_netif_set_link_up(struct netif *netif)
{
    return netifapi_run(netif_set_link_up, netif);
}

err_t netifapi_netif_set_link_down(struct netif *netif)
{
    return netifapi_run(netif_set_link_down, netif);
}

/* ---------------------------------------------------------------- dhcp */

#if LWIP_DHCP
/* lwIP's DHCP hands the lease's DNS servers to its resolver
 * (LWIP_DHCP_PROVIDE_DNS_SERVERS): so does this layer. */
static void dhcp_event(void *arg, struct wisp_dhcp *d, enum wisp_dhcp_event ev)
{
#if LWIP_DNS
    const struct wisp_dhcp_lease *l = wisp_dhcp_lease(d);
    unsigned i;
    (void)arg;
    if ((ev == WISP_DHCP_EV_BOUND || ev == WISP_DHCP_EV_RENEWED) && l != NULL) {
        for (i = 0; i < l->dns_count && i < WISP_DNS_MAX_SERVERS; i++) {
            (void)wisp_dns_set_server(&L->stack, i, l->dns[i]);
        }
    }
#else
    (void)arg;
    (void)d;
    (void)ev;
#endif
}

err_t dhcp_start(struct netif *netif)
{
    struct wisp_dhcp_cfg cfg;
    wisp_dhcp_cfg_defaults(&cfg);
    cfg.init_delay_ms = 0;  /* lwIP sends its DISCOVER at once */
    return wisp_dhcp_start(&netif->wisp_dhcp, &netif->wisp_nif, &cfg, dhcp_event, NULL);
}

void dhcp_stop(struct netif *netif)
{
    wisp_dhcp_stop(&netif->wisp_dhcp, false);
}

void dhcp_release_and_stop(struct netif *netif)
{
    wisp_dhcp_stop(&netif->wisp_dhcp, true);
}

err_t dhcp_release(struct netif *netif)
{
    wisp_dhcp_stop(&netif->wisp_dhcp, true);
    return ERR_OK;
}

err_t netifapi_dhcp_start(struct netif *netif)
{
    err_t e;
    bool k = core_enter();
    e = dhcp_start(netif);
    core_leave(k);
    return e;
}

err_t netifapi_dhcp_stop(struct netif *netif)
{
    return netifapi_run(dhcp_stop, netif);
}

err_t netifapi_dhcp_release_and_stop(struct netif *netif)
{
    return netifapi_run(dhcp_release_and_stop, netif);
}

u8_t dhcp_supplied_address(const struct netif *netif)
{
    enum wisp_dhcp_state st;
    bool k = core_enter();
    st = wisp_dhcp_state(&netif->wisp_dhcp);
    core_leave(k);
    return (u8_t)(st == WISP_DHCP_BOUND || st == WISP_DHCP_RENEWING || st == WISP_DHCP_REBINDING);
}
#endif

/* ----------------------------------------------------------------- dns */

#if LWIP_DNS
static void d_found(void *arg, const char *name, wisp_err_t err, const wisp_ipaddr_t *addr, uint32_t ttl_s)
{
    struct dns_rec *r = (struct dns_rec *)arg;
    dns_found_callback fn = r->found;
    void *uarg = r->arg;
    (void)ttl_s;
    r->found = NULL;
    fn(name, err == WISP_OK ? addr : NULL, uarg);
}

err_t dns_gethostbyname(const char *hostname, ip_addr_t *addr, dns_found_callback found, void *callback_arg)
{
    struct dns_rec *r = NULL;
    unsigned i;
    wisp_err_t e;
    if (!L->up || found == NULL) {
        return ERR_ARG;
    }
    for (i = 0; i < DNS_RECS && r == NULL; i++) {
        if (L->dns[i].found == NULL) {
            r = &L->dns[i];
        }
    }
    if (r == NULL) {
        L->st.dns_rec_exhausted++;
        return ERR_MEM;
    }
    r->found = found;
    r->arg = callback_arg;
    e = wisp_dns_gethostbyname(&L->stack, hostname, addr, d_found, r);
    if (e != WISP_ERR_INPROGRESS) {
        r->found = NULL;
    }
    return e;
}

void dns_setserver(u8_t numdns, const ip_addr_t *dnsserver)
{
    if (L->up && numdns < WISP_DNS_MAX_SERVERS) {
        (void)wisp_dns_set_server(&L->stack, numdns, dnsserver != NULL ? ip4_addr_get_u32(dnsserver) : 0u);
    }
}

const ip_addr_t *dns_getserver(u8_t numdns)
{
    if (!L->up || numdns >= WISP_DNS_MAX_SERVERS) {
        return IP_ADDR_ANY;
    }
    ip4_addr_set_u32(&L->dns_server[numdns], wisp_dns_get_server(&L->stack, numdns));
    return &L->dns_server[numdns];
}
#endif
