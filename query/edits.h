/* edits.h - the edit distance of spelling correction (plan.c) and fuzzy typeahead (suggest.c). */
#ifndef ATLAS_EDITS_H
#define ATLAS_EDITS_H

#include <stdbool.h>

/* The edits (insertions, deletions, substitutions, swaps of neighbours: Damerau-Levenshtein,
 * optimal string alignment) between a[0..na) and b[0..nb), or with prefix set between a and the
 * closest start of b; max + 1 when more than max, or when a or b has 63 bytes or more. */
int atlas_edits(const char *a, int na, const char *b, int nb, bool prefix, int max);

#endif
