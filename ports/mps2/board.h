/**
 * @file board.h
 * The mps2-an385 board as QEMU models it (Cortex-M3, 25 MHz; see
 * ../../../shared/MPS2-AN385.md in the workplace, or docs/porting.md
 * "Bare metal"): UART0 console, the clock from the LAN9118's FREE_RUN
 * counter, SysTick, NVIC helpers and the semihosting exit. No OS: the
 * FreeRTOS image uses the same functions (the clock then only from one
 * task at a time, or inside a critical section).
 *
 * Not part of the wisp library: a board support file of the firmware
 * images in ports/mps2 (built by tools/fw-build.sh).
 */
#ifndef WISP_MPS2_BOARD_H
#define WISP_MPS2_BOARD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#define MPS2_SYSCLK_HZ 25000000u
#define MPS2_UART0_BASE 0x40004000u
#define MPS2_LAN9118_BASE 0x40200000u
/** NVIC line of the LAN9118 (AN385: "ETHERNET" = IRQ 13). */
#define MPS2_LAN9118_IRQ 13u
/** SysTick period (ms): wakes the idle loop for timers and the console. */
#define MPS2_TICK_MS 10u

/** UART0 on, 115200 8N1 (QEMU ignores the rate; TX enable matters). */
void board_uart_init(void);
void board_putc(char c);
void board_puts(const char *s);
/** printf to UART0 (newlib-nano vsnprintf, lines up to 255 bytes). */
int board_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Same, with a va_list. */
int board_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/** Same, as a wisp_print_fn (ctx unused). */
int board_vprint(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** One received console byte, or -1 when none is waiting. */
int board_getc(void);

/** Start the clock (after the LAN9118 reset: the reset restarts FREE_RUN). */
void board_clock_start(void);
/** 25 MHz ticks since board_clock_start, 64-bit (FREE_RUN extended; call at
 *  least once every 171 s -- the SysTick wake-ups do). Not reentrant: one
 *  context calls it (the core context). */
uint64_t board_ticks(void);
/** Milliseconds / microseconds since board_clock_start (from board_ticks). */
uint32_t board_now_ms(void);
uint64_t board_now_us(void);

/** SysTick every MPS2_TICK_MS ms. The handler is the image's: the
 *  bare-metal one counts board_tick_count (app_bare.c), an RTOS image
 *  gives SysTick to its kernel (and starts it itself). */
void board_systick_start(void);
extern volatile uint32_t board_tick_count;

/** NVIC: enable / disable / clear a pending external interrupt line. */
void board_nvic_enable(unsigned irq);
void board_nvic_disable(unsigned irq);
void board_nvic_clear_pending(unsigned irq);

/** PRIMASK: mask / unmask interrupts (cpsid i / cpsie i). */
static inline void board_irq_off(void)
{
    __asm__ volatile("cpsid i" ::: "memory");
}
static inline void board_irq_on(void)
{
    __asm__ volatile("cpsie i" ::: "memory");
}
/** Sleep until an interrupt is pending (also with PRIMASK set: the
 *  interrupt then wakes the core without running its handler until
 *  board_irq_on). */
static inline void board_wfi(void)
{
    __asm__ volatile("dsb\n\twfi\n\tisb" ::: "memory");
}

/** End the program: QEMU (-semihosting-config enable=on) exits with status
 *  (SYS_EXIT_EXTENDED). Without semihosting the bkpt faults and the board
 *  hangs in the fault handler's wfi loop (pitfall 9: wrap QEMU in timeout). */
void board_exit(int status) __attribute__((noreturn));

#endif /* WISP_MPS2_BOARD_H */
