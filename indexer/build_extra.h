/* build_extra.h - the caller's extra tables (index_build_set_extra: the page sources), written on a
 * thread of their own into a file beside the index while the build goes on, then copied in. */
#ifndef ATLAS_BUILD_EXTRA_H
#define ATLAS_BUILD_EXTRA_H

#include "build.h"

typedef struct build_extra build_extra;

/* Starts fn(db, c, ctx, err) on a thread of its own, db a new file at path holding the tables of
 * atlas_schema_sources_sql, in one transaction committed when fn returns 0. c must stay unchanged
 * in what fn reads until build_extra_finish. Returns 0 with *out set (free with build_extra_free),
 * or ATLAS_ENOMEM / ATLAS_EIO with err set and *out NULL. */
int build_extra_start(build_extra **out, build_extra_fn fn, void *ctx, const corpus *c, const char *path,
		      atlas_error *err);

/* Waits for the thread. Returns 0 with *path set to the file its rows are in (owned by x), or the
 * thread's error code with its message copied into err. */
int build_extra_finish(build_extra *x, const char **path, atlas_error *err);

/* Waits for the thread if it still runs, removes its file and frees x. Accepts NULL. */
void build_extra_free(build_extra *x);

#endif
