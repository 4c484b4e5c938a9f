#!/usr/bin/env python3
"""Checks that each program's --help and its man page list the same options.

    check_options.py --man-dir DIR PROGRAM...

For each PROGRAM (a path to an executable), the man page DIR/<name>.<section> (any section) is
read. The `--option` tokens of `PROGRAM --help` must be exactly those that head the entries
(.TP tags) of the page's OPTIONS section; every `--option` mentioned anywhere in the OPTIONS or
SYNOPSIS sections must be one of them too. Options of other programs may appear elsewhere in the
page (EXAMPLES, FILES), as prose.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def roff_text(line):
    """A roff source line as plain text: fonts and escapes dropped, `\\-` made `-`."""
    line = line.replace("\\-", "-").replace("\\(en", "-").replace("\\(em", "-")
    line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)  # font changes
    line = re.sub(r"\\[&%|^]", "", line)
    line = re.sub(r"\\\(..", "", line)
    return line


def sections(path):
    """Maps each .SH name of the page to its lines (plain text, macros kept)."""
    out, name = {}, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith('.\\"'):
                continue
            m = re.match(r"\.SH\s+\"?([^\"]*)\"?\s*$", line)
            if m:
                name = m.group(1).strip().upper()
                out[name] = []
            elif name:
                out[name].append(line)
    return out


def option_tags(lines):
    """The options that head the .TP entries of lines (the line after each .TP)."""
    tags = set()
    for i, line in enumerate(lines):
        if line.strip() == ".TP" and i + 1 < len(lines):
            tags.update(OPTION.findall(roff_text(lines[i + 1])))
    return tags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--man-dir", required=True, help="where the (configured) man pages are")
    ap.add_argument("programs", nargs="+")
    a = ap.parse_args()
    failures = 0
    for prog in a.programs:
        name = os.path.basename(prog)
        pages = sorted(glob.glob(os.path.join(a.man_dir, f"{name}.[1-9]")))
        if len(pages) != 1:
            print(f"FAIL {name}: expected one man page {name}.N in {a.man_dir}, found {pages}")
            failures += 1
            continue
        r = subprocess.run([prog, "--help"], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            print(f"FAIL {name} --help: exit {r.returncode}: {r.stderr.strip()}")
            failures += 1
            continue
        helped = set(OPTION.findall(r.stdout))
        secs = sections(pages[0])
        problems = []
        for required in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES",
                         "EXAMPLES", "SEE ALSO"):
            if required not in secs:
                problems.append(f"no {required} section")
        tagged = option_tags(secs.get("OPTIONS", []))
        mentioned = set(OPTION.findall(roff_text("\n".join(secs.get("OPTIONS", [])))))
        synopsis = set(OPTION.findall(roff_text("\n".join(secs.get("SYNOPSIS", [])))))
        if tagged - helped:
            problems.append(f"OPTIONS documents options --help does not list: {sorted(tagged - helped)}")
        if helped - tagged:
            problems.append(f"--help lists options OPTIONS does not document: {sorted(helped - tagged)}")
        if mentioned - helped:
            problems.append(f"OPTIONS mentions unknown options: {sorted(mentioned - helped)}")
        if synopsis - helped:
            problems.append(f"SYNOPSIS mentions unknown options: {sorted(synopsis - helped)}")
        if helped - synopsis:
            problems.append(f"SYNOPSIS leaves out options: {sorted(helped - synopsis)}")
        if problems:
            failures += 1
            for p in problems:
                print(f"FAIL {name} ({os.path.basename(pages[0])}): {p}")
        else:
            print(f"ok   {name}: --help and {os.path.basename(pages[0])} agree on {len(helped)} options: "
                  + " ".join(sorted(helped)))
    if failures:
        print(f"{failures} program(s) with disagreements")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
