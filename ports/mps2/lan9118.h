/**
 * @file lan9118.h
 * SMSC LAN9118 Ethernet driver for wisp (a struct wisp_dev, include/wisp/
 * netif.h), written against the chip as QEMU models it on mps2-an385 and
 * kept OS-independent so that the bare-metal and the FreeRTOS image share
 * it:
 *
 *  - lan9118_isr() is all the interrupt handler does: it masks the chip's
 *    interrupt (INT_EN = 0, so the level line drops), sets `pending` and
 *    calls the optional signal hook (bare metal: nothing, the idle loop
 *    sees the flag; an RTOS: give a semaphore / notify the stack task).
 *    It never touches the stack.
 *  - lan9118_service() runs in the stack's core context: it moves received
 *    frames from the RX FIFO into pbufs and hands them to wisp_dev_input,
 *    pops TX status words, reports a free transmitter (wisp_dev_tx_ready)
 *    and unmasks the interrupt again -- acknowledge first, then look at the
 *    FIFO, so a frame arriving in between raises a new interrupt.
 *  - transmit (the dev op) copies the frame into the TX FIFO (padded to 60
 *    bytes: the model does not pad), WISP_ERR_WOULDBLOCK when the FIFO has
 *    no room.
 *
 * The RX FIFO holds about 10 KiB (6 full frames); QEMU drops what does not
 * fit without telling anyone (RX_DROP stays 0). The driver cannot see
 * those drops; TCP recovers them (the firmware tests check every byte).
 * A frame the stack has no pbuf for is read out of the FIFO and counted
 * (rx_nomem), never left there (that would stall the FIFO).
 */
#ifndef WISP_MPS2_LAN9118_H
#define WISP_MPS2_LAN9118_H

#include <stdbool.h>
#include <stdint.h>

#include "wisp/wisp.h"

/** Driver counters. */
struct lan9118_stats {
    uint32_t irqs;          /**< interrupts taken */
    uint32_t rx_frames, rx_bytes;
    uint32_t rx_nomem;      /**< frames drained for lack of a pbuf */
    uint32_t rx_errors;     /**< error summary set, or a length out of range */
    uint32_t rx_fifo_high;  /**< RX data FIFO high-water mark seen, bytes */
    uint32_t tx_frames, tx_bytes;
    uint32_t tx_busy;       /**< transmit refused: no FIFO room (WOULDBLOCK) */
    uint32_t tx_errors;     /**< TX status with the error summary, or a frame too long */
};

struct lan9118 {
    uintptr_t base;
    struct wisp_dev dev;            /**< attach this to a netif */
    struct wisp_stack *stack;       /**< pbufs come from its pools */
    uint8_t mac[6];
    bool mac_from_eeprom;           /**< E2P_CMD bit 8: the MAC was loaded */
    bool tx_blocked;                /**< a transmit was refused; tx_ready owed */
    uint32_t tx_room_unit;          /**< TX_FIFO_INF free-space unit: 4 (model: words) or 1 (chip: bytes) */
    volatile uint32_t pending;      /**< set by the ISR, cleared by lan9118_service */
    void (*signal)(void *ctx);      /**< optional ISR hook (RTOS wake-up) */
    void *signal_ctx;
    struct lan9118_stats st;
};

/** Reset and set up the chip at base (checks BYTE_TEST and ID_REV, soft
 *  reset, PHY auto-negotiation, MAC from the EEPROM or else fallback_mac).
 *  Interrupts stay off until lan9118_irq_start. Returns WISP_OK, or
 *  WISP_ERR_VAL (no LAN9118 there) / WISP_ERR_TIMEOUT (reset or PHY hung). */
wisp_err_t lan9118_init(struct lan9118 *d, uintptr_t base, struct wisp_stack *s, const uint8_t fallback_mac[6]);
/** Enable the RX interrupt at the chip (active-high push-pull: IRQ_POL and
 *  IRQ_TYPE; pitfall 4). The board enables the NVIC line. */
void lan9118_irq_start(struct lan9118 *d);
/** Interrupt handler body (see file comment). */
void lan9118_isr(struct lan9118 *d);
/** Core context: handle up to budget received frames and the TX side;
 *  returns the frames handled. More work left: d->pending stays set. */
unsigned lan9118_service(struct lan9118 *d, unsigned budget);
/** PHY link status (BMSR bit 2). */
bool lan9118_link_up(struct lan9118 *d);
/** Bytes waiting in the RX data FIFO now. */
uint32_t lan9118_rx_fifo_used(struct lan9118 *d);

#endif /* WISP_MPS2_LAN9118_H */
