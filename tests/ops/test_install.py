#!/usr/bin/env python3
"""Installs the build into a scratch DESTDIR and checks what a package would ship.

    test_install.py --meson MESON --build-root DIR --mini CORPUS [--program NAME]...

1. `meson install --no-rebuild --destdir TMP` from the build root (no rebuild: the test must not
   race the other tests over the build's outputs).
2. The programs given with --program are in bindir, executable, and print "NAME VERSION" for
   --version; the man pages are in mandir/man1 and man8 with the version and paths substituted
   and pass `groff -man -ww` without a warning; the units are in <prefix>/lib/systemd/system and
   the reindex script in libexecdir, with no @placeholder@ left and with their Exec paths pointing
   at the installed programs.
3. `systemd-analyze verify` on the installed units. The units name their programs by their final
   paths (<prefix>/bin/atlas-serve), which exist only under DESTDIR here, so the units are copied
   with exactly those path prefixes rewritten to DESTDIR: systemd-analyze then checks the real
   installed files (existence, executable bit) and, through MANPATH, that the man pages their
   Documentation= names exist. Any message from it is a failure: it reports unknown keys and
   unparsable values as warnings with exit status 0. A template (atlas-failed@.service) is
   verified as the instance OnFailure= starts. `systemd-analyze security --offline` must rate
   the services at most 2.0 ("OK"), so that the hardening cannot be dropped unnoticed. What
   verify does not check, checked here: atlas-reindex.service's OnFailure= names a shipped unit
   (a misspelled one loads as "not found" without a word), whose command, specifiers filled in,
   prints the failed unit's name and which logs at SyslogLevel=err; atlas-reindex.path watches the
   corpus directory the script reads and starts atlas-reindex.service.
   A missing systemd-analyze is a failure, not a skip (scripts/setup --test installs systemd).
4. The installed atlas-reindex script, run with the installed atlas-index on a copy of the mini
   corpus: exit 0 and a usable index; then, on a broken corpus, a non-zero exit (systemd marks the
   unit failed), the problem reported as file:line, and the index left byte for byte untouched;
   and a non-zero exit when the corpus directory is missing; and a second build when the corpus
   directory changes during the first (an atlas-index wrapper touches it), as a delivery landing
   mid-build would.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checklib import fail, failures, ok  # noqa: E402

UNITS = ["atlas-serve.service", "atlas-reindex.service", "atlas-reindex.timer", "atlas-reindex.path",
         "atlas-failed@.service"]
# The instance of a template unit that systemd-analyze checks, as OnFailure= starts it.
INSTANCE = {"atlas-failed@.service": "atlas-failed@atlas-reindex.service.service"}
HARDENED = ["atlas-serve.service", "atlas-reindex.service", "atlas-failed@.service"]
MAN_PAGES = ["man1/atlas-index.1", "man1/atlas-query.1", "man8/atlas-serve.8"]


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run(cmd, **kw)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def is_exec(path):
    return os.path.isfile(path) and os.stat(path).st_mode & stat.S_IXUSR


def check_no_placeholders(path):
    with open(path, encoding="utf-8") as f:
        left = sorted(set(re.findall(r"@[A-Za-z_]+@", f.read())))
    if left:
        fail(f"{path}: placeholders not substituted: {' '.join(left)}")
    return not left


def unit_values(path, key):
    """Returns the values of key= in the unit file at path, in order."""
    with open(path, encoding="utf-8") as f:
        return [line.split("=", 1)[1].strip() for line in f if line.startswith(key + "=")]


def check_failure_units(vdir):
    """What systemd-analyze verify lets through in the failure and path units (see the module
    docstring, 3)."""
    reindex = os.path.join(vdir, "atlas-reindex.service")
    on_failure = unit_values(reindex, "OnFailure")
    target = on_failure[0].replace("%n", "atlas-reindex.service") if len(on_failure) == 1 else ""
    m = re.fullmatch(r"([^@]+@)(.+)\.service", target)
    template = m.group(1) + ".service" if m else target
    if not target or template not in UNITS:
        fail(f"atlas-reindex.service: OnFailure={on_failure} does not name a shipped unit")
    else:
        path = os.path.join(vdir, template)
        instance = m.group(2) if m else ""
        levels = unit_values(path, "SyslogLevel")
        execs = unit_values(path, "ExecStart")
        if levels != ["err"]:
            fail(f"{template}: SyslogLevel={levels}, expected err (the journal's error priority)")
        elif len(execs) != 1 or not execs[0].startswith("/bin/sh -c "):
            fail(f"{template}: ExecStart={execs}, expected one /bin/sh -c command")
        else:
            cmd = execs[0][len("/bin/sh -c "):].strip("'").replace("%i", instance)
            r = run(["/bin/sh", "-c", cmd])
            if r.returncode or f"{instance} failed" not in r.stdout:
                fail(f"{template} for {instance}: exit {r.returncode}, printed {r.stdout!r}")
            else:
                ok(f"OnFailure={on_failure[0]}: logs at priority err: {r.stdout.strip()}")
    watch = os.path.join(vdir, "atlas-reindex.path")
    changed, unit = unit_values(watch, "PathChanged"), unit_values(watch, "Unit")
    if changed != ["/var/lib/atlas/corpus"] or unit != ["atlas-reindex.service"]:
        fail(f"atlas-reindex.path: PathChanged={changed} Unit={unit}, expected the corpus "
             "directory /var/lib/atlas/corpus and atlas-reindex.service")
    else:
        ok("atlas-reindex.path: PathChanged=/var/lib/atlas/corpus starts atlas-reindex.service")


def read_status(db):
    """Returns the reindex status file beside db, parsed ({} when absent or not JSON)."""
    try:
        with open(db + ".status") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def check_rebuild_on_change(script, indexer, mini, tmp):
    """atlas-reindex builds again when the corpus directory changed during a build: a wrapper
    around atlas-index touches the directory in its first run only."""
    corpus = os.path.join(tmp, "corpus-delivered")
    shutil.copytree(mini, corpus)
    db = os.path.join(tmp, "state", "delivered.db")
    calls = os.path.join(tmp, "indexer-calls")
    wrapper = os.path.join(tmp, "touching-indexer")
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n"
                f'echo run >> "{calls}"\n'
                f'"{indexer}" "$@"\n'
                "status=$?\n"
                f'[ "$(wc -l < "{calls}")" -gt 1 ] || touch "{corpus}"\n'
                "exit $status\n")
    os.chmod(wrapper, 0o755)
    r = run([script], env=dict(os.environ, ATLAS_CORPUS=corpus, ATLAS_DB=db, ATLAS_INDEXER=wrapper))
    with open(calls) as f:
        n = len(f.read().splitlines())
    if r.returncode or n != 2 or "changed during the build" not in r.stdout:
        fail(f"atlas-reindex with the corpus changed mid-build: exit {r.returncode}, {n} builds "
             f"(expected 2): {r.stdout}{r.stderr}")
    else:
        ok("atlas-reindex builds again when the corpus directory changed during the build (2 builds)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--meson", required=True)
    ap.add_argument("--build-root", required=True)
    ap.add_argument("--mini", required=True, help="a small valid corpus (tests/corpora/mini)")
    ap.add_argument("--program", action="append", default=[], help="a program that must be installed")
    a = ap.parse_args()

    intro = run([a.meson, "introspect", a.build_root, "--buildoptions", "--projectinfo"])
    if intro.returncode:
        sys.exit(f"meson introspect failed: {intro.stderr}")
    info = json.loads(intro.stdout)
    opts = {o["name"]: o["value"] for o in info["buildoptions"]}
    version = info["projectinfo"]["version"]

    def final(option):  # the install path of a directory option, as the units name it
        return os.path.join(opts["prefix"], opts[option])

    bindir, libexecdir, mandir = final("bindir"), final("libexecdir"), final("mandir")
    unitdir = os.path.join(opts["prefix"], "lib", "systemd", "system")

    tmp = tempfile.mkdtemp(prefix="atlas-ops-install-")
    try:
        dest = os.path.join(tmp, "dest")

        def staged(path):
            return dest + path if os.path.isabs(path) else os.path.join(dest, path)

        # 1. install
        r = run([a.meson, "install", "-C", a.build_root, "--no-rebuild", "--destdir", dest])
        if r.returncode:
            print(r.stdout, r.stderr)
            fail(f"meson install exited {r.returncode}")
            return 1
        ok(f"meson install --destdir {dest}")

        # 2. what is installed
        for name in a.program:
            path = staged(os.path.join(bindir, name))
            if not is_exec(path):
                fail(f"{name}: not installed as an executable at {path}")
                continue
            r = run([path, "--version"])
            if r.returncode or r.stdout.strip() != f"{name} {version}":
                fail(f"{path} --version: exit {r.returncode}, printed {r.stdout.strip()!r}, "
                     f"expected {name} {version!r}")
            else:
                ok(f"{bindir}/{name} installed, --version {version}")

        groff = shutil.which("groff")
        if not groff:
            fail("groff is missing (Debian package groff-base): the man pages cannot be checked")
        for page in MAN_PAGES:
            path = staged(os.path.join(mandir, page))
            if not os.path.isfile(path):
                fail(f"man page not installed: {path}")
                continue
            check_no_placeholders(path)
            with open(path, encoding="utf-8") as f:
                th = next((l for l in f if l.startswith(".TH ")), "")
            if f"Atlas {version}" not in th:
                fail(f"{path}: .TH does not carry the version {version}: {th.strip()!r}")
            if groff:
                r = run([groff, "-t", "-man", "-ww", "-z", "-K", "utf8", path],
                        env=dict(os.environ, LC_ALL="C.UTF-8"))
                if r.returncode or r.stderr.strip():
                    fail(f"groff -man -ww {page}: exit {r.returncode}: {r.stderr.strip()}")
                    continue
            ok(f"{mandir}/{page} installed, version {version}, no groff warning")

        script = staged(os.path.join(libexecdir, "atlas-reindex"))
        if not is_exec(script):
            fail(f"atlas-reindex: not installed as an executable at {script}")
        else:
            check_no_placeholders(script)
            r = run(["sh", "-n", script])
            if r.returncode:
                fail(f"sh -n {script}: {r.stderr.strip()}")
            ok(f"{libexecdir}/atlas-reindex installed")

        expect_exec = {
            "atlas-serve.service": f"ExecStart={bindir}/atlas-serve --index /var/lib/atlas/atlas.db",
            "atlas-reindex.service": f"ExecStart={libexecdir}/atlas-reindex",
        }
        for unit in UNITS:
            path = staged(os.path.join(unitdir, unit))
            if not os.path.isfile(path):
                fail(f"unit not installed: {path}")
                continue
            check_no_placeholders(path)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if unit in expect_exec and expect_exec[unit] not in text:
                fail(f"{unit}: no line starting {expect_exec[unit]!r}")
            ok(f"{unitdir}/{unit} installed")

        # 3. systemd-analyze
        analyze = shutil.which("systemd-analyze")
        if not analyze:
            fail("systemd-analyze is missing (Debian package systemd): the units cannot be verified")
        elif all(os.path.isfile(staged(os.path.join(unitdir, u))) for u in UNITS):
            vdir = os.path.join(tmp, "verify")
            os.makedirs(vdir)
            for unit in UNITS:
                with open(staged(os.path.join(unitdir, unit)), encoding="utf-8") as f:
                    text = f.read()
                for d in sorted({bindir, libexecdir}, key=len, reverse=True):
                    text = text.replace(d.rstrip("/") + "/", staged(d).rstrip("/") + "/")
                with open(os.path.join(vdir, unit), "w", encoding="utf-8") as f:
                    f.write(text)
            env = dict(os.environ, MANPATH=staged(mandir), SYSTEMD_LOG_COLOR="0", SYSTEMD_PAGER="")
            paths = [os.path.join(vdir, INSTANCE.get(u, u)) for u in UNITS]
            r = run([analyze, "verify"] + paths, env=env)
            out = (r.stdout + r.stderr).strip()
            if r.returncode or out:
                fail(f"systemd-analyze verify: exit {r.returncode}:\n{out}")
            else:
                ok("systemd-analyze verify: " + ", ".join(UNITS))
            for unit in HARDENED:
                r = run([analyze, "security", "--offline=yes", "--threshold=20", "--no-pager",
                         os.path.join(vdir, INSTANCE.get(unit, unit))], env=env)
                level = re.search(r"Overall exposure level for \S+: (\S+ \S+)", r.stdout)
                if r.returncode:
                    fail(f"systemd-analyze security {unit}: exposure above 2.0: "
                         f"{level.group(1) if level else r.stdout[-500:] + r.stderr}")
                else:
                    ok(f"systemd-analyze security {unit}: {level.group(1) if level else '?'}")

            check_failure_units(vdir)

        # 4. the reindex script, with the installed atlas-index
        indexer = staged(os.path.join(bindir, "atlas-index"))
        query = staged(os.path.join(bindir, "atlas-query"))
        if is_exec(script) and is_exec(indexer):
            corpus = os.path.join(tmp, "corpus")
            shutil.copytree(a.mini, corpus)
            state = os.path.join(tmp, "state")
            os.makedirs(state)
            db = os.path.join(state, "atlas.db")
            env = dict(os.environ, ATLAS_CORPUS=corpus, ATLAS_DB=db, ATLAS_INDEXER=indexer)
            r = run([script], env=env)
            if r.returncode or not os.path.isfile(db):
                fail(f"atlas-reindex on the mini corpus: exit {r.returncode}: {r.stdout}{r.stderr}")
            else:
                ok("atlas-reindex builds the index: " + r.stdout.strip().splitlines()[-1])
                if is_exec(query):
                    s = run([query, "--index", db, "--stats"])
                    if s.returncode or "build_id" not in s.stdout:
                        fail(f"atlas-query --stats on the reindexed file: exit {s.returncode}: {s.stderr}")
                # ATLAS_FTS_MEMORY reaches atlas-index (an invalid value is its usage error)
                r = run([script], env=dict(env, ATLAS_FTS_MEMORY="1"))
                bad = run([script], env=dict(env, ATLAS_FTS_MEMORY="0"))
                if r.returncode or bad.returncode != 2 or "--fts-memory" not in bad.stderr:
                    fail(f"atlas-reindex with ATLAS_FTS_MEMORY: exit {r.returncode} with 1, "
                         f"{bad.returncode} with 0: {bad.stderr.strip()[:200]}")
                else:
                    ok("atlas-reindex passes ATLAS_FTS_MEMORY to atlas-index --fts-memory")
                # ATLAS_SITE: a built site's HTML indexed with --site, its ATLAS_SITE_CONFIG too
                site = os.path.join(tmp, "site")
                os.makedirs(os.path.join(site, "docs"))
                for name, title in [("index.html", "Home"), ("docs/a.html", "Page A"), ("docs/skip.html", "Skipped")]:
                    with open(os.path.join(site, name), "w") as f:
                        f.write(f"<html><head><title>{title}</title></head><body><main><p>{title} text."
                                "</p></main></body></html>")
                site_cfg = os.path.join(tmp, "site.json")
                with open(site_cfg, "w") as f:
                    f.write('{"exclude": ["skip.html"]}')
                sdb = os.path.join(state, "site.db")
                r = run([script], env=dict(env, ATLAS_SITE=site, ATLAS_SITE_CONFIG=site_cfg, ATLAS_DB=sdb))
                s = run([query, "--index", sdb, "--stats"]) if r.returncode == 0 else r
                if r.returncode or "pages            2" not in s.stdout:
                    fail(f"atlas-reindex with ATLAS_SITE: exit {r.returncode}: {r.stderr.strip()[:200]} {s.stdout[:100]}")
                else:
                    ok("atlas-reindex with ATLAS_SITE and ATLAS_SITE_CONFIG indexes the built site")
                os.remove(sdb)
                if os.path.exists(sdb + ".status"):
                    os.remove(sdb + ".status")
                before = sha256(db)
                explainers = os.path.join(corpus, "explainers")
                victim = os.path.join(explainers, sorted(os.listdir(explainers))[0])
                with open(victim, "w", encoding="utf-8") as f:
                    f.write('{\n  "title": "Broken",\n  "description": \n}\n\nBody.\n')
                r = run([script], env=env)
                status = read_status(db)
                if r.returncode != 0 or "kept at its previous version" not in r.stderr:
                    fail(f"atlas-reindex with a broken page: exit {r.returncode}, not kept: {r.stderr[-300:]}")
                elif f"{os.path.basename(victim)}:" not in r.stderr:
                    fail(f"atlas-reindex with a broken page did not report the file: {r.stderr}")
                elif status.get("exit") != 3:
                    fail(f"atlas-reindex with a broken page: status file {status}")
                else:
                    ok("atlas-reindex with a broken page: built with it kept (--keep-going), status exit 3")
                # an error outside the page files fails the run, recorded in the status file
                before = sha256(db)
                with open(os.path.join(corpus, "topics.json"), "w") as f:
                    f.write("{not json")
                r = run([script], env=env)
                status = read_status(db)
                if r.returncode == 0:
                    fail("atlas-reindex on a broken corpus exited 0")
                elif "topics.json" not in r.stderr:
                    fail(f"atlas-reindex on a broken corpus did not report the file: {r.stderr}")
                elif sha256(db) != before:
                    fail("atlas-reindex on a broken corpus changed the index")
                elif [n for n in os.listdir(state) if n not in ("atlas.db", "atlas.db.status")]:
                    fail(f"atlas-reindex left files beside the index: {os.listdir(state)}")
                elif status.get("exit") != r.returncode or "topics.json" not in status.get("error", ""):
                    fail(f"atlas-reindex on a broken corpus: status file {status}")
                else:
                    ok(f"atlas-reindex on a broken corpus: exit {r.returncode}, index untouched, "
                       f"status file: {status['error'][:60]}")
                r = run([script], env=dict(env, ATLAS_CORPUS=os.path.join(tmp, "no-such-dir")))
                if r.returncode == 0:
                    fail("atlas-reindex with no corpus directory exited 0")
                else:
                    ok(f"atlas-reindex with no corpus directory: exit {r.returncode}")
                check_rebuild_on_change(script, indexer, a.mini, tmp)
        else:
            fail("the reindex script or atlas-index is not installed: the script was not run")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("installation checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
