#!/usr/bin/python3
"""Stems every letters-only word of the index vocabulary with the analyzer (through the stem
helper) and with an independent Snowball implementation (Debian's python3-snowballstemmer), and
requires identical output. usage: compare_snowball.py STEM_BIN INDEX_DB"""
import sqlite3
import subprocess
import sys

import snowballstemmer


def main():
    stem_bin, index = sys.argv[1], sys.argv[2]
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    words = [w for (w,) in db.execute("SELECT term FROM vocab ORDER BY term") if w.isalpha() and w.isascii()]
    out = subprocess.run([stem_bin], input="\n".join(words) + "\n", capture_output=True, text=True, check=True)
    ours = out.stdout.split("\n")[: len(words)]
    ref = snowballstemmer.stemmer("english").stemWords(words)
    diffs = [(w, a, b) for w, a, b in zip(words, ours, ref) if a != b]
    for w, a, b in diffs[:20]:
        print(f"FAIL  {w}: analyzer {a!r}, snowballstemmer {b!r}")
    print(f"{len(words)} words compared, {len(diffs)} differ")
    return 1 if diffs or len(words) < 1000 else 0


if __name__ == "__main__":
    sys.exit(main())
