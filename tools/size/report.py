#!/usr/bin/env python3
"""Tables of tools/size-report.sh: reads its results file, prints the
footprint table beside the reference stacks' figures, per-module shares
and per-connection RAM; --check compares with the budget file (exit 1 when
over), --doc FILE writes the same tables as Markdown."""
import json
import sys

# Reference figures (issue 9; same method: arm-none-eabi-gcc 12.2, M4,
# -Os, --gc-sections, nano.specs, the stack's linked share from the map).
REF = {
    'raw': {'lwIP 2.2': 28078, 'FreeRTOS+TCP': 23406, 'picoTCP': 30639},
    'full': {'lwIP 2.2': 37742},
}
REF_NOTE = {'FreeRTOS+TCP': ' (no frag)'}
IMAGES = [
    ('raw', 'raw / no OS: IPv4, ARP, ICMP, UDP, TCP, frag+reass, DHCP, DNS'),
    ('raw-lwiplike', 'raw, lwIP\'s TCP feature set (no SACK/WS/TS/cookies)'),
    ('full', 'full: stack thread, netconn + BSD sockets + getaddrinfo'),
    ('udp', 'UDP only (+ DHCP, DNS)'),
]
LWIP_CONN = 212  # lwIP 2.2: tcp_pcb 156 + netconn 40 + lwip_sock 16, + 2-3 OS objects


def load(path):
    res = {}
    for line in open(path):
        cpu, what, rest = line.rstrip('\n').split(' ', 2)
        if what.startswith('ram-'):
            d = {}
            for kv in rest.split():
                k, v = kv.split('=')
                d[k.replace('wisp_sizeof_', '')] = int(v)
            res[(cpu, what)] = d
        else:
            res[(cpu, what)] = json.loads(rest)
    return res


def conn(ram, os_objects):
    pcb, nc, so = ram['tcp_pcb'], ram['netconn'], ram['socket']
    return pcb, nc, so, pcb + nc + so


def figures(res, os_objects):
    """key -> measured value, for the budget file."""
    f = {}
    for (cpu, what), d in res.items():
        if what.startswith('ram-'):
            continue
        f['%s.%s.text' % (cpu, what)] = d['total']['text'] + d['total']['data']
    for cpu in sorted({c for c, _ in res}):
        for tag, key in (('ram-default', ''), ('ram-lwiplike', '-lwiplike')):
            ram = res.get((cpu, tag))
            if ram and 'tcp_pcb' in ram:
                pcb, nc, so, tot = conn(ram, os_objects)
                f['%s.pcb%s' % (cpu, key)] = pcb
                f['%s.conn%s' % (cpu, key)] = tot
    f['netconn.os_objects'] = os_objects
    return f


def tables(res, os_objects):
    cpus = [c for c in ('m4', 'm0') if (c, 'raw') in res]
    out = []
    refs = ['lwIP 2.2', 'FreeRTOS+TCP', 'picoTCP']
    hdr = '| linked stack flash (text + rodata + data), bytes | ' + ' | '.join('wisp %s' % c.upper() for c in cpus) + \
          ' | ' + ' | '.join('%s M4' % r for r in refs) + ' |'
    out.append(hdr)
    out.append('|---' + '|---:' * (len(cpus) + len(refs)) + '|')
    for key, label in IMAGES:
        cells = ['{:,}'.format(res[(c, key)]['total']['text'] + res[(c, key)]['total']['data']) for c in cpus]
        for r in refs:
            v = REF.get(key, {}).get(r)
            cells.append('{:,}{}'.format(v, REF_NOTE.get(r, '')) if v else '')
        out.append('| %s | %s |' % (label, ' | '.join(cells)))
    out.append('')
    out.append('| static RAM the stack\'s objects add to the image (data + bss), bytes | ' +
               ' | '.join('wisp %s' % c.upper() for c in cpus) + ' |')
    out.append('|---' + '|---:' * len(cpus) + '|')
    for key, label in IMAGES:
        out.append('| %s | %s |' % (label, ' | '.join('{:,}'.format(res[(c, key)]['total']['data'] + res[(c, key)]['total']['bss']) for c in cpus)))
    out.append('')
    # per module, M4 (first cpu)
    c = cpus[0]
    mods = sorted({m for key, _ in IMAGES for m in res[(c, key)]['modules']})
    out.append('| %s flash by module, bytes | raw | raw-lwiplike | full | udp |' % c.upper())
    out.append('|---|---:|---:|---:|---:|')
    for m in sorted(mods, key=lambda m: -max(res[(c, k)]['modules'].get(m, {'text': 0, 'data': 0})['text'] for k, _ in IMAGES)):
        cells = []
        for key, _ in IMAGES:
            d = res[(c, key)]['modules'].get(m)
            cells.append('{:,}'.format(d['text'] + d['data']) if d else '')
        out.append('| %s | %s |' % (m, ' | '.join(cells)))
    out.append('')
    # RAM
    out.append('| RAM, bytes (%s) | default options | lwIP\'s TCP feature set | UDP only | lwIP 2.2 |' % ', '.join(x.upper() for x in cpus))
    out.append('|---|---:|---:|---:|---:|')
    rows = [('struct wisp_stack (instance, default pools)', 'stack', ''),
            ('struct wisp_netif', 'netif', ''),
            ('UDP PCB', 'udp_pcb', ''),
            ('DHCP client', 'dhcp', ''),
            ('TCP PCB', 'tcp_pcb', '156'),
            ('netconn (incl. %d one-pointer OS handles)' % os_objects, 'netconn', '40'),
            ('socket slot', 'socket', '16')]
    for label, k, lw in rows:
        cells = []
        for tag in ('ram-default', 'ram-lwiplike', 'ram-udp'):
            vals = [res[(cc, tag)].get(k) for cc in cpus]
            cells.append(' / '.join('' if v is None else str(v) for v in vals) if any(v is not None for v in vals) else '—')
        out.append('| %s | %s | %s |' % (label, ' | '.join(cells), lw))
    cells = []
    for tag in ('ram-default', 'ram-lwiplike'):
        cells.append(' / '.join(str(conn(res[(cc, tag)], os_objects)[3]) for cc in cpus))
    out.append('| per TCP connection: PCB + netconn + socket | %s | — | %d |' % (' | '.join(cells), LWIP_CONN))
    out.append('| OS objects per netconn | %d | %d | — | 2–3 |' % (os_objects, os_objects))
    return out


def budgets(path):
    b = {}
    for line in open(path):
        line = line.split('#', 1)[0].split()
        if len(line) >= 2:
            b[line[0]] = (int(line[1]), int(line[2]) if len(line) > 2 else None)
    return b


def main():
    args = sys.argv[1:]
    results, budget_file, os_objects = args[0], args[1], int(args[2])
    check = '--check' in args
    doc = args[args.index('--doc') + 1] if '--doc' in args else None
    res = load(results)
    lines = tables(res, os_objects)
    print('\n'.join(lines))
    f = figures(res, os_objects)
    bud = budgets(budget_file)
    print('\n| budget (tools/size-budget.txt) | measured | budget | issue-9 goal | |')
    print('|---|---:|---:|---:|---|')
    over = []
    for k, (lim, goal) in bud.items():
        if k not in f:
            continue
        ok = f[k] <= lim
        if not ok:
            over.append(k)
        print('| %s | %d | %d | %s | %s |' % (k, f[k], lim, goal if goal is not None else '', 'ok' if ok else 'OVER'))
    if doc:
        write_doc(doc, lines, f, bud)
    if check:
        missing = [k for k in bud if k.startswith('m4') or k.startswith('netconn') if k not in f]
        if missing:
            print('size budget: not measured: %s' % ', '.join(missing))
            sys.exit(1)
        if over:
            print('size budget EXCEEDED: %s' % ', '.join(over))
            sys.exit(1)
        print('size budget: all %d figures within budget' % len([k for k in bud if k in f]))


def write_doc(path, lines, f, bud):
    with open(path, 'w') as o:
        o.write(DOC_HEAD)
        o.write('\n'.join(lines))
        o.write('\n\n## Budgets\n\n`tools/size-budget.txt`, checked by the test suite (`unit.size_budget`, '
                '`tools/size-report.sh --check`): a figure above its budget fails the suite. The budget is lowered '
                'whenever it is beaten and never raised without a sentence in the commit saying why; the last '
                'column is the goal issue 9 set (lwIP 2.2\'s figure or below).\n\n')
        o.write('| figure | measured | budget | goal |\n|---|---:|---:|---:|\n')
        for k, (lim, goal) in bud.items():
            if k in f:
                o.write('| %s | %d | %d | %s |\n' % (k, f[k], lim, goal if goal is not None else ''))


DOC_HEAD = """# wisp's footprint

Generated by `tools/size-report.sh --doc` (regenerate with that command; it needs
`arm-none-eabi-gcc` and newlib from Debian: `gcc-arm-none-eabi libnewlib-arm-none-eabi`).

**Method** -- the one the reference figures were measured with: arm-none-eabi-gcc 12.2,
`-mcpu=cortex-m4` (or `cortex-m0`) `-mthumb -Os -ffunction-sections -fdata-sections`, each image
linked with `-Wl,--gc-sections -nostartfiles -Wl,-e,main --specs=nano.specs` from a never-run `main`
that calls the APIs a typical application uses, counting only what the stack's archives contribute,
read from the linker map (`tools/size/mapsize.py`) -- not libc, libgcc, startup or the application.
Flash = `.text*` + `.rodata*` + `.data*` (initial values) of the stack's objects.

- **raw** (`tools/size/probe_raw.c`, no OS): netif add/up, DHCP start, DNS lookup, UDP bind/recv/sendto,
  TCP listen/accept/write/recv/connect, main loop polling the stack; options `tools/size/opts_default.h`
  (opt.h's defaults: every feature on -- SACK, window scaling, timestamps, SYN cookies, compact
  TIME-WAIT, RFC 5961, loopback, counters, IP fragmentation and reassembly; congestion control NewReno,
  CUBIC being opt-in, `WISP_TCP_CUBIC`, as lwIP has NewReno only).
- **raw, lwIP's TCP feature set**: the same with `tools/size/opts_lwiplike.h` (SACK, window scaling,
  timestamps, SYN cookies off).
- **full** (`tools/size/probe_full.c`): raw plus the stack thread, a netconn echo server, a socket
  server multiplexed with `select`, a socket client resolving with `getaddrinfo`; the OS layer is a
  stand-in RTOS port whose handles are one pointer (`tools/size/sys_probe.[ch]`; its code is the
  application's side of the link and not counted, as lwIP's `sys_arch` is not).
- **UDP only**: probe_raw.c against a core built with `WISP_TCP 0` (`tools/size/opts_udp.h`).

The lwIP 2.2, FreeRTOS+TCP and picoTCP figures are the reference measurements quoted in issue 9
(same method, Cortex-M4); they are not re-measured here (their sources are not in this tree).
RAM: `sizeof` of each struct with the image's options (`tools/size/sizeof.c`); OS objects are the
`wisp_sys_*_t` members of `struct wisp_netconn` (each is one pointer here; the RTOS's own object
-- a FreeRTOS queue or semaphore -- comes on top, as it does for lwIP's).

"""

if __name__ == '__main__':
    main()
