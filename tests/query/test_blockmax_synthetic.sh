#!/usr/bin/env bash
# test_blockmax_synthetic.sh - test_blockmax on a synthetic corpus of 1,500 explainers
# (bench/gen-corpus): random queries of its terms, pruned against exhaustive, lists of many blocks.
# usage: test_blockmax_synthetic.sh GEN_CORPUS ATLAS_INDEX TEST_BLOCKMAX
set -euo pipefail
gen=$1 index=$2 test=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$gen" --pages 1500 --seed 31 --out "$dir/corpus" --quiet
"$index" --corpus "$dir/corpus" --out "$dir/atlas.db" --quiet
"$test" "$dir/atlas.db" --random 2000
