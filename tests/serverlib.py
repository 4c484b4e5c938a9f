"""An atlas-serve process for tests: started on a free loopback port, asked over HTTP, stopped.

Shared by tests/server, tests/faults and tests/browser; the program is $ATLAS_SERVE (set by meson)
unless given.
"""
import http.client
import json
import os
import re
import select
import signal
import subprocess
import time

TIMEOUT = 10  # seconds for a start, a request, a stop


class Server:
    """An atlas-serve process on a free port of 127.0.0.1 (--port 0; the port is read from its
    stdout). log is its access log, stderr_path what it writes to stderr, pid its process id,
    url its base URL."""

    def __init__(self, index, workdir, *extra, threads=2, serve=None, start_timeout=TIMEOUT):
        serve = serve or os.environ['ATLAS_SERVE']
        stamp = time.monotonic_ns()
        self.log = os.path.join(workdir, 'access-%d.log' % stamp)
        self.stderr_path = os.path.join(workdir, 'serve-stderr-%d.txt' % stamp)
        self.stderr = open(self.stderr_path, 'w+')
        cmd = [serve, '--index', index, '--bind', '127.0.0.1', '--port', '0', '--threads',
               str(threads), '--log', self.log] + list(extra)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.stderr)
        ready, _, _ = select.select([self.proc.stdout], [], [], start_timeout)
        line = self.proc.stdout.readline().decode(errors='replace') if ready else ''
        m = re.search(r'http://127\.0\.0\.1:(\d+)/', line)
        if not m:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError('atlas-serve did not start: %r %s' % (line, self.stderr_text()))
        self.port = int(m.group(1))
        self.pid = self.proc.pid
        self.url = 'http://127.0.0.1:%d' % self.port

    def stderr_text(self):
        """Returns what the server wrote to stderr so far."""
        with open(self.stderr_path, errors='replace') as f:
            return f.read()

    def connect(self, timeout=TIMEOUT):
        """Returns a new (keep-alive) connection to the server."""
        return http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)

    def request(self, path, method='GET', headers=None, body=None, conn=None, timeout=TIMEOUT):
        """Sends one request, on conn when given. Returns (status, headers by lower-case name,
        body)."""
        own = conn is None
        conn = conn or self.connect(timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            res = conn.getresponse()
            data = res.read()
            return res.status, {k.lower(): v for k, v in res.getheaders()}, data
        finally:
            if own:
                conn.close()

    def get_json(self, path, **kw):
        """GETs path. Returns (status, headers, the body parsed as JSON)."""
        status, headers, body = self.request(path, **kw)
        return status, headers, json.loads(body)

    def health(self):
        """Returns the /healthz document."""
        return self.get_json('/healthz')[2]

    def stop(self):
        """Sends SIGTERM. Returns the exit status (None when it did not exit in time; then it is
        killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.proc.stdout.close()
            self.stderr.close()

    def kill(self):
        """SIGKILL (for cleanup after a failure); waits for the exit."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
