"""faultlib.py - helpers shared by the fault tests of tests/faults (loopback only).

Environment (set by tests/faults/meson.build): ATLAS_SERVE, ATLAS_QUERY, ATLAS_INDEX (the three
binaries), ATLAS_REAL_INDEX (the index of the real corpus: only copies are served or damaged),
ATLAS_CORPUS (the real corpus, for rebuilds).

Known issues: a check of a known, open issue is made with known(): it prints XFAIL while the issue
is there and XPASS once it is gone, and counts as a failure only with ATLAS_FAULTS_STRICT=1, so
that the suite stays green while it is open. Fixed issues are checked with check().
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checklib import check, failures  # noqa: E402,F401  (F.check, F.failures for the fault tests)
import checklib  # noqa: E402
from serverlib import Server  # noqa: E402,F401  (F.Server for the fault tests)

SERVE = os.environ.get('ATLAS_SERVE', '')
QUERY = os.environ.get('ATLAS_QUERY', '')
INDEXER = os.environ.get('ATLAS_INDEX', '')
REAL_INDEX = os.environ.get('ATLAS_REAL_INDEX', '')
CORPUS = os.environ.get('ATLAS_CORPUS', '')
STRICT = os.environ.get('ATLAS_FAULTS_STRICT') == '1'
TIMEOUT = 10

known_open = []


def known(cond, bug, what):
    """A check of a known, reported bug (see the module docstring)."""
    if cond:
        print('XPASS %s (%s is fixed: make this check strict)' % (what, bug), flush=True)
    else:
        print('XFAIL %s (%s, known and reported)' % (what, bug), flush=True)
        known_open.append(bug)
        if STRICT:
            failures.append('%s: %s' % (bug, what))
    return cond


def finish(name, t0):
    """Prints the summary line. Returns the exit status: 0 when every check passed."""
    extra = ' (%d known issue(s) open: %s)' % (len(known_open), ', '.join(sorted(set(known_open)))) \
        if known_open else ''
    return checklib.finish(name, t0, extra)


def sha256(path):
    import hashlib
    with open(path, 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def temps(directory, base):
    """The temporary files of atlas-index builds of base in directory (.base.tmp.*)."""
    return sorted(f for f in os.listdir(directory) if f.startswith('.%s.tmp.' % base))


def build_index(out, timeout=60):
    """Builds a copy of the real corpus with one sentence added to its first explainer into out:
    another index, with its own build id (the build id is the content's, so a rebuild of the
    unchanged corpus would have the same). Returns out."""
    corpus = out + '.corpus'
    shutil.rmtree(corpus, ignore_errors=True)
    shutil.copytree(CORPUS, corpus)
    page = os.path.join(corpus, 'explainers', sorted(os.listdir(os.path.join(corpus, 'explainers')))[0])
    with open(page, 'a', encoding='utf-8') as f:
        f.write('\nThis copy was rebuilt for a test.\n')
    subprocess.run([INDEXER, '--corpus', corpus, '--out', out, '--quiet'], check=True,
                   timeout=timeout)
    shutil.rmtree(corpus)
    return out


def stats(index):
    """atlas-query --stats --json of index, parsed."""
    res = subprocess.run([QUERY, '--index', index, '--json', '--stats'], capture_output=True,
                         timeout=TIMEOUT, check=True)
    return json.loads(res.stdout)


def replace(path, source, staging):
    """Copies source to staging (beside path) and renames it over path: an atomic replace with a
    new inode, as atlas-index does."""
    shutil.copyfile(source, staging)
    os.rename(staging, path)


def wait_for(pred, seconds, step=0.05):
    """Polls pred every step seconds for up to seconds. Returns its last value."""
    until = time.monotonic() + seconds
    value = pred()
    while not value and time.monotonic() < until:
        time.sleep(step)
        value = pred()
    return value


def rss_kib(pid):
    """VmRSS of pid in KiB, from /proc/PID/status."""
    with open('/proc/%d/status' % pid) as f:
        m = re.search(r'^VmRSS:\s+(\d+) kB', f.read(), re.M)
    return int(m.group(1))


def rss_parts(pid):
    """(VmRSS, RssAnon, RssFile) of pid in KiB."""
    with open('/proc/%d/status' % pid) as f:
        text = f.read()
    return tuple(int(re.search(r'^%s:\s+(\d+) kB' % k, text, re.M).group(1))
                 for k in ('VmRSS', 'RssAnon', 'RssFile'))


def strip_took(body):
    """body with the took_ms timing zeroed."""
    return re.sub(rb'"took_ms":[-+0-9.eE]+', b'"took_ms":0', body)


def need_env(*names):
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        sys.exit('missing environment: %s (run through meson test)' % ' '.join(missing))
