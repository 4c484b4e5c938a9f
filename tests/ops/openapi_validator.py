#!/usr/bin/env python3
"""Validates docs/openapi.yaml with a standard validator, @apidevtools/swagger-parser (npm).

    openapi_validator.py --package-dir tests/ops --work-dir BUILD/tests/ops/npm --spec docs/openapi.yaml

Setup: package.json and package-lock.json of --package-dir are copied to --work-dir and installed
there with `npm ci` (the npm cache kept beside it, under the build directory); the install is
skipped when the lock file and the node version are those of the last install. Then
validate_openapi.js checks the spec, and a copy of the spec with a deliberate error must be
rejected, so that a validator that accepts anything cannot pass. A missing node or npm is a
failure, not a skip.
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--package-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--spec", required=True)
    a = ap.parse_args()

    node, npm = shutil.which("node") or shutil.which("nodejs"), shutil.which("npm")
    if not node or not npm:
        print("FAIL node and npm are needed (Debian packages nodejs and npm)")
        return 1
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()

    work = os.path.abspath(a.work_dir)
    os.makedirs(work, exist_ok=True)
    digest = hashlib.sha256(version.encode())
    for name in ("package.json", "package-lock.json"):
        src = os.path.join(a.package_dir, name)
        with open(src, "rb") as f:
            digest.update(f.read())
        shutil.copyfile(src, os.path.join(work, name))
    stamp_path = os.path.join(work, ".installed")
    stamp = digest.hexdigest()
    installed = os.path.isdir(os.path.join(work, "node_modules", "@apidevtools", "swagger-parser"))
    if not installed or not os.path.isfile(stamp_path) or open(stamp_path).read() != stamp:
        cache = os.path.join(os.path.dirname(work), "npm-cache")
        cmd = [npm, "ci", "--cache", cache, "--prefer-offline", "--no-audit", "--no-fund",
               "--ignore-scripts", "--loglevel=error"]
        print(f"setup: {' '.join(cmd)} (in {work})")
        r = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
        if r.returncode:
            print(f"FAIL npm ci exited {r.returncode}:\n{r.stdout}{r.stderr}")
            return 1
        with open(stamp_path, "w") as f:
            f.write(stamp)
    else:
        print(f"setup: node_modules in {work} is up to date with package-lock.json")

    env = dict(os.environ, NODE_PATH=os.path.join(work, "node_modules"))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_openapi.js")

    r = subprocess.run([node, script, a.spec], env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write(r.stdout + r.stderr)
    if r.returncode:
        return 1

    # The validator must reject a broken spec: a path that does not start with '/'.
    with open(a.spec, encoding="utf-8") as f:
        text = f.read()
    broken = text.replace("\n  /api/search:\n", "\n  api/search:\n", 1)
    if broken == text:
        print("FAIL cannot make the broken copy of the spec (no '/api/search:' path)")
        return 1
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", encoding="utf-8", delete=False) as f:
        f.write(broken)
    try:
        r = subprocess.run([node, script, f.name], env=env, capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(f.name)
    if r.returncode == 0:
        print("FAIL the validator accepted a spec with a path not starting with '/'")
        return 1
    print("ok   the validator rejects a broken copy of the spec")
    return 0


if __name__ == "__main__":
    sys.exit(main())
