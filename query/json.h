/* json.h - the one JSON serializer of search, suggest, read-next and error bodies, used by the
 * CLI (--json) and the server alike. Every function returns a malloc'd string (free() it), or
 * NULL when out of memory. */
#ifndef ATLAS_JSON_H
#define ATLAS_JSON_H

#include "engine.h"

char *atlas_json_search(const atlas_engine *e, const atlas_results *r);
char *atlas_json_suggest(const atlas_engine *e, const char *query, const atlas_suggestion *s, int n);
char *atlas_json_next(const atlas_engine *e, const atlas_next_results *r);
/* Makes cJSON allocate from arena a on this thread (NULL: from the heap again), so that a tree of
 * many small nodes costs no malloc and free each; the tree is then freed with the arena, never
 * with cJSON_Delete (which frees nothing while an arena is in use). Print the tree with no arena
 * in use, so that the text is on the heap. Never fails. */
void atlas_json_use_arena(atlas_arena *a);

/* An error body; the message may quote a reader's input and is made valid UTF-8 first. */
char *atlas_json_error(const char *code, const char *message);

#endif
