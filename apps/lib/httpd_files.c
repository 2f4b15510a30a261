/**
 * @file httpd_files.c
 * The compiled-in file table of the HTTP server (httpd.h): a small HTML
 * page, a style sheet, a 1 MiB file generated on the fly (no 1 MB array in
 * flash), the two status pages and the script that keeps /status live. The constant files are sent straight
 * from here without copying.
 */
#include "httpd.h"

static const char index_html[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n"
    "<head>\n"
    "<meta charset=\"utf-8\">\n"
    "<title>wisp</title>\n"
    "<link rel=\"stylesheet\" href=\"/style.css\">\n"
    "</head>\n"
    "<body>\n"
    "<h1>wisp</h1>\n"
    "<p>A lightweight TCP/IP stack for microcontrollers, serving this page from\n"
    "a table compiled into the program.</p>\n"
    "<ul>\n"
    "<li><a href=\"/status\">status</a> (<a href=\"/status.json\">JSON</a>): interfaces,\n"
    "TCP connections, pools and drop counters, live</li>\n"
    "<li><a href=\"/big.bin\">big.bin</a>: 1 MiB generated on the fly</li>\n"
    "</ul>\n"
    "</body>\n"
    "</html>\n";

static const char style_css[] =
    "body { font-family: sans-serif; margin: 2em; color: #222; background: #fdfdfd; }\n"
    "h1 { font-size: 1.6em; border-bottom: 1px solid #ccc; }\n"
    "h2 { font-size: 1.2em; margin-top: 1.5em; }\n"
    ".tw { overflow-x: auto; max-width: 100%; }\n"
    "table { border-collapse: collapse; font-variant-numeric: tabular-nums; }\n"
    "th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; white-space: nowrap; }\n"
    "th { background: #eee; }\n"
    "td:first-child, th:first-child { text-align: left; }\n"
    ".kv { display: flex; flex-wrap: wrap; gap: 0.3em; }\n"
    ".kv span { border: 1px solid #ccc; padding: 0.15em 0.5em; white-space: nowrap; font-variant-numeric: tabular-nums; }\n"
    ".kv b { font-weight: normal; color: #555; }\n"
    "#live { margin-left: 1em; padding: 0.1em 0.5em; border-radius: 0.3em; background: #dfd; }\n"
    "#live.stale { background: #fdd; }\n"
    "@media (max-width: 600px) {\n"
    "  body { margin: 0.6em; font-size: 14px; }\n"
    "  h1 { font-size: 1.3em; }\n"
    "  th, td { padding: 0.15em 0.35em; }\n"
    "  #live { display: block; margin: 0.4em 0 0; }\n"
    "}\n";

/* The status page's script: refreshes every section of /status from
 * /status.json once a second (the page's own tables are the first view,
 * and what a browser without scripts keeps). #live tells whether it is
 * updating; its data- attributes keep the update count and the first and
 * last count of frames received on all interfaces. */
static const char status_js[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var live = document.getElementById('live');\n"
    "  var updates = 0, firstRx = null;\n"
    "  var ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\"': '&quot;' };\n"
    "  function esc(v) { return String(v).replace(/[&<>\"]/g, function (c) { return ESC[c]; }); }\n"
    "  function table(cols, rows) {\n"
    "    var h = '<div class=\"tw\"><table><tr>';\n"
    "    cols.forEach(function (c) { h += '<th>' + esc(c[1]) + '</th>'; });\n"
    "    h += '</tr>\\n';\n"
    "    rows.forEach(function (r) {\n"
    "      h += '<tr>';\n"
    "      cols.forEach(function (c) { var v = typeof c[0] === 'function' ? c[0](r) : r[c[0]];\n"
    "        h += '<td>' + esc(v === undefined ? '' : v) + '</td>'; });\n"
    "      h += '</tr>\\n';\n"
    "    });\n"
    "    return h + '</table></div>';\n"
    "  }\n"
    "  function section(id, title, cols, rows) {\n"
    "    var el = document.getElementById(id);\n"
    "    if (!el) { el = document.createElement('section'); el.id = id; document.body.appendChild(el); }\n"
    "    el.innerHTML = '<h2>' + esc(title) + '</h2>\\n' + table(cols, rows);\n"
    "  }\n"
    "  function yesno(k) { return function (r) { return r[k] ? 'yes' : 'no'; }; }\n"
    "  function render(d) {\n"
    "    document.getElementById('now').textContent = d.now_ms;\n"
    "    if (d.http) {\n"
    "      var kv = '<div class=\"kv\">';\n"
    "      Object.keys(d.http).forEach(function (k) {\n"
    "        if (k !== 'port') { kv += '<span><b>' + esc(k) + '</b> ' + esc(d.http[k]) + '</span>'; } });\n"
    "      document.getElementById('s-http').innerHTML = '<h2>HTTP server (port ' + esc(d.http.port) + ')</h2>\\n' +\n"
    "        kv + '</div>';\n"
    "    }\n"
    "    section('s-if', 'Interfaces', [['name', 'name'], [function (r) { return r.addr + '/' + r.prefix; }, 'address'],\n"
    "      ['mtu', 'mtu'], [yesno('up'), 'up'], [yesno('link'), 'link'], ['rx_frames', 'rx frames'],\n"
    "      ['rx_bytes', 'rx bytes'], ['rx_drops', 'rx drops'], ['tx_frames', 'tx frames'], ['tx_bytes', 'tx bytes'],\n"
    "      ['tx_drops', 'tx drops']], d.interfaces);\n"
    "    section('s-tcp', 'TCP connections', [['state', 'state'], ['local', 'local'], ['peer', 'peer'],\n"
    "      ['bytes_acked', 'bytes acked'], ['bytes_received', 'bytes received'], ['unacked', 'unacked'],\n"
    "      ['srtt_ms', 'srtt ms'], ['cwnd', 'cwnd'], ['retransmits', 'retransmits']], d.tcp);\n"
    "    section('s-pools', 'Pools', [['name', 'pool'], ['used', 'used'], ['high', 'high'], ['failed', 'failed'],\n"
    "      ['size', 'size']], d.pools);\n"
    "    section('s-drops', 'Drop counters (non-zero)', [['name', 'counter'], ['value', 'value']],\n"
    "      Object.keys(d.drops).map(function (k) { return { name: k, value: d.drops[k] }; }));\n"
    "    var rx = d.interfaces.reduce(function (a, i) { return a + i.rx_frames; }, 0);\n"
    "    if (firstRx === null) { firstRx = rx; }\n"
    "    updates++;\n"
    "    live.className = '';\n"
    "    live.textContent = 'live, ' + updates + (updates === 1 ? ' update' : ' updates') +\n"
    "      (d.truncated ? ' (truncated)' : '');\n"
    "    live.setAttribute('data-updates', updates);\n"
    "    live.setAttribute('data-first-rx', firstRx);\n"
    "    live.setAttribute('data-rx', rx);\n"
    "  }\n"
    "  function tick() {\n"
    "    fetch('/status.json', { cache: 'no-store' }).then(function (r) {\n"
    "      if (!r.ok) { throw new Error('HTTP ' + r.status); }\n"
    "      return r.json();\n"
    "    }).then(render, function (e) {\n"
    "      live.className = 'stale';\n"
    "      live.textContent = 'not updating: ' + e.message;\n"
    "    }).then(function () { setTimeout(tick, 1000); });\n"
    "  }\n"
    "  tick();\n"
    "})();\n";

void wisp_httpd_big_gen(uint32_t off, uint8_t *dst, uint32_t n)
{
    uint32_t i;
    for (i = 0; i < n; i++, off++) {
        uint32_t w = (off / 4u) * 0x9E3779B1u + 0x7F4A7C15u;
        dst[i] = (uint8_t)(w >> (24u - 8u * (off % 4u)));
    }
}

static const struct wisp_httpd_file files[] = {
    { "/index.html", "text/html; charset=utf-8", WISP_HTTPD_ROM, (const uint8_t *)index_html,
      (uint32_t)(sizeof index_html - 1u), NULL },
    { "/style.css", "text/css; charset=utf-8", WISP_HTTPD_ROM, (const uint8_t *)style_css,
      (uint32_t)(sizeof style_css - 1u), NULL },
    { "/big.bin", "application/octet-stream", WISP_HTTPD_GEN, NULL, WISP_HTTPD_BIG_LEN, wisp_httpd_big_gen },
    { "/status", "text/html; charset=utf-8", WISP_HTTPD_STATUS_HTML, NULL, 0, NULL },
    { "/status.js", "text/javascript; charset=utf-8", WISP_HTTPD_ROM, (const uint8_t *)status_js,
      (uint32_t)(sizeof status_js - 1u), NULL },
    { "/status.json", "application/json", WISP_HTTPD_STATUS_JSON, NULL, 0, NULL },
};

const struct wisp_httpd_file *wisp_httpd_files(unsigned *n)
{
    *n = (unsigned)(sizeof files / sizeof files[0]);
    return files;
}
