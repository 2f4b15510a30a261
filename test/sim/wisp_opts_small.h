/**
 * @file wisp_opts_small.h
 * Options of the small-pool simulator build (test/CMakeLists.txt,
 * sim.test_tcp_tx_fairness_small): the default pool sizes of
 * include/wisp/opt.h (a Cortex-M class device: 8 transmit blocks, 8
 * receive blocks, 8 connection PCBs), debug checks on, like
 * ports/none/wisp_opts_none.h, but on the simulated wire.
 */
#ifndef WISP_OPTS_SMALL_H
#define WISP_OPTS_SMALL_H

#define WISP_DEBUG 1
/* CUBIC compiled in (opt.h leaves it out): the sim.*.cubic variant of the
 * test asks for it (TSL_CC=cubic). */
#define WISP_TCP_CUBIC 1

#endif
