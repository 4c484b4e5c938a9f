#!/usr/bin/env bash
# test_sections_chunked.sh - test_sections --chunked on tests/corpora/mini with one explainer given
# a section of about 40 KB (stored in chunks): every window of its tokens read from its chunks is
# the whole text's.
# usage: test_sections_chunked.sh MINI_CORPUS ATLAS_INDEX TEST_SECTIONS
set -euo pipefail
mini=$1 index=$2 test=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$mini" "$dir/corpus"
page="$dir/corpus/explainers/lru-cache.md"
{
  printf '\n## Eviction under load, step by step\n\n'
  for i in $(seq 1 400); do
    printf 'Step %d: the cache at capacity takes key k%d, drops the tail node (HashMap entry and\n' "$i" "$i"
    printf 'list node alike) and links the new node at the head; hit_rate stays near 0.%d.\n\n' "$((i % 10))"
  done
  printf '## After the burst\n\nThe list is short again and every hit is O(1).\n'
} >> "$page"
"$index" --corpus "$dir/corpus" --out "$dir/atlas.db" --quiet
"$test" "$dir/atlas.db" --chunked
