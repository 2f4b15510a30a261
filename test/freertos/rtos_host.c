/**
 * @file rtos_host.c
 * Host side of the FreeRTOS tests (kernel POSIX port): a program's main()
 * -- a cmocka unit test of test/unit, or apps/wisp-node/main.c -- is
 * compiled with -Dmain=wisp_rtos_app_main and runs here as the first
 * FreeRTOS task; its return value is the process's exit status.
 *
 * POSIX specifics stay here, not in ports/freertos:
 *  - wisp_rtos_ppoll (the node's main.c is compiled with -Dppoll=): a task
 *    must not sleep in the host kernel, since the other tasks only run when
 *    it blocks on a FreeRTOS object (cooperative scheduling, see
 *    FreeRTOSConfig.h). It yields first, then looks with a zero timeout and
 *    waits a tick with vTaskDelay between looks, until the caller's timeout
 *    (wall clock) passed. The TAP driver's fd is thus read by a task that
 *    polls every tick while idle (1 ms) and without pause while frames come.
 *  - wisp_rtos_yield (testutil.c is compiled with -Dsched_yield=): a yield
 *    to the other tasks rather than to the host's threads.
 *  - the tick: the POSIX port delivers it as SIGALRM to the running task's
 *    thread (1 kHz) with a handler installed without SA_RESTART, so every
 *    blocking system call of a task (read, write, waitpid...) would fail
 *    with EINTR about once a millisecond. main() adds SA_RESTART to that
 *    handler: restartable calls restart, the others (poll, nanosleep)
 *    still say EINTR, as they do under any signal.
 */
#define _GNU_SOURCE /* ppoll */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "FreeRTOS.h"
#include "task.h"

#ifndef WISP_RTOS_MAIN_ARGS
#define WISP_RTOS_MAIN_ARGS 1
#endif

#if WISP_RTOS_MAIN_ARGS
int wisp_rtos_app_main(int argc, char **argv);
#else
int wisp_rtos_app_main(void);
#endif
int wisp_rtos_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
int wisp_rtos_yield(void);

static int app_argc;
static char **app_argv;
static volatile int app_rc = -1; /* the program's exit status, once it returned */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int wisp_rtos_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask)
{
    uint64_t deadline = UINT64_MAX;
    if (timeout != NULL) {
        deadline = mono_ns() + (uint64_t)timeout->tv_sec * 1000000000u + (uint64_t)timeout->tv_nsec;
    }
    taskYIELD();
    for (;;) {
        struct timespec zero = { 0, 0 };
        int r = ppoll(fds, nfds, &zero, sigmask);
        if (r != 0 || mono_ns() >= deadline) {
            return r;
        }
        vTaskDelay(1);
    }
}

int wisp_rtos_yield(void)
{
    taskYIELD();
    return 0;
}

static void app_task(void *arg)
{
    int rc;
    (void)arg;
    /* One line on stderr, so a test log shows what ran the program. */
    fprintf(stderr, "wisp-rtos: FreeRTOS %s, POSIX port, tick %u Hz, %s scheduling, heap_4 %u KB\n",
            tskKERNEL_VERSION_NUMBER, (unsigned)configTICK_RATE_HZ,
            configUSE_PREEMPTION ? "preemptive" : "cooperative", (unsigned)(configTOTAL_HEAP_SIZE / 1024u));
#if WISP_RTOS_MAIN_ARGS
    rc = wisp_rtos_app_main(app_argc, app_argv);
#else
    (void)app_argc;
    (void)app_argv;
    rc = wisp_rtos_app_main();
#endif
    fflush(stdout);
    fflush(stderr);
    /* Stop the tick and the scheduler (the idle task and the tasks waiting
     * for deletion are reclaimed), then main() returns rc: no tick signal
     * lands in a thread while the process exits. */
    app_rc = rc;
    vTaskEndScheduler();
    for (;;) {
        /* not reached: the port parks this thread until the process ends */
    }
}

int main(int argc, char **argv)
{
    app_argc = argc;
    app_argv = argv;
    /* Priority 1 like every wisp thread (WISP_SYS_FREERTOS_PRIO_DEFAULT):
     * cooperative round robin among equals. */
    if (xTaskCreate(app_task, "main", 4096, NULL, 1, NULL) != pdPASS) {
        fprintf(stderr, "rtos_host: cannot create the main task\n");
        return 1;
    }
    {
        /* The port installed its tick handler when the first task was
         * created: make it restart interrupted system calls. */
        struct sigaction sa;
        if (sigaction(SIGALRM, NULL, &sa) != 0 || (sa.sa_flags |= SA_RESTART, sigaction(SIGALRM, &sa, NULL)) != 0) {
            perror("rtos_host: sigaction(SIGALRM)");
            return 1;
        }
    }
    vTaskStartScheduler();
    if (app_rc < 0) {
        fprintf(stderr, "rtos_host: the scheduler returned before the program did\n");
        return 1;
    }
    return app_rc;
}
