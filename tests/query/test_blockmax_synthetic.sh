#!/usr/bin/env bash
# test_blockmax_synthetic.sh - test_blockmax on a synthetic corpus of 1,500 explainers
# (bench/gen-corpus): random queries of its terms, pruned against exhaustive, lists of many blocks;
# then test_postings on the same index with QUERIES: its words on more than 1,500 pages are
# searched title and fields first, and the hits' matches read from the held postings
# (postings_record) must be FTS5's.
# usage: test_blockmax_synthetic.sh GEN_CORPUS ATLAS_INDEX TEST_BLOCKMAX TEST_POSTINGS QUERIES
set -euo pipefail
gen=$1 index=$2 test=$3 postings=$4 queries=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$gen" --pages 1500 --seed 31 --out "$dir/corpus" --quiet
"$index" --corpus "$dir/corpus" --out "$dir/atlas.db" --quiet
"$test" "$dir/atlas.db" --random 2000
"$postings" "$dir/atlas.db" "$queries"
