/* build_extra.c - the caller's extra tables written on a thread beside the build (build_extra.h). */
#include "build_extra.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema.h"

struct build_extra {
	build_extra_fn fn;
	void *ctx;
	const corpus *c;
	char *path;
	pthread_t thread;
	bool joined;
	int rc;
	atlas_error err;
};

/* Runs one statement list on db; returns 0 or ATLAS_ESQL with x->err naming the file. */
static int extra_exec(build_extra *x, sqlite3 *db, const char *sql)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	return atlas_sql_error(&x->err, db, x->path, "page sources' file", NULL);
}

/* The thread: creates the file, runs the caller's writer in one transaction, commits. Its result
 * is in x->rc and x->err. */
static void *run_extra(void *arg)
{
	build_extra *x = arg;
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(x->path, &db, flags, NULL) != SQLITE_OK) {
		x->rc = atlas_error_set(&x->err, ATLAS_EIO, "%s: cannot create: %s", x->path,
					db ? sqlite3_errmsg(db) : "out of memory");
	} else {
		/* appends only, the file thrown away on failure: a small cache and no journal */
		x->rc = extra_exec(x, db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
					  " PRAGMA page_size=4096; PRAGMA cache_size=-1024; BEGIN");
		if (!x->rc)
			x->rc = extra_exec(x, db, atlas_schema_sources_sql);
		if (!x->rc)
			x->rc = x->fn(db, x->c, x->ctx, &x->err);
		if (!x->rc)
			x->rc = extra_exec(x, db, "COMMIT");
	}
	if (db && sqlite3_close(db) != SQLITE_OK && !x->rc)
		x->rc = atlas_error_set(&x->err, ATLAS_EIO, "%s: cannot close", x->path);
	return NULL;
}

int build_extra_start(build_extra **out, build_extra_fn fn, void *ctx, const corpus *c, const char *path,
		      atlas_error *err)
{
	*out = NULL;
	build_extra *x = calloc(1, sizeof(*x));
	if (!x || !(x->path = strdup(path))) {
		free(x);
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	}
	x->fn = fn;
	x->ctx = ctx;
	x->c = c;
	unlink(x->path);
	if (pthread_create(&x->thread, NULL, run_extra, x)) {
		free(x->path);
		free(x);
		return atlas_error_set(err, ATLAS_ENOMEM, "cannot start the page sources' thread");
	}
	*out = x;
	return 0;
}

int build_extra_finish(build_extra *x, const char **path, atlas_error *err)
{
	*path = NULL;
	if (!x->joined) {
		pthread_join(x->thread, NULL);
		x->joined = true;
	}
	if (x->rc)
		return atlas_error_set(err, x->rc, "%s", x->err.msg);
	*path = x->path;
	return 0;
}

void build_extra_free(build_extra *x)
{
	if (!x)
		return;
	if (!x->joined)
		pthread_join(x->thread, NULL);
	unlink(x->path);
	free(x->path);
	free(x);
}
