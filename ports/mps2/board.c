/**
 * @file board.c
 * mps2-an385 board support (board.h): UART0 console, FREE_RUN clock,
 * SysTick, NVIC, semihosting exit, and the wisp assertion hook.
 */
#define WISP_PRIVATE_ACCESS 1 /* port code (the check-tiers rule for ports/) */
#include "board.h"

#include <stdarg.h>
#include <stdio.h>

#include "wisp/opt.h"

#define REG(a) (*(volatile uint32_t *)(uintptr_t)(a))

/* CMSDK APB UART */
#define UART_DATA (MPS2_UART0_BASE + 0x00u)
#define UART_STATE (MPS2_UART0_BASE + 0x04u)
#define UART_CTRL (MPS2_UART0_BASE + 0x08u)
#define UART_BAUDDIV (MPS2_UART0_BASE + 0x10u)
#define UART_STATE_TXFULL 0x1u
#define UART_STATE_RXFULL 0x2u

/* LAN9118 FREE_RUN: 25 MHz up-counter, 32 bits */
#define LAN_FREE_RUN (MPS2_LAN9118_BASE + 0x9Cu)

/* SysTick and NVIC (ARMv7-M system control space) */
#define SYST_CSR 0xE000E010u
#define SYST_RVR 0xE000E014u
#define SYST_CVR 0xE000E018u
#define NVIC_ISER0 0xE000E100u
#define NVIC_ICER0 0xE000E180u
#define NVIC_ICPR0 0xE000E280u

volatile uint32_t board_tick_count;

/* The clock's extension state (hardware is global; one per board). */
static struct {
    uint32_t last;
    uint64_t acc;
} clk;

void board_uart_init(void)
{
    REG(UART_BAUDDIV) = MPS2_SYSCLK_HZ / 115200u;
    REG(UART_CTRL) = 0x3u; /* TX enable | RX enable: without TX enable nothing is printed */
}

void board_putc(char c)
{
    while (REG(UART_STATE) & UART_STATE_TXFULL) {
    }
    REG(UART_DATA) = (uint8_t)c;
}

void board_puts(const char *s)
{
    while (*s != '\0') {
        if (*s == '\n') {
            board_putc('\r');
        }
        board_putc(*s++);
    }
}

int board_vprintf(const char *fmt, va_list ap)
{
    char buf[256];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    board_puts(buf);
    return n;
}

int board_printf(const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = board_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int board_vprint(void *ctx, const char *fmt, ...)
{
    va_list ap;
    int n;
    (void)ctx;
    va_start(ap, fmt);
    n = board_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int board_getc(void)
{
    if (REG(UART_STATE) & UART_STATE_RXFULL) {
        return (int)(REG(UART_DATA) & 0xFFu);
    }
    return -1;
}

void board_clock_start(void)
{
    clk.last = REG(LAN_FREE_RUN);
    clk.acc = 0;
}

uint64_t board_ticks(void)
{
    uint32_t now = REG(LAN_FREE_RUN);
    clk.acc += (uint32_t)(now - clk.last); /* modulo 2^32: one wrap per 171 s at most */
    clk.last = now;
    return clk.acc;
}

uint32_t board_now_ms(void)
{
    return (uint32_t)(board_ticks() / (MPS2_SYSCLK_HZ / 1000u));
}

uint64_t board_now_us(void)
{
    return board_ticks() / (MPS2_SYSCLK_HZ / 1000000u);
}

void board_systick_start(void)
{
    REG(SYST_RVR) = MPS2_SYSCLK_HZ / 1000u * MPS2_TICK_MS - 1u;
    REG(SYST_CVR) = 0;
    REG(SYST_CSR) = 0x7u; /* processor clock, interrupt, enable */
}

void board_nvic_enable(unsigned irq)
{
    REG(NVIC_ISER0 + 4u * (irq / 32u)) = 1u << (irq % 32u);
}

void board_nvic_disable(unsigned irq)
{
    REG(NVIC_ICER0 + 4u * (irq / 32u)) = 1u << (irq % 32u);
}

void board_nvic_clear_pending(unsigned irq)
{
    REG(NVIC_ICPR0 + 4u * (irq / 32u)) = 1u << (irq % 32u);
}

void board_exit(int status)
{
    /* ARM semihosting SYS_EXIT_EXTENDED (0x20): r1 -> {reason, status};
     * reason ADP_Stopped_ApplicationExit (0x20026). */
    static volatile uint32_t block[2];
    block[0] = 0x20026u;
    block[1] = (uint32_t)status;
    {
        register uint32_t r0 __asm__("r0") = 0x20u;
        register volatile uint32_t *r1 __asm__("r1") = block;
        __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    }
    for (;;) {
        board_wfi();
    }
}

#if WISP_DEBUG
/* The wisp core's assertion hook (WISP_DEBUG builds): report and stop with
 * status 3. */
void wisp_assert_fail(const char *expr, const char *file, int line)
{
    board_printf("\nASSERT %s at %s:%d\n", expr, file, line);
    board_exit(3);
}
#endif
