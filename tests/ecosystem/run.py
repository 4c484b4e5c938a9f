#!/usr/bin/env python3
"""Runs a node script of tests/ecosystem against an atlas-serve of the real index.

    run.py SCRIPT --package-dir tests/ecosystem --work-dir BUILD/tests/ecosystem/npm \
           --serve BUILD/server/atlas-serve --index BUILD/tests/atlas.db \
           --out-dir BUILD/tests/ecosystem [--chromium /usr/bin/chromium]

Setup: package.json and package-lock.json of --package-dir are copied to --work-dir and installed
there with `npm ci` (the npm cache beside it, under the build directory; scripts not run, no
browser download); the install is skipped when the lock file and the node version are those of
the last install. atlas-serve is started on a free loopback port with `--cors *` (the
InstantSearch page is served from another origin) and `--api-key-file` (a key the clients are
given), node runs SCRIPT, and the server is always stopped. A missing node, npm or Chromium is a
failure, not a skip.
"""
import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from serverlib import Server  # noqa: E402

START_TIMEOUT = 15
NODE_TIMEOUT = 150
API_KEY = "atlas-ecosystem-test-key"


def npm_ci(package_dir, work, node, npm):
    """Installs package-lock.json into work unless it is already. Returns an error or None."""
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    os.makedirs(work, exist_ok=True)
    digest = hashlib.sha256(version.encode())
    for name in ("package.json", "package-lock.json"):
        src = os.path.join(package_dir, name)
        with open(src, "rb") as f:
            digest.update(f.read())
        shutil.copyfile(src, os.path.join(work, name))
    stamp_path = os.path.join(work, ".installed")
    stamp = digest.hexdigest()
    installed = os.path.isfile(os.path.join(work, "node_modules", "meilisearch", "package.json"))
    if installed and os.path.isfile(stamp_path):
        with open(stamp_path) as f:
            if f.read() == stamp:
                print(f"setup: node_modules in {work} is up to date with package-lock.json")
                return None
    cache = os.path.join(os.path.dirname(work), "npm-cache")
    cmd = [npm, "ci", "--cache", cache, "--prefer-offline", "--no-audit", "--no-fund",
           "--ignore-scripts", "--loglevel=error"]
    print(f"setup: {' '.join(cmd)} (in {work})", flush=True)
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600, env=env)
    if r.returncode:
        return f"npm ci exited {r.returncode}:\n{r.stdout}{r.stderr}"
    with open(stamp_path, "w") as f:
        f.write(stamp)
    return None


def run_node(node, script, env):
    """Runs script in its own process group (so a hung browser dies with it). Returns its status."""
    proc = subprocess.Popen([node, script], env=env, start_new_session=True)
    try:
        return proc.wait(timeout=NODE_TIMEOUT)
    except subprocess.TimeoutExpired:
        print(f"FAIL {os.path.basename(script)} did not finish in {NODE_TIMEOUT} s")
        return 1
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("script")
    ap.add_argument("--package-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--serve", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    a = ap.parse_args()

    node, npm = shutil.which("node") or shutil.which("nodejs"), shutil.which("npm")
    if not node or not npm:
        print("FAIL node and npm are needed (Debian packages nodejs and npm)")
        return 1
    if not os.access(a.chromium, os.X_OK):
        print(f"FAIL {a.chromium} is missing: install Debian's package chromium (scripts/setup)")
        return 1
    work = os.path.abspath(a.work_dir)
    err = npm_ci(a.package_dir, work, node, npm)
    if err:
        print("FAIL " + err)
        return 1
    out_dir = os.path.abspath(a.out_dir)
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="atlas-ecosystem-")
    server = None
    try:
        key_file = os.path.join(tmp, "api-key")
        with open(key_file, "w") as f:
            f.write(API_KEY + "\n")
        server = Server(os.path.abspath(a.index), tmp, "--cors", "*", "--api-key-file", key_file,
                        serve=os.path.abspath(a.serve), start_timeout=START_TIMEOUT)
        print(f"setup: {server.url}/ serves {a.index}", flush=True)
        profile = os.path.join(tmp, "profile")
        os.mkdir(profile)
        env = dict(os.environ,
                   ATLAS_URL=server.url,
                   ATLAS_KEY=API_KEY,
                   ATLAS_CHROMIUM=a.chromium,
                   ATLAS_PROFILE=profile,
                   ATLAS_NODE_MODULES=os.path.join(work, "node_modules"),
                   ATLAS_PAGE_DIR=os.path.join(os.path.dirname(os.path.abspath(__file__)), "page"),
                   ATLAS_OUT_DIR=out_dir)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), a.script)
        status = run_node(node, script, env)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        print(f"FAIL {e}")
        status = 1
    finally:
        if server is not None:
            rc = server.stop()
            if rc not in (0, -signal.SIGTERM):
                print(f"FAIL atlas-serve exited {rc}:\n{server.stderr_text()[-3000:]}")
                status = 1
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
