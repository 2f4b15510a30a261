#!/usr/bin/env bash
# test_tcp_rxwin.sh -- the receive window / memory rule (issue 12) against
# Linux: a Linux sender with TCP_NODELAY writes 1..64 bytes at a time (one
# small segment each while the window is open) to wisp-node's threaded
# services, on the socket API and on the netconn API:
#  - echo (port 7) while Linux does not read the echo for 2 s: the node's
#    echo thread blocks in its write and stops reading, so the whole
#    receive window fills with tiny segments (mailbox, then data the stack
#    keeps); then everything must come back, SHA-256 checked;
#  - discard (port 9): as fast as the node's thread reads.
# Each small segment arrives in a receive block of its own; the window must
# never promise more than the blocks can hold, so nothing it admitted may
# be dropped: the node's counters tcp.drop.rxbudget, tcp.ooseq.drop,
# tcp.drop.refused and netif.rx.nomem stay 0, and Linux's sender
# retransmits nothing but what the node proved spurious with a D-SACK
# (Tcp RetransSegs <= TcpExt TCPDSACKRecv in the test's namespace, plus
# frames the tap's queue dropped before the node read them). The
# node stops cleanly with the pools at baseline after each API.
#
# Usage: test_tcp_rxwin.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python

ECHO_BYTES=$((1024 * 1024))
DISCARD_BYTES=$((2 * 1024 * 1024))

# Frames Linux dropped on the tap's queue towards the node (a node that was
# not scheduled for a while): lost before they reached wisp, so their
# retransmission is no drop of wisp's. A long queue in our namespace makes
# them rare.
it_ns ip link set "$IT_TAP" txqueuelen 10000 || it_fail "txqueuelen of $IT_TAP"
tap_drops() { it_ns cat "/sys/class/net/$IT_TAP/statistics/tx_dropped"; }

# peer_rtx_ok WHAT DROPS-BEFORE: the last peer run's retransmissions are all
# D-SACK-proven (or resend what the tap dropped before the node saw it).
peer_rtx_ok() {
    local what=$1 d0=$2 rtx ds td
    rtx=$(echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*retrans=([0-9]+).*/\1/p')
    ds=$(echo "$IT_PEER_OUT" | sed -nE 's/^RESULT ok .*dsack=([0-9]+).*/\1/p')
    td=$(($(tap_drops) - d0))
    [ -n "$rtx" ] && [ -n "$ds" ] || it_fail "$what: no result line"
    [ "$rtx" -le $((ds + td)) ] ||
        it_fail "$what: Linux retransmitted $rtx segments, only $ds proven spurious by a D-SACK ($td tap drops)"
    it_log "$what: Linux retransmissions $rtx, D-SACKs $ds, tap queue drops $td"
}

for api in socket netconn; do
    it_start_node --api "$api"
    d0=$(tap_drops)
    it_peer 120 small "$IT_NODE_IP" 7 "$ECHO_BYTES" 64 2 || it_fail "$api: small-segment echo failed"
    peer_rtx_ok "$api echo" "$d0"
    d0=$(tap_drops)
    it_peer 120 small "$IT_NODE_IP" 9 "$DISCARD_BYTES" 64 -1 || it_fail "$api: small-segment discard failed"
    peer_rtx_ok "$api discard" "$d0"
    it_node_alive "after the $api transfers"
    it_stop_node
    for c in tcp.drop.rxbudget tcp.ooseq.drop tcp.drop.refused netif.rx.nomem; do
        v=$(it_counter "$c")
        [ "$v" = 0 ] || it_fail "$api: node counter $c is $v, want 0 (admitted data dropped)"
    done
    it_log "$api: node tcp.rx.coalesce $(it_counter tcp.rx.coalesce)," \
        "tcp.wnd.budgetlimited $(it_counter tcp.wnd.budgetlimited), no admitted data dropped"
done
it_pass
