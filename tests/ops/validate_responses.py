#!/usr/bin/env python3
"""Checks docs/openapi.yaml against what the programs really answer, field by field.

    validate_responses.py --spec docs/openapi.yaml --query ATLAS_QUERY --index ATLAS_DB
                          [--api-doc docs/API.md] [--serve ATLAS_SERVE]

1. Real bodies: `atlas-query --json` prints exactly the server's body, so its output for a spread
   of search, suggest and next requests on the real index is validated against the
   components/schemas (SearchResponse, SuggestResponse, NextResponse). The schemas forbid
   additional properties, so a field the programs print but the spec lacks fails; and every field
   the spec describes must show up in at least one real body, so a field the spec invents fails too.
2. With --serve, the same is done over HTTP against a running atlas-serve (port 0): the bodies of
   /api/*, /healthz (Health) and of one request per error code (Error), each status checked
   against the statuses the spec declares for the operation.
3. The examples in the spec, and the JSON samples of API.md that carry a `<!-- schema: NAME -->`
   comment, are validated against their schemas, so the documentation cannot drift from the spec.

OpenAPI 3.0 schema objects are JSON Schema draft 4 plus `nullable`, which is turned into a
`null` type before validation; `$ref`s resolve inside the spec. Needs python3-jsonschema and
python3-yaml.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

try:
    import jsonschema
    import yaml
except ImportError as exc:  # a missing dependency is a failure, not a skip
    sys.exit(f"validate_responses: {exc}: install python3-jsonschema and python3-yaml")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checklib import fail, failures  # noqa: E402


def to_json_schema(node):
    """Returns a copy of an OpenAPI 3.0 document with `nullable: true` made JSON Schema."""
    if isinstance(node, list):
        return [to_json_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {k: to_json_schema(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        if "type" in out:
            out["type"] = [out["type"], "null"] if isinstance(out["type"], str) else out["type"] + ["null"]
        if "enum" in out:
            out["enum"] = out["enum"] + [None]
    return out


class Spec:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.raw = yaml.safe_load(f)
        self.doc = to_json_schema(self.raw)
        self.schemas = self.doc["components"]["schemas"]

    def validator(self, schema):
        # The schema is wrapped in a root that carries the spec's components, so that the spec's
        # "#/components/..." references resolve (draft 4 ignores the unknown "components" keyword).
        return jsonschema.Draft4Validator({"allOf": [schema], "components": self.doc["components"]})

    def validate(self, what, schema, instance):
        """Validates instance against schema (a schema object or a components/schemas name)."""
        if isinstance(schema, str):
            schema = {"$ref": f"#/components/schemas/{schema}"}
        errors = sorted(self.validator(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            fail(f"{what}: at {where}: {e.message}")
        return not errors

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            assert ref.startswith("#/"), ref
            node = self.doc
            for part in ref[2:].split("/"):
                node = node[part]
        return node

    def field_paths(self, name):
        """Every field path the schema `name` describes, as 'a.b[].c' strings."""
        paths = set()

        def walk(node, prefix, depth):
            node = self.resolve(node)
            if depth > 20 or not isinstance(node, dict):
                return
            for branch in node.get("oneOf", []) + node.get("anyOf", []) + node.get("allOf", []):
                walk(branch, prefix, depth + 1)
            for key, sub in node.get("properties", {}).items():
                p = f"{prefix}.{key}" if prefix else key
                paths.add(p)
                walk(sub, p, depth + 1)
            if "items" in node:
                walk(node["items"], prefix + "[]", depth + 1)

        walk({"$ref": f"#/components/schemas/{name}"}, "", 0)
        return paths


def instance_paths(value, prefix="", out=None):
    """Every field path present in a JSON value, in the notation of Spec.field_paths."""
    out = set() if out is None else out
    if isinstance(value, dict):
        for key, sub in value.items():
            p = f"{prefix}.{key}" if prefix else key
            out.add(p)
            instance_paths(sub, p, out)
    elif isinstance(value, list):
        for sub in value:
            instance_paths(sub, prefix + "[]", out)
    return out


def run_cli(query, index, args):
    cmd = [query, "--index", index, "--json"] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"{' '.join(cmd[3:])}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError as exc:
        fail(f"{' '.join(cmd[3:])}: not JSON ({exc}): {r.stdout[:200]!r}")
        return None


# (schema, CLI arguments): a spread that exercises every field: corrections, filters, paging,
# empty answers, --explain (the optional explain fields), both kinds of suggestion, guides, seen.
CLI_CASES = [
    ("SearchResponse", ["consistent", "hashing"]),
    ("SearchResponse", ["kuberntes"]),
    ("SearchResponse", ["--limit", "50", "cache"]),
    ("SearchResponse", ["--offset", "5", "--limit", "3", "gil"]),
    ("SearchResponse", ["--type", "guide", "system", "design"]),
    ("SearchResponse", ["--topic", "systems/caching", "eviction"]),
    ("SearchResponse", ["--explain", "--limit", "2", "shard_map"]),
    ("SearchResponse", ["--", "-redis", "cache"]),
    ("SearchResponse", ["zzqxjvwk"]),
    ("SearchResponse", ["how does consistnt hashing work"]),
    ("SuggestResponse", ["--suggest", "consis"]),
    ("SuggestResponse", ["--suggest", "shard_m"]),
    ("SuggestResponse", ["--suggest", "zzqxjvwk"]),
    ("SuggestResponse", ["--suggest", ""]),
    ("NextResponse", ["--next", "/consistent-hashing"]),
    ("NextResponse", ["--next", "/consistent-hashing", "--guide", "general-system-design",
                      "--seen", "/consistency-quorums-cap,/one-server-to-millions"]),
    ("NextResponse", ["--next", "/", "--limit", "50"]),
    ("NextResponse", ["--next", "/t/systems/caching"]),
    ("NextResponse", ["--next", "/general-system-design"]),
]


def check_cli(spec, query, index):
    seen = {}
    for schema, args in CLI_CASES:
        body = run_cli(query, index, args)
        if body is None:
            continue
        spec.validate(f"atlas-query --json {' '.join(args)} vs {schema}", schema, body)
        seen.setdefault(schema, set()).update(instance_paths(body))
        print(f"ok   atlas-query --json {' '.join(args)}")
    return seen


# Fields only the server's answers carry (with --analytics), checked by check_server.
SERVER_ONLY = {"SearchResponse": {"query_id"}}


def check_coverage(spec, seen):
    """Every field a schema describes must appear in some real body."""
    for schema, paths in seen.items():
        missing = sorted(spec.field_paths(schema) - paths - SERVER_ONLY.get(schema, set()))
        if missing:
            fail(f"{schema}: fields described by the spec but in no real body: {', '.join(missing)}")
        else:
            print(f"ok   {schema}: every field of the schema seen in real bodies")


def check_examples(spec):
    """The examples the spec gives for its responses validate against their own schemas."""
    n = 0

    def media_examples(where, media):
        nonlocal n
        schema = media.get("schema")
        if schema is None:
            return
        if "$ref" not in schema and schema.get("type") == "string":
            return
        if "example" in media:
            n += 1
            spec.validate(f"{where} example", schema, media["example"])
        for name, ex in media.get("examples", {}).items():
            n += 1
            spec.validate(f"{where} example {name}", schema, spec.resolve(ex)["value"])

    for path, item in spec.doc["paths"].items():
        for method, op in item.items():
            for status, resp in op.get("responses", {}).items():
                resp = spec.resolve(resp)
                for mtype, media in resp.get("content", {}).items():
                    media_examples(f"{method.upper()} {path} {status} {mtype}", media)
    for name, resp in spec.doc["components"].get("responses", {}).items():
        for mtype, media in resp.get("content", {}).items():
            media_examples(f"components/responses/{name} {mtype}", media)
    if n == 0:
        fail("the spec gives no examples to check")
    print(f"ok   {n} examples of the spec checked")


def check_api_doc(spec, path):
    """JSON blocks of API.md preceded by <!-- schema: NAME --> validate against NAME."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    blocks = re.findall(r"<!--\s*schema:\s*(\w+)\s*-->\s*\n```json\n(.*?)\n```", text, re.S)
    if not blocks:
        fail(f"{path}: no JSON sample marked <!-- schema: NAME -->")
    for i, (name, body) in enumerate(blocks, 1):
        if name not in spec.schemas:
            fail(f"{path}: sample {i}: no schema {name} in the spec")
            continue
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            fail(f"{path}: sample {i} ({name}) is not JSON: {exc}")
            continue
        spec.validate(f"{path} sample {i} ({name})", name, value)
    print(f"ok   {len(blocks)} samples of {path} checked")


def check_server(spec, serve, index):
    """Starts atlas-serve on a free port and validates its bodies and statuses."""
    tmp = tempfile.TemporaryDirectory()
    # with analytics on, so that search answers carry their query_id
    proc = subprocess.Popen([serve, "--index", index, "--port", "0", "--threads", "2",
                             "--analytics", os.path.join(tmp.name, "analytics.db")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://(\S+?):(\d+)/", line)
        if not m:
            fail(f"atlas-serve did not say where it listens: {line!r}")
            return
        base = f"http://127.0.0.1:{m.group(2)}"
        seen = {}

        def get(target, schema, method="GET"):
            req = urllib.request.Request(base + target, method=method)
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    status, body = r.status, r.read()
            except urllib.error.HTTPError as e:
                status, body = e.code, e.read()
            route = urllib.parse.urlsplit(target).path
            op = spec.doc["paths"].get(route, {}).get("get", {})
            declared = op.get("responses", {})
            if str(status) not in declared and "default" not in declared and route in spec.doc["paths"]:
                fail(f"{method} {target}: status {status} not declared by the spec")
            try:
                value = json.loads(body)
            except json.JSONDecodeError:
                fail(f"{method} {target}: body is not JSON: {body[:200]!r}")
                return
            if spec.validate(f"atlas-serve {method} {target} ({status}) vs {schema}", schema, value):
                print(f"ok   atlas-serve {method} {target} -> {status}")
            seen.setdefault(schema, set()).update(instance_paths(value))

        get("/healthz", "Health")
        get("/api/search?q=consistent+hashing", "SearchResponse")
        get("/api/search?q=kuberntes&limit=2", "SearchResponse")
        get("/api/suggest?q=consis", "SuggestResponse")
        get("/api/next?path=/consistent-hashing&guide=general-system-design&seen=/consistency-quorums-cap",
            "NextResponse")
        get("/api/search?q=" + "a" * 300, "Error")
        get("/api/search?q=x&limit=99", "Error")
        get("/api/next?path=/no-such-page", "Error")
        get("/no-such-endpoint", "Error")
        get("/api/search?q=x", "Error", method="POST")
        for schema, fields in SERVER_ONLY.items():
            if not fields <= seen.get(schema, set()):
                fail(f"{schema}: {sorted(fields)} in no answer of atlas-serve --analytics")
        for schema in ("Health", "Error"):
            missing = sorted(spec.field_paths(schema) - seen.get(schema, set()))
            if missing:
                fail(f"{schema}: fields described by the spec but in no real body: {', '.join(missing)}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        tmp.cleanup()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", required=True)
    ap.add_argument("--query", required=True, help="atlas-query")
    ap.add_argument("--index", required=True, help="an index of the real corpus")
    ap.add_argument("--api-doc", help="docs/API.md, whose marked JSON samples are checked")
    ap.add_argument("--serve", help="atlas-serve, to check its bodies too")
    a = ap.parse_args()

    spec = Spec(a.spec)
    if spec.raw.get("openapi") != "3.0.3":
        fail(f"{a.spec}: openapi is {spec.raw.get('openapi')!r}, expected '3.0.3'")
    for name in ("SearchResponse", "SuggestResponse", "NextResponse", "Health", "Error"):
        if name not in spec.schemas:
            fail(f"{a.spec}: components/schemas has no {name}")
    for name, schema in spec.schemas.items():  # each schema is itself valid JSON Schema
        try:
            jsonschema.Draft4Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            fail(f"components/schemas/{name} is not a valid schema: {exc.message}")
    if failures:
        return 1
    check_coverage(spec, check_cli(spec, a.query, a.index))
    check_examples(spec)
    if a.api_doc:
        check_api_doc(spec, a.api_doc)
    if a.serve:
        check_server(spec, a.serve, a.index)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all responses match docs/openapi.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
