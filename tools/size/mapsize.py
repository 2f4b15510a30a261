#!/usr/bin/env python3
"""Sum what the stack's archives contribute to a linked image, from a GNU ld
map file (-Wl,-Map): every input section that went into the output (after
--gc-sections; discarded ones are listed apart and skipped), attributed to
its object when it comes from an archive whose name matches --lib.

Prints one JSON object: {"total": {"text":..,"data":..,"bss":..},
"modules": {"tcp_in": {...}, ...}}. text = .text* + .rodata* (flash),
data = .data* (initialised RAM; its initial values are in flash too),
bss = .bss* + COMMON (zeroed RAM)."""
import json
import re
import sys


def kind(sec):
    if sec.startswith(('.text', '.rodata', '.glue', '.vfp11', '.v4_bx', '.iplt', '.ARM.extab', '.ARM.exidx')):
        return 'text'
    if sec.startswith('.data'):
        return 'data'
    if sec.startswith(('.bss', 'COMMON')):
        return 'bss'
    return None


def parse(path, libs):
    lines = open(path, encoding='utf-8', errors='replace').read().splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith('Linker script and memory map'))
    except StopIteration:
        sys.exit('%s: no memory map' % path)
    lib_re = re.compile(r'(?:^|/)(%s)\((.+?)\)$' % '|'.join(re.escape(l) for l in libs))
    entry = re.compile(r'^ (\S+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$')
    head = re.compile(r'^ (\S+)$')
    cont = re.compile(r'^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$')
    mods = {}
    pending = None
    for line in lines[start:]:
        m = entry.match(line)
        if m:
            sec, size, obj = m.group(1), int(m.group(3), 16), m.group(4).strip()
        else:
            m = cont.match(line)
            if m and pending:
                sec, size, obj = pending, int(m.group(2), 16), m.group(3).strip()
            else:
                h = head.match(line)
                pending = h.group(1) if h else None
                continue
        pending = None
        k = kind(sec)
        lm = lib_re.search(obj)
        if not k or not lm or size == 0:
            continue
        mod = re.sub(r'\.(c\.)?o(bj)?$', '', lm.group(2))
        d = mods.setdefault(mod, {'text': 0, 'data': 0, 'bss': 0})
        d[k] += size
    total = {'text': 0, 'data': 0, 'bss': 0}
    for d in mods.values():
        for k in total:
            total[k] += d[k]
    return {'total': total, 'modules': mods}


if __name__ == '__main__':
    if len(sys.argv) < 3:
        sys.exit('usage: mapsize.py MAP LIBNAME...')
    print(json.dumps(parse(sys.argv[1], sys.argv[2:]), sort_keys=True))
