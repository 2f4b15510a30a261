/* A wisp options header that takes an lwIP project's lwipopts.h
 * (wisp/lwipopts_map.h), for test_lwipopts_map.c. */
#ifndef WISP_OPTS_LWIPOPTS_H
#define WISP_OPTS_LWIPOPTS_H
#include "lwipopts_sample.h"
#include "wisp/lwipopts_map.h"
#define WISP_SYS_PORT_HEADER "sys_posix.h"
#endif
