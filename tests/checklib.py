"""checklib.py - the checks the Python tests share.

check() counts one expectation and records a failed one, printed at once with FAIL (and a passed
one with ok, unless quiet is set), so that one run reports every problem; finish() prints the
summary line and returns the exit status. Import it with tests/ on sys.path, as serverlib and
indexlib are.
"""
import time

failures = []  # what failed, in order: this one list for the life of the process
quiet = False  # True: print failed checks only
checks = 0


def check(cond, what, detail=''):
    """Records one expectation: prints 'ok   WHAT' (unless quiet) or 'FAIL WHAT  (DETAIL)' and, when
    cond is false, appends what to failures. Returns cond as a bool."""
    global checks
    checks += 1
    ok = bool(cond)
    if not ok:
        failures.append(what)
        print('FAIL ' + what + ('  (%s)' % (detail,) if detail != '' else ''), flush=True)
    elif not quiet:
        print('ok   ' + what, flush=True)
    return ok


def fail(what):
    """Records a failure (a check that cannot hold). Returns False."""
    return check(False, what)


def ok(what):
    """Prints a passed step that is not a check of its own (unless quiet)."""
    if not quiet:
        print('ok   ' + what, flush=True)


def finish(name, t0=None, extra=''):
    """Prints 'NAME: passed' or 'NAME: FAILED (N)', with the seconds since t0 (time.monotonic())
    when given, then extra. Returns the exit status: 0 when every check held, 1 otherwise."""
    took = ' in %.1f s' % (time.monotonic() - t0) if t0 is not None else ''
    print('%s: %s%s%s' % (name, 'FAILED (%d)' % len(failures) if failures else 'passed', took, extra),
          flush=True)
    return 1 if failures else 0
