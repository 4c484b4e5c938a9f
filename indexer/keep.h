/* keep.h - page sources in the index and atlas-index --keep-going: a page file that has become
 * invalid is built at its last good version from the index being replaced, or left out. */
#ifndef ATLAS_KEEP_H
#define ATLAS_KEEP_H

#include <stdbool.h>

#include "corpus.h"

/* A page file that was invalid in the source. */
typedef struct kept_file {
	char *rel;                   /* its name under the source directory */
	char *error;                 /* its first error, "file:line: message" */
	bool kept;                   /* built at its previous version; false: left out */
	bool restored;               /* built as it is after all (its errors were another file's) */
} kept_file;

typedef struct keep_state {
	char *src;                   /* the source directory as given */
	char *shadow;                /* the directory the build reads instead, NULL when none */
	kept_file *files;
	int n, cap;
} keep_state;

/* What a load of a source directory is: the corpus loader or the site loader, with its
 * configuration (NULL for the default). */
typedef struct keep_source {
	const char *dir;
	bool site;
	const char *config;
	bool strict;
} keep_source;

/* Loads the source into *c (problems into d) as corpus_load or site_load would; with keep_going,
 * when the only errors are in page files, loads again with each such file replaced by its
 * version in the index at out_path (or left out), until no errors remain (at most a few
 * rounds). k records the files kept or left out, and after it the index built sets them apart
 * (keep_install). Returns 0 when *c is valid (d->errors may count the first load's errors,
 * which then were all set apart); otherwise, with d holding the errors, the load's own code
 * (corpus_load's or site_load's) when it could not read the source, ATLAS_EINVAL when the source
 * is not valid (and could not be made valid by setting page files apart), ATLAS_EIO when the
 * shadow directory cannot be made, or ATLAS_ENOMEM when out of memory. */
int keep_load(corpus *c, const keep_source *src, bool keep_going, const char *out_path,
	      keep_state *k, diag_list *d);

/* Makes index_build write the page sources of the corpus and the files of k (table kept_pages,
 * meta kept_pages) into the new index. */
void keep_install(keep_state *k);

/* Removes the shadow directory and frees k. */
void keep_free(keep_state *k);

#endif
