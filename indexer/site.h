/* site.h - a folder of built HTML pages (any static site generator's output) read into the same
 * corpus structures the Markdown reader fills, so that the index is built the same way. */
#ifndef ATLAS_SITE_H
#define ATLAS_SITE_H

#include <stdbool.h>

#include "corpus.h"

/* Reads the built site under dir, with the configuration in config_path (NULL: dir/atlas.json
 * when it exists), into *c, every problem going to d; strict makes every warning an error.
 * Returns 0 when it could read the site (check d->errors for validity); otherwise, with d saying
 * why, ATLAS_ENOTFOUND when dir is not a directory, or config_load's ATLAS_EIO (the configuration
 * cannot be read) or ATLAS_EINVAL (it is not valid). c is to be freed with corpus_free either
 * way. */
int site_load(corpus *c, const char *dir, const char *config_path, bool strict, diag_list *d);

/* Whether the relative path matches the glob: '*' and '?' within a path segment, '**' across
 * segments (as in "_static" followed by "/" and "**"), [...] classes as fnmatch reads them; a glob
 * without '/' also matches the last segment alone, at any depth. */
bool site_glob_match(const char *glob, const char *path);

#endif
