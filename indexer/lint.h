/* lint.h - atlas-index --check's authoring rules over a loaded corpus: unknown front-matter
 * fields, a '#' heading or raw HTML in a body, titles against the sitemap, guide steps, topics,
 * synonyms, text shared between pages, and the corpus's own numeric rules (DIR/lint.json). */
#ifndef ATLAS_LINT_H
#define ATLAS_LINT_H

#include <stdbool.h>

#include "corpus.h"

/* Checks the loaded corpus c (read from dir, its section bodies still held) and adds each problem
 * to d as an error, file:line: message. dir/lint.json, when present, states the corpus's numeric
 * rules (see corpus/README.md, "Checking your work"); an unreadable one is itself an error.
 * Returns the problems added. */
int lint_corpus(const corpus *c, const char *dir, diag_list *d);

/* Returns the edit distance (insertions, deletions, substitutions) between a and b, capped at
 * cap + 1. */
int lint_distance(const char *a, const char *b, int cap);

#endif
