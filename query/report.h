/* report.h - atlas-query --analytics: what readers searched for, read from atlas-serve's
 * analytics file, and its retention. */
#ifndef ATLAS_REPORT_H
#define ATLAS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "engine.h"

#define REPORT_ROWS 20 /* rows per list of the report */

/* Prints to out the report of the analytics file path over the last since_days days: totals, top
 * queries, zero-result queries (with the pages e, when not NULL, suggests for them), queries with
 * results but no clicks, and clicks by rank; as JSON when json. Returns 0, or 1 with a message
 * on stderr when the file cannot be read. */
int report_run(FILE *out, const char *path, int since_days, bool json, atlas_engine *e);

/* Deletes the rows of the analytics file path older than its retention (meta retention_days,
 * set by atlas-serve --analytics-days; days > 0 overrides it) and prints how many went. Returns
 * 0, or 1 with a message on stderr. */
int report_prune(const char *path, int days);

#endif
