#!/usr/bin/env bash
# test_status_page.sh -- wisp-node's live status page (/status, refreshed by
# /status.js from /status.json) in headless Chromium, over TAP in a
# namespace, while Linux pings the node:
#
#  - the detector works: a page with a script error shows up as a console
#    message in Chromium's log (so "no console messages" below can fail);
#  - /status loads with no console message at all (no script error, no
#    failed resource), every section's table is filled (the interface with
#    the node's address, TCP connections, pools) and the page says it is
#    live after several refreshes from /status.json;
#  - the figures change while it runs: the received
#    frames (all interfaces) grew between the first and the last refresh (data-first-rx <
#    data-rx on #live, written by status.js from the JSON);
#  - screenshots at a phone size (390x844) and a desktop size (1280x900)
#    are kept as test artifacts (build/artifacts/status-*.png, or
#    $WISP_IT_ARTIFACTS) and are PNGs of that size, with no console message;
#  - clean stop (pools at baseline).
#
# Usage: test_status_page.sh PATH-TO-wisp-node   (root; exit 77 = skipped)

source "$(dirname "$0")/lib.sh"
it_init "$@"
it_python
CHROME=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROME" ] || it_fail "chromium not installed (apt-get install chromium)"
ART=${WISP_IT_ARTIFACTS:-$(dirname "$IT_NODE")/artifacts}
mkdir -p "$ART" || it_fail "cannot create $ART"

# chrome_run NAME ARGS...: headless Chromium in the namespace (bounded),
# its log in $IT_DIR/NAME.log, stdout in $IT_DIR/NAME.out.
chrome_run() {
    local name=$1; shift
    it_ns_t 90 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
        --no-default-browser-check --disable-extensions --disable-background-networking \
        --user-data-dir="$IT_DIR/chrome-$name" --enable-logging=stderr --v=0 "$@" \
        >"$IT_DIR/$name.out" 2>"$IT_DIR/$name.log" || it_fail "chromium ($name) failed: $(tail -n 3 "$IT_DIR/$name.log")"
}

# --- the console detector sees a script error
printf '<!DOCTYPE html><html><body><p id="x">a</p><script>nosuchfunction();</script></body></html>\n' >"$IT_DIR/bad.html"
chrome_run selfcheck --virtual-time-budget=1000 --dump-dom "file://$IT_DIR/bad.html"
grep -q 'CONSOLE.*Uncaught ReferenceError' "$IT_DIR/selfcheck.log" ||
    it_fail "the console detector missed a script error: $(grep -c CONSOLE "$IT_DIR/selfcheck.log") console lines"
it_log "detector: a script error shows up in Chromium's log"

it_start_node --http
URL="http://$IT_NODE_IP/status"

# traffic while the page runs: pings (bounded: 800, about 8 s)
it_bg_start "$IT_DIR/ping.log" 40 ping -q -c 800 -i 0.002 -W 1 "$IT_NODE_IP"
PING_PID=$IT_BG_PID

# --- load, refresh for 8 s of page time, dump the DOM
chrome_run dom --virtual-time-budget=8000 --dump-dom "$URL"
if grep -q 'CONSOLE' "$IT_DIR/dom.log"; then
    it_fail "console messages on /status: $(grep 'CONSOLE' "$IT_DIR/dom.log" | head -n 5)"
fi
"$IT_PY" - "$IT_DIR/dom.out" "$IT_NODE_IP" >"$IT_DIR/dom.check" 2>&1 <<'PYEOF' || it_fail "status page content (DOM after the refreshes): $(tail -n 2 "$IT_DIR/dom.check")"
import re, sys
from html.parser import HTMLParser

class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sec = None
        self.rows = {}
        self.cells = {}
        self.live = None
        self.in_td = False
        self.depth = 0
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'section':
            self.sec = a.get('id')
            self.rows[self.sec] = 0
            self.cells[self.sec] = []
        elif tag == 'tr' and self.sec:
            self.rows[self.sec] += 1
        elif tag == 'td' and self.sec:
            self.in_td = True
        elif tag == 'span' and a.get('id') == 'live':
            self.live = a
    def handle_endtag(self, tag):
        if tag == 'section':
            self.sec = None
        elif tag == 'td':
            self.in_td = False
    def handle_data(self, data):
        if self.in_td and self.sec:
            self.cells[self.sec].append(data.strip())

p = P()
p.feed(open(sys.argv[1]).read())
ip = sys.argv[2]
assert 'requests' in open(sys.argv[1]).read().split('id="s-http"')[1].split('</section>')[0], 'HTTP counters missing'
for sec in ('s-if', 's-tcp', 's-pools'):
    assert p.rows.get(sec, 0) >= 2, 'section %s: %d rows (header + data wanted)' % (sec, p.rows.get(sec, 0))
assert any(c.startswith(ip + '/') for c in p.cells['s-if']), 'no interface with %s: %s' % (ip, p.cells['s-if'][:12])
assert 'ESTABLISHED' in p.cells['s-tcp'], 'no established connection (the page\'s own): %s' % p.cells['s-tcp'][:12]
assert p.live is not None, 'no #live element'
assert p.live.get('class', '') != 'stale', 'page says it is not updating: class %r' % p.live.get('class')
n = int(p.live.get('data-updates', '0'))
first, last = int(p.live.get('data-first-rx', '-1')), int(p.live.get('data-rx', '-1'))
assert n >= 4, 'only %d refreshes from /status.json' % n
assert 0 <= first < last, 'received frames did not grow: first %d, last %d' % (first, last)
print('status page: %d refreshes, rx frames %d -> %d, rows %s' % (n, first, last, p.rows))
PYEOF
it_log "$(cat "$IT_DIR/dom.check")"

# --- screenshots, phone and desktop
for shot in "phone 390 844" "desktop 1280 900"; do
    read -r name w h <<<"$shot"
    chrome_run "shot-$name" --virtual-time-budget=3000 --hide-scrollbars --window-size="$w,$h" \
        --screenshot="$ART/status-$name.png" "$URL"
    grep -q 'CONSOLE' "$IT_DIR/shot-$name.log" && it_fail "console messages ($name): $(grep CONSOLE "$IT_DIR/shot-$name.log" | head -n 3)"
    "$IT_PY" - "$ART/status-$name.png" "$w" "$h" <<'PYEOF' || it_fail "screenshot $name"
import struct, sys
b = open(sys.argv[1], 'rb').read(32)
assert b[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
w, h = struct.unpack('>II', b[16:24])
assert (w, h) == (int(sys.argv[2]), int(sys.argv[3])), 'size %dx%d' % (w, h)
PYEOF
    it_log "screenshot $name: $ART/status-$name.png (${w}x$h)"
done

it_bg_wait "$PING_PID" 30 || it_fail "ping did not end"
grep -q ' 0% packet loss\| [0-9]*% packet loss' "$IT_DIR/ping.log" && it_log "ping: $(grep 'packet loss' "$IT_DIR/ping.log")"
it_stop_node
it_pass
