/**
 * @file wisp_opts_mps2.h
 * Options of the mps2-an385 firmware images (ports/mps2): the stack's pools
 * sized for a Cortex-M3 with some hundred KiB of RAM that serves a handful
 * of TCP connections at a time, and debug checks on (the images are test
 * firmware: a broken invariant stops them with status 3).
 *
 * Why these sizes: the receive window (8 KiB, under 6 full frames) fits in
 * the LAN9118's ~10 KiB RX FIFO, so a peer's burst of a whole window fits
 * in the FIFO even when the CPU is late to drain it. Measured in QEMU
 * (test_fw_tap.sh): with a 16 KiB window, 13.6 % of the frames to the
 * firmware were dropped by the FIFO (silently, MPS2-AN385.md) and iperf
 * from Linux reached 15 Mbit/s; with 8 KiB, 0.2-0.5 % outside the test's
 * deliberate RX stalls, and 33-96 Mbit/s (QEMU on a shared host). 32 RX
 * pbufs hold a window plus out-of-order data and reassembly; 64 segments hold the send
 * buffers of several connections.
 */
#ifndef WISP_OPTS_MPS2_H
#define WISP_OPTS_MPS2_H

#ifndef WISP_DEBUG
#define WISP_DEBUG 1 /* -DWISP_DEBUG=0: the image without the checks */
#endif
#define WISP_PBUF_RX_COUNT 32
#define WISP_PBUF_TX_COUNT 32
#define WISP_PBUF_REF_COUNT 32
#define WISP_PBUF_SMALL_COUNT 16
#define WISP_IP_REASS_MAX_PBUFS 8     /* a 3000-byte ping is 3 fragments */
#define WISP_UDP_PCB_COUNT 8
#define WISP_TCP_PCB_COUNT 16
#define WISP_TCP_LISTEN_COUNT 8
#define WISP_TCP_SYNQ_COUNT 16
#define WISP_TCP_TW_COUNT 16
#define WISP_TCP_SEG_COUNT 64
#define WISP_TCP_WND (8 * 1024)
#define WISP_TCP_SND_BUF (8 * 1024)
#define WISP_TCP_OOSEQ_MAX_PBUFS 12
#define WISP_TXQ_COMMON_LEN 32

#endif /* WISP_OPTS_MPS2_H */
