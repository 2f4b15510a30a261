#!/usr/bin/env bash
# test_api_socket.sh -- wisp-node --api socket against Linux over TAP: the
# checks of test_api_netconn.sh (TCP echo / chargen / discard, UDP echo /
# discard, client mode to and from Linux, sequential connects, clean stop
# with the pools at baseline, clean captures) with the services and the
# client as application threads on the BSD socket API
# (apps/lib/services_socket.c).
#
# Usage: test_api_socket.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

WISP_IT_API=socket
# shellcheck source=test_api_netconn.sh
source "$(dirname "$0")/test_api_netconn.sh"
