/* track.h - the HTTP side of search analytics: query ids in search answers, the settled-search
 * hook of /api/search and POST /api/click. */
#ifndef ATLAS_TRACK_H
#define ATLAS_TRACK_H

#include "api.h"
#include "params.h"

/* Puts "query_id" first in the search answer json (malloc'd, taken over) of the request norm on
 * engine e when analytics are on, and queues the correction its results were searched for.
 * Returns the answer to send (json itself when analytics are off or out of memory). */
char *track_answer(atlas_engine *e, const search_request *sr, const atlas_results *r, char *json);

/* Counts a zero-result answer and queues the search sr answered in rp (200 or 304) for
 * analytics. Never fails. */
void track_search(server *s, const search_request *sr, const request *rq, const reply *rp);

/* POST /api/click: {"query_id", "path", "rank"} in rq's body, queued for analytics; 204, or a 400
 * naming what is wrong, or 404 when analytics are off. */
void track_click(server *s, request *rq, reply *rp);

#endif
