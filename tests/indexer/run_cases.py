#!/usr/bin/env python3
"""Table-driven test of atlas-index on broken corpora.

Each row of the cases table (tab-separated: name, args, exit, stderr) is run as follows:

1. tests/corpora/mini is copied to a fresh temporary directory;
2. the case's fixture directory, <cases-dir>/<name up to the first '@'>/, if it exists, is laid
   over the copy (its files replace or add to mini's), except for a file named DELETE, which lists
   relative paths (one a line, '#' comments allowed) to remove from the copy;
3. atlas-index runs with the copy as its working directory:
       atlas-index --corpus . --out <tmp>/out/atlas.db ARGS
   (ARGS '-' is none; when ARGS holds --corpus or --out, the runner's own is left out; when the
   first word of ARGS is '@bare', nothing is added at all), so messages read ./explainers/...;
4. the case passes when the exit status is the expected one, stderr contains the expected
   substring ('-': anything; '<empty>': nothing at all), and the output is consistent with the
   status: no index when the exit status is not 0 or --check was given, an index with
   meta.schema_version when a build succeeded, and never a leftover .atlas.db.tmp.* file.

Lines starting with '#' are comments, except '#xfail<TAB>name<TAB>...' rows: known bugs, stated
with the correct expectation. They run and are reported as 'xfail' while they fail, 'XPASS' when
they pass (the bug is fixed: promote the row). Neither fails the suite.

Every fixture directory must be used by at least one row, so a misspelled name cannot leave a
fixture silently untested. Exit status: 0 when every case passes, 1 otherwise, 2 on bad usage.
"""
import argparse
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile

OUT_REL = os.path.join('out', 'atlas.db')


class Case:
    def __init__(self, lineno, name, args, code, stderr, xfail):
        self.lineno, self.name, self.args, self.code, self.stderr, self.xfail = (
            lineno, name, args, code, stderr, xfail)

    @property
    def fixture(self):
        return self.name.split('@', 1)[0]


def read_cases(path):
    cases, errors = [], []
    with open(path, encoding='utf-8') as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip('\n')
            xfail = False
            if line.startswith('#xfail\t'):
                xfail, line = True, line[len('#xfail\t'):]
            elif not line.strip() or line.startswith('#'):
                continue
            cols = line.split('\t')
            if cols == ['name', 'args', 'exit', 'stderr']:
                continue
            if len(cols) != 4:
                errors.append(f'{path}:{lineno}: expected 4 tab-separated columns, got {len(cols)}')
                continue
            name, args, code, stderr = cols
            try:
                code = int(code)
            except ValueError:
                errors.append(f'{path}:{lineno}: exit status {code!r} is not a number')
                continue
            cases.append(Case(lineno, name, args, code, stderr, xfail))
    names = [c.name for c in cases]
    for n in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f'{path}: case {n} appears more than once')
    return cases, errors


def command(indexer, case, tmp):
    words = [] if case.args == '-' else shlex.split(case.args)
    if words and words[0] == '@bare':
        return [indexer] + words[1:]
    cmd = [indexer]
    if '--corpus' not in words:
        cmd += ['--corpus', '.']
    if '--out' not in words:
        cmd += ['--out', os.path.join(tmp, OUT_REL)]
    return cmd + words


def prepare(mini, cases_dir, case, tmp):
    shutil.copytree(mini, tmp, dirs_exist_ok=True)
    os.makedirs(os.path.join(tmp, 'out'), exist_ok=True)
    fixture = os.path.join(cases_dir, case.fixture)
    if not os.path.isdir(fixture):
        return
    for root, _dirs, files in os.walk(fixture):
        rel_root = os.path.relpath(root, fixture)
        for fn in files:
            rel = os.path.normpath(os.path.join(rel_root, fn))
            if rel == 'DELETE':
                continue
            dst = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(root, fn), dst)
    delete = os.path.join(fixture, 'DELETE')
    if os.path.exists(delete):
        with open(delete, encoding='utf-8') as f:
            for line in f:
                rel = line.strip()
                if not rel or rel.startswith('#'):
                    continue
                target = os.path.join(tmp, rel)
                if os.path.isdir(target):
                    shutil.rmtree(target)
                elif os.path.exists(target):
                    os.remove(target)
                else:
                    raise RuntimeError(f'DELETE lists {rel}, which the copy of mini does not have')


def check_outputs(case, cmd, tmp):
    """Problems with what the run left in <tmp>/out (only the runner's own --out is checked)."""
    problems = []
    outdir = os.path.join(tmp, 'out')
    leftovers = [f for f in os.listdir(outdir) if '.tmp.' in f]
    if leftovers:
        problems.append(f'temporary files left behind: {leftovers}')
    if os.path.join(tmp, OUT_REL) not in cmd:
        return problems
    out = os.path.join(tmp, OUT_REL)
    if case.code != 0 or '--check' in cmd:
        if os.path.exists(out):
            problems.append('an index was written although it should not be')
    elif not os.path.exists(out):
        problems.append('the build succeeded but wrote no index')
    else:
        try:
            db = sqlite3.connect(f'file:{out}?mode=ro', uri=True)
            row = db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            db.close()
            if not row:
                problems.append('the index has no meta.schema_version')
        except sqlite3.Error as e:
            problems.append(f'the index does not open: {e}')
    return problems


def run_case(indexer, mini, cases_dir, case):
    """Returns a list of problems (empty when the case passes)."""
    with tempfile.TemporaryDirectory(prefix=f'atlas-case-{case.fixture}-') as tmp:
        try:
            prepare(mini, cases_dir, case, tmp)
        except (OSError, RuntimeError) as e:
            return [f'cannot prepare the corpus: {e}']
        cmd = command(indexer, case, tmp)
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return ['atlas-index did not finish within 60 s']
        stderr = proc.stderr.decode('utf-8', 'replace')
        problems = []
        if proc.returncode < 0:
            problems.append(f'atlas-index was killed by signal {-proc.returncode}')
        elif proc.returncode != case.code:
            problems.append(f'exit status {proc.returncode}, expected {case.code}')
        if case.stderr == '<empty>':
            if stderr:
                problems.append('stderr should be empty')
        elif case.stderr != '-' and case.stderr not in stderr:
            problems.append(f'stderr lacks: {case.stderr}')
        problems += check_outputs(case, cmd, tmp)
        if problems:
            shown = ' '.join(shlex.quote(os.path.relpath(w, tmp) if w.startswith(tmp) else w)
                             for w in cmd)
            problems.append(f'command: (cd <corpus> && {shown})')
            problems.append('stderr was:\n' + ''.join('      | ' + l + '\n'
                                                      for l in stderr.splitlines()).rstrip('\n'))
        return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    ap.add_argument('--indexer', required=True, help='path of atlas-index')
    ap.add_argument('--mini', required=True, help='the valid mini corpus')
    ap.add_argument('--cases', required=True, help='the cases table (TSV)')
    ap.add_argument('--cases-dir', required=True, help='directory of the case fixtures')
    ap.add_argument('only', nargs='*', help='run only these cases')
    a = ap.parse_args()
    indexer = os.path.abspath(a.indexer)
    mini = os.path.abspath(a.mini)
    cases_dir = os.path.abspath(a.cases_dir)

    cases, errors = read_cases(a.cases)
    if os.path.isdir(cases_dir):
        used = {c.fixture for c in cases}
        for d in sorted(os.listdir(cases_dir)):
            if os.path.isdir(os.path.join(cases_dir, d)) and d not in used:
                errors.append(f'fixture {os.path.join(cases_dir, d)} is used by no case')
    for e in errors:
        print(f'FAIL {e}')
    if a.only:
        cases = [c for c in cases if c.name in a.only]

    failed = xfailed = xpassed = 0
    for case in cases:
        problems = run_case(indexer, mini, cases_dir, case)
        if case.xfail:
            if problems:
                xfailed += 1
                print(f'xfail {case.name} (known bug: {problems[0]})')
            else:
                xpassed += 1
                print(f'XPASS {case.name}: the bug is fixed; promote line {case.lineno} of the table')
        elif problems:
            failed += 1
            print(f'FAIL {case.name} (line {case.lineno})')
            for p in problems:
                print(f'    {p}')
        else:
            print(f'ok   {case.name}')
    passed = len(cases) - failed - xfailed - xpassed
    print(f'{len(cases)} cases: {passed} ok, {failed} failed, {xfailed} xfail, {xpassed} xpass'
          + (f'; {len(errors)} table errors' if errors else ''))
    return 1 if failed or errors else 0


if __name__ == '__main__':
    sys.exit(main())
