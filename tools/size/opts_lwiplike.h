/* Size probe options: lwIP's default TCP feature set -- SACK, window
 * scaling, timestamps and SYN cookies off -- everything else as
 * opts_default.h. */
#ifndef WISP_SIZE_OPTS_LWIPLIKE_H
#define WISP_SIZE_OPTS_LWIPLIKE_H
#include "opts_default.h"
#define WISP_TCP_SACK 0
#define WISP_TCP_DSACK 0
#define WISP_TCP_WND_SCALE 0
#define WISP_TCP_TIMESTAMPS 0
#define WISP_TCP_SYNCOOKIES 0
#endif
