/* edits.c - the edit distance of spelling correction and fuzzy typeahead. */
#include <stdlib.h>

#include "edits.h"

int atlas_edits(const char *a, int na, const char *b, int nb, bool prefix, int max)
{
	if (na >= 63 || nb >= 63 || (!prefix && abs(na - nb) > max))
		return max + 1;
	int rows[3][64];
	int *pp = rows[0], *prev = rows[1], *cur = rows[2];
	for (int j = 0; j <= nb; j++)
		prev[j] = j;
	for (int i = 1; i <= na; i++) {
		cur[0] = i;
		int low = cur[0];
		for (int j = 1; j <= nb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int d = prev[j - 1] + cost;
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			cur[j] = d;
			if (d < low)
				low = d;
		}
		if (low > max)
			return max + 1;
		int *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	int best = prev[nb];
	if (prefix)
		for (int j = 0; j < nb; j++)
			if (prev[j] < best)
				best = prev[j];
	return best > max ? max + 1 : best;
}
