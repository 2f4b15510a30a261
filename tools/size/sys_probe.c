/**
 * @file sys_probe.c
 * The size probe's stand-in RTOS port: every wisp/sys.h function as a call
 * into an "RTOS" the probe does not have (rtos_call, an extern the linker
 * resolves to a one-line stub in the probe's main file). It exists so that
 * the stack's threaded layers (tcpip, netconn, sockets, netdb) link the way
 * they do against a real RTOS port, whose handles are one pointer; its own
 * size is the application's, not the stack's, and is not counted.
 */
#include "wisp/sys.h"

void *rtos_call(int op, void *a, void *b, uint32_t t);

wisp_err_t wisp_sys_init(void)
{
    return rtos_call(0, 0, 0, 0) ? WISP_OK : WISP_ERR_MEM;
}
wisp_err_t wisp_sys_thread_new(wisp_sys_thread_t *t, const char *name, wisp_sys_thread_fn fn, void *arg,
                               size_t stack_size, int prio)
{
    (void)name;
    (void)stack_size;
    (void)prio;
    t->handle = rtos_call(1, (void *)(uintptr_t)fn, arg, 0);
    return t->handle ? WISP_OK : WISP_ERR_MEM;
}
wisp_err_t wisp_sys_thread_join(wisp_sys_thread_t *t)
{
    return rtos_call(2, t->handle, 0, 0) ? WISP_OK : WISP_ERR_VAL;
}
bool wisp_sys_thread_is_self(const wisp_sys_thread_t *t)
{
    return rtos_call(3, t->handle, 0, 0) != 0;
}
wisp_err_t wisp_sys_mutex_new(wisp_sys_mutex_t *m)
{
    m->handle = rtos_call(4, 0, 0, 0);
    return m->handle ? WISP_OK : WISP_ERR_MEM;
}
void wisp_sys_mutex_lock(wisp_sys_mutex_t *m)
{
    (void)rtos_call(5, m->handle, 0, 0);
}
void wisp_sys_mutex_unlock(wisp_sys_mutex_t *m)
{
    (void)rtos_call(6, m->handle, 0, 0);
}
void wisp_sys_mutex_free(wisp_sys_mutex_t *m)
{
    (void)rtos_call(7, m->handle, 0, 0);
}
bool wisp_sys_mutex_held(const wisp_sys_mutex_t *m)
{
    return rtos_call(8, m->handle, 0, 0) != 0;
}
wisp_err_t wisp_sys_sem_new(wisp_sys_sem_t *sem, unsigned count)
{
    sem->handle = rtos_call(9, 0, 0, count);
    return sem->handle ? WISP_OK : WISP_ERR_MEM;
}
void wisp_sys_sem_signal(wisp_sys_sem_t *sem)
{
    (void)rtos_call(10, sem->handle, 0, 0);
}
wisp_err_t wisp_sys_sem_wait(wisp_sys_sem_t *sem, uint32_t timeout_ms)
{
    return rtos_call(11, sem->handle, 0, timeout_ms) ? WISP_OK : WISP_ERR_TIMEOUT;
}
void wisp_sys_sem_free(wisp_sys_sem_t *sem)
{
    (void)rtos_call(12, sem->handle, 0, 0);
}
wisp_err_t wisp_sys_mbox_new(wisp_sys_mbox_t *mb, unsigned capacity)
{
    mb->handle = rtos_call(13, 0, 0, capacity);
    return mb->handle ? WISP_OK : WISP_ERR_MEM;
}
void wisp_sys_mbox_post(wisp_sys_mbox_t *mb, void *msg)
{
    (void)rtos_call(14, mb->handle, msg, WISP_SYS_FOREVER);
}
wisp_err_t wisp_sys_mbox_trypost(wisp_sys_mbox_t *mb, void *msg)
{
    return rtos_call(14, mb->handle, msg, 0) ? WISP_OK : WISP_ERR_MEM;
}
wisp_err_t wisp_sys_mbox_fetch(wisp_sys_mbox_t *mb, void **msg, uint32_t timeout_ms)
{
    return rtos_call(15, mb->handle, msg, timeout_ms) ? WISP_OK : WISP_ERR_TIMEOUT;
}
wisp_err_t wisp_sys_mbox_tryfetch(wisp_sys_mbox_t *mb, void **msg)
{
    return rtos_call(15, mb->handle, msg, 0) ? WISP_OK : WISP_ERR_TIMEOUT;
}
void wisp_sys_mbox_free(wisp_sys_mbox_t *mb)
{
    (void)rtos_call(16, mb->handle, 0, 0);
}
void wisp_sys_sleep_ms(uint32_t ms)
{
    (void)rtos_call(17, 0, 0, ms);
}
uint32_t wisp_sys_now_ms(void)
{
    return (uint32_t)(uintptr_t)rtos_call(18, 0, 0, 0);
}
