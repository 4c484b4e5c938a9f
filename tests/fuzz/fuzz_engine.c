/* fuzz_engine.c - the engine over the fuzzing index, shared by the search-side targets. */
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"
#include "fuzz.h"

#ifndef ATLAS_FUZZ_DEFAULT_INDEX
#define ATLAS_FUZZ_DEFAULT_INDEX ""
#endif

static atlas_engine *engine;

static void close_engine(void)
{
	atlas_engine_free(engine);
	engine = NULL;
}

atlas_engine *fuzz_engine(void)
{
	if (engine)
		return engine;
	const char *path = getenv("ATLAS_FUZZ_INDEX");
	if (!path || !*path)
		path = ATLAS_FUZZ_DEFAULT_INDEX;
	if (!*path) {
		fprintf(stderr, "fuzz: set ATLAS_FUZZ_INDEX to an index built from tests/corpora/mini\n");
		abort();
	}
	atlas_error err = { 0, "" };
	/* as atlas-serve holds it: the postings in memory */
	if (atlas_engine_open(&engine, path, &err) || atlas_engine_hold_postings(engine, &err)) {
		fprintf(stderr, "fuzz: cannot open the fuzzing index %s: %s\n", path, err.msg);
		abort();
	}
	atexit(close_engine);
	return engine;
}
