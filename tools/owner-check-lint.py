#!/usr/bin/env python3
"""Every public core entry point checks its caller (WISP_CORE_ASSERT_OWNER).

Lists the functions declared in include/wisp/*.h and defined in src/core,
src/api and src/netif whose body has no WISP_CORE_ASSERT_OWNER and that are
not exempt (tools/owner-check-exempt.txt: pure functions, thread-safe APIs,
init/teardown), and fails on any. Also fails on an exemption that matches
no function any more (so the list stays true).

Usage: owner-check-lint.py [repo root]   (exit 0 = clean, 1 = findings)
"""
import fnmatch
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
MACRO = "WISP_CORE_ASSERT_OWNER"


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def declared(root):
    """Names of functions declared (prototypes, not inline definitions)."""
    names = set()
    inc = os.path.join(root, "include", "wisp")
    for f in sorted(os.listdir(inc)):
        if not f.endswith(".h"):
            continue
        text = strip_comments(open(os.path.join(inc, f), encoding="utf-8").read())
        text = re.sub(r"^\s*#[^\n]*(\\\n[^\n]*)*", "", text, flags=re.M)  # preprocessor lines
        # a prototype: ... name(args);  at brace depth 0
        depth = 0
        stmt = ""
        for ch in text:
            if ch == "{":
                depth += 1
                stmt = ""
                continue
            if ch == "}":
                depth -= 1
                stmt = ""
                continue
            if depth != 0:
                continue
            if ch == ";":
                m = re.search(r"\b(wisp_\w+)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", stmt.strip(), re.S)
                if m and not re.match(r"\s*(typedef|struct\s+\w+\s*\{)", stmt):
                    names.add(m.group(1))
                stmt = ""
            else:
                stmt += ch
    return names


DEF_RE = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(wisp_\w+)\s*\(([^;{}]*?)\)\s*\n?\{", re.M | re.S)


def defined(root):
    """name -> [(file, body)] of non-static function definitions (a
    function defined under #if and #else has several: each must check)."""
    out = {}
    for d in ("src/core", "src/api", "src/netif"):
        base = os.path.join(root, d)
        for f in sorted(os.listdir(base)):
            if not f.endswith(".c"):
                continue
            path = os.path.join(d, f)
            text = strip_comments(open(os.path.join(root, path), encoding="utf-8").read())
            for m in DEF_RE.finditer(text):
                start = m.end() - 1
                end = text.find("\n}", start)
                out.setdefault(m.group(1), []).append((path, text[start:end if end >= 0 else len(text)]))
    return out


def exemptions(root):
    pats = []
    path = os.path.join(root, "tools", "owner-check-exempt.txt")
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            pats.append(line)
    return pats


def main():
    decl = declared(root)
    defs = defined(root)
    pats = exemptions(root)
    used = set()
    missing = []
    checked = 0
    for name in sorted(decl & set(defs)):
        hit = [p for p in pats if fnmatch.fnmatchcase(name, p)]
        if hit:
            used.update(hit)
            continue
        checked += 1
        for path, body in defs[name]:
            if MACRO not in body:
                missing.append("%s (%s)" % (name, path))
    stale = [p for p in pats if p not in used]
    for m in missing:
        print("no %s: %s" % (MACRO, m))
    for p in stale:
        print("exemption matches no public core function: %s" % p)
    print("owner-check-lint: %d public functions, %d checked entry points, %d exempt, %d missing, %d stale exemptions"
          % (len(decl & set(defs)), checked, len(decl & set(defs)) - checked, len(missing), len(stale)))
    return 1 if missing or stale else 0


sys.exit(main())
