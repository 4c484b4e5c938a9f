/* fuzz_engine.c - the engine over the fuzzing index, shared by the search-side targets. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "fuzz.h"

#ifndef ATLAS_FUZZ_DEFAULT_INDEX
#define ATLAS_FUZZ_DEFAULT_INDEX ""
#endif

static atlas_engine *engine, *engine_fts5;

static void close_engine(void)
{
	atlas_engine_free(engine);
	atlas_engine_free(engine_fts5);
	engine = engine_fts5 = NULL;
}

/* The fuzzing index's path. */
static const char *index_path(void)
{
	const char *path = getenv("ATLAS_FUZZ_INDEX");
	if (!path || !*path)
		path = ATLAS_FUZZ_DEFAULT_INDEX;
	if (!*path) {
		fprintf(stderr, "fuzz: set ATLAS_FUZZ_INDEX to an index built from tests/corpora/mini\n");
		abort();
	}
	return path;
}

/* Opens the fuzzing index, holding its postings or not; aborts when it cannot. */
static atlas_engine *open_engine(bool hold)
{
	const char *path = index_path();
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	if (atlas_engine_open(&e, path, &err) || (hold && atlas_engine_hold_postings(e, &err))) {
		fprintf(stderr, "fuzz: cannot open the fuzzing index %s: %s\n", path, err.msg);
		abort();
	}
	if (!engine && !engine_fts5)
		atexit(close_engine);
	return e;
}

atlas_engine *fuzz_engine(void)
{
	/* as atlas-serve holds it: the postings in memory */
	if (!engine)
		engine = open_engine(true);
	return engine;
}

atlas_engine *fuzz_engine_fts5(void)
{
	if (!engine_fts5)
		engine_fts5 = open_engine(false);
	return engine_fts5;
}
