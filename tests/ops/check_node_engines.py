#!/usr/bin/env python3
"""Every npm package the tests install runs on Debian 12's Node.js: each package of each given
package-lock.json whose "engines" names a "node" range must admit that version (18.20.4).

    check_node_engines.py [--node 18.20.4] tests/browser/package-lock.json tests/ops/package-lock.json

scripts/setup installs Debian's nodejs when no npm is on the machine, so a test tool pinned to a
release that needs a newer Node passes where a Node 20 came from elsewhere and fails on a bare
Debian 12 (playwright-core 1.62 and later: "engines": {"node": ">=20"}, and an exit at load).
The ranges are npm's semver ranges: comparators (<, <=, >, >=, =), ^ and ~, x and * wildcards,
hyphen ranges and || alternatives. A range this cannot read is a failure, not a pass.
"""
import argparse
import json
import re
import sys

VERSION = re.compile(r'^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-[0-9A-Za-z.-]+)?$')


def partial(text):
    """Parses a version that may be partial or wild ("18", "18.x", "*"). Returns a list of up to
    three ints, shorter where the rest is a wildcard; raises ValueError when it is not one."""
    m = VERSION.match(text)
    if not m:
        raise ValueError(f'not a version: {text!r}')
    out = []
    for g in m.groups():
        if g is None or g in 'xX*':
            break
        out.append(int(g))
    return out


def bounds(op, parts):
    """The comparator op with version parts as (low, low_inclusive, high, high_inclusive), each
    bound a 3-tuple or None for unbounded."""
    full = tuple(parts + [0] * (3 - len(parts)))

    def bump(n):  # the first version past every version starting with parts[:n]
        if n == 0:
            return None
        v = parts[:n]
        v[-1] += 1
        return tuple(v + [0] * (3 - n))

    if op in ('', '='):
        if len(parts) == 3:
            return full, True, full, True
        return full, True, bump(len(parts)), False
    if op == '>=':
        return full, True, None, False
    if op == '<':
        return None, False, full, False
    if op == '>':
        return (bump(len(parts)), True, None, False) if len(parts) < 3 else (full, False, None, False)
    if op == '<=':
        return (None, False, bump(len(parts)), False) if len(parts) < 3 else (None, False, full, True)
    if op == '~':
        return full, True, bump(min(len(parts), 2) if len(parts) >= 2 else len(parts)), False
    if op == '^':
        nonzero = next((i for i, p in enumerate(parts) if p != 0), len(parts) - 1)
        return full, True, bump(max(1, nonzero + 1) if parts else 0), False
    raise ValueError(f'unknown operator {op!r}')


def admits(rng, version):
    """Whether the npm semver range rng admits version (a 3-tuple). Raises ValueError on a range
    it cannot read."""
    rng = rng.strip()
    for alt in rng.split('||'):
        alt = alt.strip()
        if alt in ('', '*', 'x', 'X'):
            return True
        hy = re.fullmatch(r'(\S+)\s+-\s+(\S+)', alt)
        if hy:
            comps = [('>=', hy.group(1)), ('<=', hy.group(2))]
        else:
            alt = re.sub(r'(<=|>=|<|>|=|\^|~)\s+', r'\1', alt)  # ">= 16" is ">=16"
            comps = []
            for tok in alt.split():
                m = re.fullmatch(r'(<=|>=|<|>|=|\^|~>?|)(.+)', tok)
                comps.append(('~' if m.group(1) == '~>' else m.group(1), m.group(2)))
        ok = True
        for op, text in comps:
            low, low_in, high, high_in = bounds(op, partial(text))
            if low is not None and (version < low or (version == low and not low_in)):
                ok = False
            if high is not None and (version > high or (version == high and not high_in)):
                ok = False
        if ok:
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--node', default='18.20.4', help="the Node.js version to admit (Debian 12's)")
    ap.add_argument('locks', nargs='+')
    a = ap.parse_args()
    version = tuple(partial(a.node))
    # the checker itself, on ranges seen in npm packages
    for rng, want in [('>=18', True), ('>=20', False), ('>= 16', True), ('^18.17.0 || >=20.5.0', True),
                      ('^20.17.0 || >=22.9.0', False), ('14 - 20', True), ('>=10 <18', False),
                      ('18.x', True), ('~18.20', True), ('~18.19', False), ('*', True), ('<18.20.4', False),
                      ('>18', False), ('>17', True), ('<=18', True), ('^0.10', False), ('~>18.20', True),
                      ('>=18.20.5', False), ('16.x || 18.x', True)]:
        if admits(rng, version) != want and version == (18, 20, 4):
            print(f'FAIL the range reader: {rng!r} for {a.node} should be {want}')
            return 1
    failures = 0
    for path in a.locks:
        with open(path, encoding='utf-8') as f:
            lock = json.load(f)
        packages = lock.get('packages')
        if lock.get('lockfileVersion', 0) < 2 or not isinstance(packages, dict):
            print(f'FAIL {path}: not an npm lockfile v2 or v3 (no "packages")')
            failures += 1
            continue
        checked = 0
        for name, meta in sorted(packages.items()):
            engines = meta.get('engines') if isinstance(meta, dict) else None
            node = engines.get('node') if isinstance(engines, dict) else None
            if not name or node is None:
                continue
            checked += 1
            label = f'{path}: {name[len("node_modules/"):] if name.startswith("node_modules/") else name}' \
                    f'@{meta.get("version")} engines.node {node!r}'
            try:
                good = admits(node, version)
            except ValueError as e:
                print(f'FAIL {label}: cannot read the range ({e})')
                failures += 1
                continue
            if not good:
                print(f'FAIL {label} does not admit Node.js {a.node} (Debian 12)')
                failures += 1
        print(f'ok   {path}: {len(packages) - 1} packages, {checked} with a node range'
              + ('' if failures else f', all admitting {a.node}'))
    print(f'{failures} failed' if failures else 'all passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
