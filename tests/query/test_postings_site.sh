#!/usr/bin/env bash
# test_postings_site.sh - test_postings on a built site no one here wrote (the PostgreSQL manual):
# its index's postings are held (every position of a term written once), and held, table and
# FTS5 engines answer QUERIES alike.
# usage: test_postings_site.sh ATLAS_INDEX TEST_POSTINGS SITE QUERIES
set -euo pipefail
index=$1 test=$2 site=$3 queries=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$index" --site "$site" --out "$dir/atlas.db" --quiet 2>/dev/null
"$test" "$dir/atlas.db" "$queries"
