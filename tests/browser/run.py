#!/usr/bin/env python3
"""Runs the search page and the embeddable widget in a real browser: widget.mjs drives Debian's
headless Chromium with playwright-core against an atlas-serve of the real index and a fixture site
beside it (another origin) that embeds the widget.

    run.py --package-dir tests/browser --work-dir BUILD/tests/browser/npm \
           --serve BUILD/server/atlas-serve --index BUILD/tests/atlas.db \
           --out-dir BUILD/tests/browser [--chromium /usr/bin/chromium]

Setup: package.json and package-lock.json of --package-dir are copied to --work-dir and installed
there with `npm ci` (the npm cache kept beside it, under the build directory); the install is
skipped when the lock file and the node version are those of the last install. Playwright's own
browser download is never used: the browser is --chromium (Debian's package `chromium`).
Then the fixture site (site/: static pages with both components, the atlas-serve address filled
in, served with a strict CSP) is served on a free loopback port, atlas-serve is started on
another (127.0.0.1, --port 0, the port read from its first line on stdout; --cors for the site's
origin), node runs widget.mjs, and both servers are always stopped. The screenshots go to
--out-dir. A missing node, npm or Chromium is a failure, not a skip.
"""
import argparse
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from serverlib import Server  # noqa: E402

START_TIMEOUT = 15
NODE_TIMEOUT = 270


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
    installed = all(os.path.isfile(os.path.join(work, "node_modules", name, "package.json"))
                    for name in ("playwright-core", "axe-core"))
    if installed and os.path.isfile(stamp_path):
        with open(stamp_path) as f:
            if f.read() == stamp:
                print(f"setup: node_modules in {work} is up to date with package-lock.json")
                return None
    cache = os.path.join(os.path.dirname(work), "npm-cache")
    cmd = [npm, "ci", "--cache", cache, "--prefer-offline", "--no-audit", "--no-fund",
           "--ignore-scripts", "--loglevel=error"]
    print(f"setup: {' '.join(cmd)} (in {work})", flush=True)
    # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: belt and braces, scripts are not run anyway.
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600, env=env)
    if r.returncode:
        return f"npm ci exited {r.returncode}:\n{r.stdout}{r.stderr}"
    with open(stamp_path, "w") as f:
        f.write(stamp)
    return None


SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")


def site_server(atlas):
    """Starts the fixture site on a free loopback port: "/" is site/index.html, any other path
    site/article.html (a page of the site, its path its own), with {{ATLAS}} replaced by
    atlas["url"] (set once atlas-serve listens) and a CSP that allows scripts, styles and
    requests from that origin only. Returns the server, serving in a daemon thread."""
    sources = {}
    for name in ("index.html", "article.html"):
        with open(os.path.join(SITE_DIR, name), encoding="utf-8") as f:
            sources[name] = f.read()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the name http.server calls
            path = self.path.split("?")[0]
            if path == "/favicon.ico":
                self.send_response(404)
                self.end_headers()
                return
            url = atlas["url"]
            body = sources["index.html" if path == "/" else "article.html"].replace("{{ATLAS}}", url).encode()
            csp = (f"default-src 'none'; script-src {url}; style-src {url}; connect-src {url}; "
                   "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", csp)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


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
        print(f"FAIL {a.chromium} is missing: install Debian's package chromium (scripts/setup --test)")
        return 1
    work = os.path.abspath(a.work_dir)
    err = npm_ci(a.package_dir, work, node, npm)
    if err:
        print("FAIL " + err)
        return 1

    out_dir = os.path.abspath(a.out_dir)
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="atlas-browser-")
    server = site = None
    try:
        # the site's origin is atlas-serve's --cors; atlas-serve's address goes into its pages
        atlas = {"url": ""}
        site = site_server(atlas)
        site_origin = f"http://127.0.0.1:{site.server_address[1]}"
        server = Server(os.path.abspath(a.index), tmp, "--cors", site_origin,
                        serve=os.path.abspath(a.serve), start_timeout=START_TIMEOUT)
        atlas["url"] = server.url
        print(f"setup: {server.url}/ serves {a.index}; the fixture site is {site_origin}/", flush=True)
        env = dict(os.environ,
                   ATLAS_URL=server.url,
                   ATLAS_SITE_URL=site_origin,
                   ATLAS_SERVE=os.path.abspath(a.serve),
                   ATLAS_INDEX=os.path.abspath(a.index),
                   ATLAS_CHROMIUM=a.chromium,
                   ATLAS_TMP=tmp,
                   ATLAS_NODE_MODULES=os.path.join(work, "node_modules"),
                   ATLAS_OUT_DIR=out_dir)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "widget.mjs")
        status = run_node(node, script, env)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        print(f"FAIL {e}")
        status = 1
    finally:
        if site is not None:
            site.shutdown()
            site.server_close()
        if server is not None:
            rc = server.stop()
            if rc not in (0, -signal.SIGTERM):
                print(f"FAIL atlas-serve exited {rc}:\n{server.stderr_text()[-3000:]}")
                status = 1
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
