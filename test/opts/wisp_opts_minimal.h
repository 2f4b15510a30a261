/**
 * @file wisp_opts_minimal.h
 * The "minimal" option set of the option matrix (issue 9): the host
 * options (ports/unix/wisp_opts_host.h) with the optional TCP features
 * switched off at compile time. Build and test with
 *   cmake -S . -B build-min -DWISP_OPTS_HEADER=wisp_opts_minimal.h \
 *         -DCMAKE_C_FLAGS=-I$PWD/test/opts
 * Tests that need a switched-off feature are compiled out with #if.
 * Other switches of the matrix are added here as they become real.
 */
#ifndef WISP_OPTS_MINIMAL_H
#define WISP_OPTS_MINIMAL_H

/* lwIP's TCP feature set (SACK, window scaling, timestamps, per-PCB
 * statistics off: wisp_opts_lwiplike.h), and below the rest of TCP's
 * switches off too. */

#include "wisp_opts_lwiplike.h"

/* TCP: no SYN cookies (a full SYN queue drops SYNs), TIME-WAIT in the
 * connection's PCB (no compact records). WISP_TCP_CUBIC stays on here:
 * the sim.*.cubic variants of the simulator suite (TSL_CC=cubic) ask
 * for CUBIC and fail, as they should, when it is not compiled in. */
#define WISP_TCP_SYNCOOKIES 0
#define WISP_TCP_TW_COMPACT 0

#endif /* WISP_OPTS_MINIMAL_H */
