/* json.h - the one JSON serializer of search, suggest, read-next and error bodies, used by the
 * CLI (--json) and the server alike. Every function returns a malloc'd string (free() it), or
 * NULL when out of memory. */
#ifndef ATLAS_JSON_H
#define ATLAS_JSON_H

#include "engine.h"

char *atlas_json_search(const atlas_engine *e, const atlas_results *r);
char *atlas_json_suggest(const atlas_engine *e, const char *query, const atlas_suggestion *s, int n);
char *atlas_json_next(const atlas_engine *e, const atlas_next_results *r);
/* An error body; the message may quote a reader's input and is made valid UTF-8 first. */
char *atlas_json_error(const char *code, const char *message);

#endif
