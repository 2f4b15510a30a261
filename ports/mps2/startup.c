/**
 * @file startup.c
 * Cortex-M3 start-up of the mps2-an385 images: the vector table (16 system
 * exceptions + 32 CMSDK interrupt lines), the reset handler (copy .data
 * from its load address, zero .bss, run main, exit through semihosting
 * with main's status) and the fault handlers (report on UART0, exit with
 * status 2). Every handler name is weak, so an image defines only the ones
 * it uses: the bare-metal image SysTick_Handler and ETH_IRQHandler
 * (app_bare.c); a FreeRTOS image maps SVC_Handler, PendSV_Handler and
 * SysTick_Handler to the kernel's port (FreeRTOSConfig.h).
 */
#define WISP_PRIVATE_ACCESS 1 /* port code (the check-tiers rule for ports/) */
#include <stdint.h>

#include "board.h"

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end, __stack_top;
int main(void);

void Reset_Handler(void);
void Default_Handler(void);
void HardFault_Handler(void);

void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
void BusFault_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("HardFault_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));
void UART0RX_IRQHandler(void) __attribute__((weak, alias("Default_Handler")));
void UART0TX_IRQHandler(void) __attribute__((weak, alias("Default_Handler")));
void ETH_IRQHandler(void) __attribute__((weak, alias("Default_Handler")));

union vector {
    void (*fn)(void);
    void *sp;
};

__attribute__((section(".isr_vector"), used)) const union vector wisp_mps2_vectors[16 + 32] = {
    { .sp = &__stack_top },
    { .fn = Reset_Handler },
    { .fn = NMI_Handler },
    { .fn = HardFault_Handler },
    { .fn = MemManage_Handler },
    { .fn = BusFault_Handler },
    { .fn = UsageFault_Handler },
    { .fn = 0 }, { .fn = 0 }, { .fn = 0 }, { .fn = 0 },
    { .fn = SVC_Handler },
    { .fn = DebugMon_Handler },
    { .fn = 0 },
    { .fn = PendSV_Handler },
    { .fn = SysTick_Handler },
    /* external lines 0..31 (AN385: 0 UART0 RX, 1 UART0 TX, 13 Ethernet) */
    [16 + 0] = { .fn = UART0RX_IRQHandler },
    [16 + 1] = { .fn = UART0TX_IRQHandler },
    [16 + 2] = { .fn = Default_Handler }, [16 + 3] = { .fn = Default_Handler },
    [16 + 4] = { .fn = Default_Handler }, [16 + 5] = { .fn = Default_Handler },
    [16 + 6] = { .fn = Default_Handler }, [16 + 7] = { .fn = Default_Handler },
    [16 + 8] = { .fn = Default_Handler }, [16 + 9] = { .fn = Default_Handler },
    [16 + 10] = { .fn = Default_Handler }, [16 + 11] = { .fn = Default_Handler },
    [16 + 12] = { .fn = Default_Handler },
    [16 + MPS2_LAN9118_IRQ] = { .fn = ETH_IRQHandler },
    [16 + 14] = { .fn = Default_Handler }, [16 + 15] = { .fn = Default_Handler },
    [16 + 16] = { .fn = Default_Handler }, [16 + 17] = { .fn = Default_Handler },
    [16 + 18] = { .fn = Default_Handler }, [16 + 19] = { .fn = Default_Handler },
    [16 + 20] = { .fn = Default_Handler }, [16 + 21] = { .fn = Default_Handler },
    [16 + 22] = { .fn = Default_Handler }, [16 + 23] = { .fn = Default_Handler },
    [16 + 24] = { .fn = Default_Handler }, [16 + 25] = { .fn = Default_Handler },
    [16 + 26] = { .fn = Default_Handler }, [16 + 27] = { .fn = Default_Handler },
    [16 + 28] = { .fn = Default_Handler }, [16 + 29] = { .fn = Default_Handler },
    [16 + 30] = { .fn = Default_Handler }, [16 + 31] = { .fn = Default_Handler },
};

void Reset_Handler(void)
{
    uint32_t *src = &__data_load, *dst;
    for (dst = &__data_start; dst < &__data_end;) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start; dst < &__bss_end;) {
        *dst++ = 0;
    }
    /* CCR.STKALIGN is set on reset (8-byte exception frames); CCR.DIV_0_TRP
     * makes a division by zero fault instead of returning 0. */
    *(volatile uint32_t *)0xE000ED14u |= 0x10u;
    board_exit(main());
}

static uint32_t ipsr(void)
{
    uint32_t v;
    __asm__ volatile("mrs %0, ipsr" : "=r"(v));
    return v;
}

void HardFault_Handler(void)
{
    volatile uint32_t *scb = (volatile uint32_t *)0xE000ED00u;
    uint32_t *sp;
    __asm__ volatile("mrs %0, msp" : "=r"(sp));
    board_uart_init();
    board_printf("\nFAULT exception %lu CFSR %08lx HFSR %08lx MMFAR %08lx BFAR %08lx (frame near %p)\n",
                 (unsigned long)ipsr(), (unsigned long)scb[0x28 / 4], (unsigned long)scb[0x2C / 4],
                 (unsigned long)scb[0x34 / 4], (unsigned long)scb[0x38 / 4], (void *)sp);
    board_exit(2);
}

void Default_Handler(void)
{
    board_uart_init();
    board_printf("\nFAULT unexpected exception %lu\n", (unsigned long)ipsr());
    board_exit(2);
}
