/**
 * @file wisp.h
 * One include for applications of the raw (core-context) API.
 */
#ifndef WISP_WISP_H
#define WISP_WISP_H

#include "wisp/stack.h"
#include "wisp/chksum.h"
#include "wisp/ethernet.h"

#endif /* WISP_WISP_H */
