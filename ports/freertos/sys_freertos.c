/**
 * @file sys_freertos.c
 * The FreeRTOS sys port of wisp/sys.h (see sys_freertos.h and
 * docs/porting.md "FreeRTOS"):
 *  - threads are tasks started through a trampoline; a per-thread binary
 *    semaphore given after fn returned makes them joinable (FreeRTOS has
 *    no join); the task then deletes itself (the idle task frees it);
 *  - mutexes are FreeRTOS mutexes (priority inheritance; the holder is
 *    known, which answers wisp_sys_mutex_held() for the debug checks and
 *    the core ownership check behind WISP_CORE_ASSERT_OWNER);
 *  - semaphores are counting semaphores, mailboxes queues of pointers;
 *  - time is the tick count scaled to milliseconds; a timed wait blocks
 *    ceil(ms * rate / 1000) + 1 ticks (the + 1 covers the partial current
 *    tick: a timed-out wait waited at least its timeout), in slices below
 *    portMAX_DELAY when longer.
 *
 * Kernel settings it needs (checked below where the preprocessor can):
 * configUSE_MUTEXES, configUSE_COUNTING_SEMAPHORES,
 * configSUPPORT_DYNAMIC_ALLOCATION, INCLUDE_vTaskDelete, INCLUDE_vTaskDelay,
 * INCLUDE_vTaskSuspend (portMAX_DELAY = wait forever) and
 * INCLUDE_xSemaphoreGetMutexHolder. A 32- or 64-bit tick.
 *
 * No function here may be called from an interrupt handler (wisp/sys.h);
 * a receive ISR hands frames to a driver task (docs/porting.md). Nothing
 * here uses anything but the kernel's API: the same file builds for the
 * GCC ARM_CM* ports and the POSIX port the host tests run on.
 *
 * Blocked-thread probe (WISP_SYS_DEBUG_PROBE, wisp/sys.h): the port keeps a
 * list of the threads it knows (created here or registered) in a critical
 * section; a wait that is about to block marks the caller's record "blocked
 * on <object>" and clears it when the wait returns. The probe's waits poll
 * the list every tick (vTaskDelay(1)): test code only.
 */
#define WISP_PRIVATE_ACCESS 1 /* library code: sees the private tier (wisp/arch.h) */
#include "wisp/sys.h"

#include "FreeRTOS.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"

#include <string.h>

#if configUSE_MUTEXES != 1 || configUSE_COUNTING_SEMAPHORES != 1
#error "sys_freertos.c needs configUSE_MUTEXES 1 and configUSE_COUNTING_SEMAPHORES 1"
#endif
#if configSUPPORT_DYNAMIC_ALLOCATION != 1
#error "sys_freertos.c needs configSUPPORT_DYNAMIC_ALLOCATION 1 (kernel objects come from the FreeRTOS heap)"
#endif
#if INCLUDE_vTaskDelete != 1 || INCLUDE_vTaskDelay != 1 || INCLUDE_vTaskSuspend != 1
#error "sys_freertos.c needs INCLUDE_vTaskDelete, INCLUDE_vTaskDelay and INCLUDE_vTaskSuspend set to 1"
#endif
#if INCLUDE_xSemaphoreGetMutexHolder != 1
#error "sys_freertos.c needs INCLUDE_xSemaphoreGetMutexHolder 1 (mutex owner for the debug checks)"
#endif
#if defined(configTICK_TYPE_WIDTH_IN_BITS) && defined(TICK_TYPE_WIDTH_16_BITS)
#if configTICK_TYPE_WIDTH_IN_BITS == TICK_TYPE_WIDTH_16_BITS
#error "sys_freertos.c needs a 32- or 64-bit tick (16-bit ticks wrap in 65 s at 1 kHz)"
#endif
#endif

/* The port's thread block (the handle's one pointer points here). */
struct wisp_sys_freertos_thread {
    TaskHandle_t task;
    wisp_sys_thread_fn fn;
    void *arg;
    SemaphoreHandle_t done;           /**< given once fn returned (join) */
#if WISP_SYS_DEBUG_PROBE
    struct wisp_sys_freertos_thread *dbg_next; /**< known threads (critical section) */
    const void *dbg_obj;              /**< object blocked on, NULL = running */
    int dbg_kind;                     /**< enum wisp_sys_wait_kind */
#endif
};

wisp_err_t wisp_sys_init(void)
{
    return WISP_OK;
}

/* ------------------------------------------------------------------ time */

uint32_t wisp_sys_now_ms(void)
{
    /* (A C test, not #if: configs often write the rate with a cast.) */
    if ((uint64_t)configTICK_RATE_HZ == 1000u) {
        /* The tick count is milliseconds: wraps at 2^32 like the result. */
        return (uint32_t)xTaskGetTickCount();
    }
    /* Scaled in 64 bits; consistent modulo 2^32 until the tick count
     * itself wraps (2^32 ticks: 49.7 days at 1 kHz, 497 days at 100 Hz). */
    return (uint32_t)((uint64_t)xTaskGetTickCount() * 1000u / (uint64_t)configTICK_RATE_HZ);
}

/* Ticks of a timed wait of ms (0 < ms < WISP_SYS_FOREVER): rounded up, plus
 * the partial tick in progress. 64 bits: may exceed portMAX_DELAY. */
static uint64_t ticks_for(uint32_t ms)
{
    return ((uint64_t)ms * (uint64_t)configTICK_RATE_HZ + 999u) / 1000u + 1u;
}

/* One slice of a long wait: at most portMAX_DELAY - 1 ticks (portMAX_DELAY
 * itself means "forever"). */
static TickType_t slice_of(uint64_t left)
{
    uint64_t max = (uint64_t)(portMAX_DELAY - 1u);
    return (TickType_t)(left < max ? left : max);
}

void wisp_sys_sleep_ms(uint32_t ms)
{
    uint64_t left;
    if (ms == 0) {
        taskYIELD();
        return;
    }
    left = ticks_for(ms);
    while (left > 0) {
        TickType_t d = slice_of(left);
        vTaskDelay(d);
        left -= d;
    }
}

/* ------------------------------------------- debug: blocked-thread probe */

#if WISP_SYS_DEBUG_PROBE
static struct wisp_sys_freertos_thread *dbg_threads; /* known threads */

static void dbg_list_add(struct wisp_sys_freertos_thread *b)
{
    taskENTER_CRITICAL();
    b->dbg_obj = NULL;
    b->dbg_kind = WISP_SYS_WAIT_NONE;
    b->dbg_next = dbg_threads;
    dbg_threads = b;
    taskEXIT_CRITICAL();
}

static void dbg_list_remove(struct wisp_sys_freertos_thread *b)
{
    struct wisp_sys_freertos_thread **pp;
    taskENTER_CRITICAL();
    for (pp = &dbg_threads; *pp != NULL; pp = &(*pp)->dbg_next) {
        if (*pp == b) {
            *pp = b->dbg_next;
            break;
        }
    }
    b->dbg_obj = NULL;
    b->dbg_kind = WISP_SYS_WAIT_NONE;
    taskEXIT_CRITICAL();
}

/* The calling task starts (obj != NULL) or stops (obj NULL) blocking. */
static void dbg_mark(const void *obj, int kind)
{
    TaskHandle_t self = xTaskGetCurrentTaskHandle();
    struct wisp_sys_freertos_thread *b;
    taskENTER_CRITICAL();
    for (b = dbg_threads; b != NULL; b = b->dbg_next) {
        if (b->task == self) {
            b->dbg_obj = obj;
            b->dbg_kind = obj != NULL ? kind : WISP_SYS_WAIT_NONE;
            break;
        }
    }
    taskEXIT_CRITICAL();
}

/* b blocked on obj (critical section held); obj NULL: on a semaphore or
 * mailbox. */
static bool dbg_is_blocked(const struct wisp_sys_freertos_thread *b, const void *obj)
{
    if (b->dbg_obj == NULL) {
        return false;
    }
    if (obj != NULL) {
        return b->dbg_obj == obj;
    }
    return b->dbg_kind != WISP_SYS_WAIT_MUTEX;
}

static unsigned dbg_count_on(const void *obj)
{
    const struct wisp_sys_freertos_thread *b;
    unsigned n = 0;
    for (b = dbg_threads; b != NULL; b = b->dbg_next) {
        n += (obj != NULL && b->dbg_obj == obj) ? 1u : 0u;
    }
    return n;
}

void wisp_sys_debug_thread_register(wisp_sys_thread_t *t)
{
    struct wisp_sys_freertos_thread *b = pvPortMalloc(sizeof *b);
    WISP_ASSERT(b != NULL);
    if (b == NULL) {
        t->blk = NULL;
        return;
    }
    memset(b, 0, sizeof *b);
    b->task = xTaskGetCurrentTaskHandle();
    t->blk = b;
    dbg_list_add(b);
}

void wisp_sys_debug_thread_unregister(wisp_sys_thread_t *t)
{
    WISP_ASSERT(wisp_sys_thread_is_self(t));
    if (t->blk != NULL) {
        dbg_list_remove(t->blk);
        vPortFree(t->blk);
        t->blk = NULL;
    }
}

/* Until b is blocked on obj (b != NULL) or n threads are blocked on obj
 * (b NULL), or the timeout passed: look every tick. */
static bool dbg_wait(const struct wisp_sys_freertos_thread *b, const void *obj, unsigned n, uint32_t timeout_ms)
{
    uint32_t start = wisp_sys_now_ms();
    for (;;) {
        bool ok;
        taskENTER_CRITICAL();
        ok = b != NULL ? dbg_is_blocked(b, obj) : dbg_count_on(obj) >= n;
        taskEXIT_CRITICAL();
        if (ok) {
            return true;
        }
        if (timeout_ms != WISP_SYS_FOREVER && wisp_sys_now_ms() - start >= timeout_ms) {
            return false;
        }
        vTaskDelay(1);
    }
}

bool wisp_sys_debug_wait_blocked(const wisp_sys_thread_t *t, const void *obj, uint32_t timeout_ms)
{
    return t != NULL && t->blk != NULL && dbg_wait(t->blk, obj, 0, timeout_ms);
}

bool wisp_sys_debug_wait_blocked_n(const void *obj, unsigned n, uint32_t timeout_ms)
{
    return n == 0 || (obj != NULL && dbg_wait(NULL, obj, n, timeout_ms));
}

const void *wisp_sys_debug_blocked_on(const wisp_sys_thread_t *t, enum wisp_sys_wait_kind *kind)
{
    const void *obj = NULL;
    int k = WISP_SYS_WAIT_NONE;
    taskENTER_CRITICAL();
    if (t->blk != NULL) {
        obj = t->blk->dbg_obj;
        k = t->blk->dbg_kind;
    }
    taskEXIT_CRITICAL();
    if (kind != NULL) {
        *kind = (enum wisp_sys_wait_kind)k;
    }
    return obj;
}

#define DBG_BLOCK(obj, kind) dbg_mark((obj), (kind))
#define DBG_UNBLOCK() dbg_mark(NULL, WISP_SYS_WAIT_NONE)
#else
#define DBG_BLOCK(obj, kind) ((void)0)
#define DBG_UNBLOCK() ((void)0)
#endif /* WISP_SYS_DEBUG_PROBE */

/* --------------------------------------------------------------- threads */

static void thread_trampoline(void *arg)
{
    struct wisp_sys_freertos_thread *b = (struct wisp_sys_freertos_thread *)arg;
    SemaphoreHandle_t done = b->done;

    b->task = xTaskGetCurrentTaskHandle(); /* is_self from fn's first instruction */
#if WISP_SYS_DEBUG_PROBE
    dbg_list_add(b);
#endif
    b->fn(b->arg);
#if WISP_SYS_DEBUG_PROBE
    dbg_list_remove(b);
#endif
    /* The joiner frees b and done once this give is through: touch
     * neither afterwards (the give itself does not look at the queue
     * again once it woke the joiner). */
    (void)xSemaphoreGive(done);
    vTaskDelete(NULL);
}

/* words fits configSTACK_DEPTH_TYPE (uint16_t in many configurations). */
static bool depth_ok(uint64_t words)
{
    return words <= (uint64_t)(configSTACK_DEPTH_TYPE)~(configSTACK_DEPTH_TYPE)0;
}

wisp_err_t wisp_sys_thread_new(wisp_sys_thread_t *t, const char *name, wisp_sys_thread_fn fn, void *arg,
                               size_t stack_size, int prio)
{
    struct wisp_sys_freertos_thread *b;
    size_t words;
    UBaseType_t p;

    if (t == NULL || fn == NULL) {
        return WISP_ERR_ARG;
    }
    t->blk = NULL;
    if (stack_size == 0) {
        stack_size = WISP_SYS_FREERTOS_STACK_DEFAULT;
    }
    words = (stack_size + sizeof(StackType_t) - 1u) / sizeof(StackType_t);
    if (words < (size_t)configMINIMAL_STACK_SIZE) {
        words = (size_t)configMINIMAL_STACK_SIZE;
    }
    if (!depth_ok(words)) {
        return WISP_ERR_MEM; /* more than the kernel's stack depth type holds */
    }
    if (prio <= 0) {
        prio = WISP_SYS_FREERTOS_PRIO_DEFAULT;
    }
    p = (UBaseType_t)prio < (UBaseType_t)configMAX_PRIORITIES ? (UBaseType_t)prio
                                                              : (UBaseType_t)(configMAX_PRIORITIES - 1);
    b = pvPortMalloc(sizeof *b);
    if (b == NULL) {
        return WISP_ERR_MEM;
    }
    memset(b, 0, sizeof *b);
    b->fn = fn;
    b->arg = arg;
    b->done = xSemaphoreCreateBinary();
    if (b->done == NULL) {
        vPortFree(b);
        return WISP_ERR_MEM;
    }
    t->blk = b;
    if (xTaskCreate(thread_trampoline, name != NULL ? name : "wisp", (configSTACK_DEPTH_TYPE)words, b, p,
                    &b->task) != pdPASS) {
        t->blk = NULL;
        vSemaphoreDelete(b->done);
        vPortFree(b);
        return WISP_ERR_MEM;
    }
    return WISP_OK;
}

wisp_err_t wisp_sys_thread_join(wisp_sys_thread_t *t)
{
    struct wisp_sys_freertos_thread *b = t->blk;

    WISP_ASSERT(!wisp_sys_thread_is_self(t));
    if (b == NULL) {
        return WISP_ERR_ARG;
    }
    (void)xSemaphoreTake(b->done, portMAX_DELAY);
    t->blk = NULL;
    vSemaphoreDelete(b->done);
    vPortFree(b);
    return WISP_OK;
}

bool wisp_sys_thread_is_self(const wisp_sys_thread_t *t)
{
    return t != NULL && t->blk != NULL && t->blk->task == xTaskGetCurrentTaskHandle();
}

/* --------------------------------------------------------------- mutexes */

wisp_err_t wisp_sys_mutex_new(wisp_sys_mutex_t *m)
{
    m->h = xSemaphoreCreateMutex();
    return m->h != NULL ? WISP_OK : WISP_ERR_MEM;
}

bool wisp_sys_mutex_held(const wisp_sys_mutex_t *m)
{
    return xSemaphoreGetMutexHolder(m->h) == xTaskGetCurrentTaskHandle();
}

void wisp_sys_mutex_lock(wisp_sys_mutex_t *m)
{
    /* FreeRTOS mutexes are not recursive: the take below would block
     * forever. Catch it first (debug builds). */
    WISP_ASSERT(!wisp_sys_mutex_held(m));
#if WISP_SYS_DEBUG_PROBE
    if (xSemaphoreTake(m->h, 0) == pdTRUE) {
        return;
    }
    DBG_BLOCK(m, WISP_SYS_WAIT_MUTEX);
#endif
    (void)xSemaphoreTake(m->h, portMAX_DELAY);
    DBG_UNBLOCK();
}

void wisp_sys_mutex_unlock(wisp_sys_mutex_t *m)
{
    BaseType_t r;
    /* Unlock by a non-owner, or of an unlocked mutex (debug builds; the
     * kernel refuses both, so release builds do nothing then). */
    WISP_ASSERT(wisp_sys_mutex_held(m));
    r = xSemaphoreGive(m->h);
    WISP_ASSERT(r == pdTRUE);
    WISP_UNUSED(r);
}

void wisp_sys_mutex_free(wisp_sys_mutex_t *m)
{
    WISP_ASSERT(xSemaphoreGetMutexHolder(m->h) == NULL);
    vSemaphoreDelete(m->h);
    m->h = NULL;
}

/* ------------------------------------------------------------ semaphores */

/* Most a semaphore counts: half the range of UBaseType_t (>= 65535 on
 * every 32-bit port, as wisp/sys.h asks). */
#define SEM_MAX ((UBaseType_t)(~(UBaseType_t)0 >> 1))

/* Take h (a semaphore or mutex queue) waiting up to timeout_ms (not 0). */
static bool take_timed(SemaphoreHandle_t h, uint32_t timeout_ms)
{
    uint64_t left;
    if (timeout_ms == WISP_SYS_FOREVER) {
        return xSemaphoreTake(h, portMAX_DELAY) == pdTRUE;
    }
    for (left = ticks_for(timeout_ms); left > 0;) {
        TickType_t d = slice_of(left);
        if (xSemaphoreTake(h, d) == pdTRUE) {
            return true;
        }
        left -= d;
    }
    return false;
}

/* count fits under SEM_MAX (a function: the comparison is constant where
 * UBaseType_t is wider than unsigned). */
static bool sem_count_ok(uint64_t count)
{
    return count <= (uint64_t)SEM_MAX;
}

wisp_err_t wisp_sys_sem_new(wisp_sys_sem_t *sem, unsigned count)
{
    if (!sem_count_ok(count)) {
        return WISP_ERR_ARG;
    }
    sem->h = xSemaphoreCreateCounting(SEM_MAX, (UBaseType_t)count);
    return sem->h != NULL ? WISP_OK : WISP_ERR_MEM;
}

void wisp_sys_sem_signal(wisp_sys_sem_t *sem)
{
    BaseType_t r = xSemaphoreGive(sem->h);
    WISP_ASSERT(r == pdTRUE); /* fails only at SEM_MAX: a runaway signaller */
    WISP_UNUSED(r);
}

wisp_err_t wisp_sys_sem_wait(wisp_sys_sem_t *sem, uint32_t timeout_ms)
{
    bool ok;
    if (xSemaphoreTake(sem->h, 0) == pdTRUE) {
        return WISP_OK;
    }
    if (timeout_ms == 0) {
        return WISP_ERR_TIMEOUT;
    }
    DBG_BLOCK(sem, WISP_SYS_WAIT_SEM);
    ok = take_timed(sem->h, timeout_ms);
    DBG_UNBLOCK();
    return ok ? WISP_OK : WISP_ERR_TIMEOUT;
}

void wisp_sys_sem_free(wisp_sys_sem_t *sem)
{
    vSemaphoreDelete(sem->h);
    sem->h = NULL;
}

/* ------------------------------------------------------------- mailboxes */

wisp_err_t wisp_sys_mbox_new(wisp_sys_mbox_t *mb, unsigned capacity)
{
    if (capacity == 0) {
        return WISP_ERR_ARG;
    }
    mb->h = xQueueCreate((UBaseType_t)capacity, (UBaseType_t)sizeof(void *));
    return mb->h != NULL ? WISP_OK : WISP_ERR_MEM;
}

void wisp_sys_mbox_post(wisp_sys_mbox_t *mb, void *msg)
{
    if (xQueueSendToBack(mb->h, &msg, 0) == pdTRUE) {
        return;
    }
    DBG_BLOCK(mb, WISP_SYS_WAIT_MBOX_POST);
    (void)xQueueSendToBack(mb->h, &msg, portMAX_DELAY);
    DBG_UNBLOCK();
}

wisp_err_t wisp_sys_mbox_trypost(wisp_sys_mbox_t *mb, void *msg)
{
    return xQueueSendToBack(mb->h, &msg, 0) == pdTRUE ? WISP_OK : WISP_ERR_WOULDBLOCK;
}

wisp_err_t wisp_sys_mbox_fetch(wisp_sys_mbox_t *mb, void **msg, uint32_t timeout_ms)
{
    void *m = NULL;
    uint64_t left;
    bool ok = false;

    if (xQueueReceive(mb->h, &m, 0) == pdTRUE) {
        *msg = m;
        return WISP_OK;
    }
    if (timeout_ms == 0) {
        return WISP_ERR_TIMEOUT;
    }
    DBG_BLOCK(mb, WISP_SYS_WAIT_MBOX_FETCH);
    if (timeout_ms == WISP_SYS_FOREVER) {
        ok = xQueueReceive(mb->h, &m, portMAX_DELAY) == pdTRUE;
    } else {
        for (left = ticks_for(timeout_ms); left > 0 && !ok;) {
            TickType_t d = slice_of(left);
            ok = xQueueReceive(mb->h, &m, d) == pdTRUE;
            left -= d;
        }
    }
    DBG_UNBLOCK();
    if (!ok) {
        return WISP_ERR_TIMEOUT;
    }
    *msg = m;
    return WISP_OK;
}

wisp_err_t wisp_sys_mbox_tryfetch(wisp_sys_mbox_t *mb, void **msg)
{
    void *m = NULL;
    if (xQueueReceive(mb->h, &m, 0) != pdTRUE) {
        return WISP_ERR_WOULDBLOCK;
    }
    *msg = m;
    return WISP_OK;
}

void wisp_sys_mbox_free(wisp_sys_mbox_t *mb)
{
    vQueueDelete(mb->h);
    mb->h = NULL;
}
