/* batch.h - the body of POST /api/batch read into its requests (batch.c), apart from answering
 * them, so that the fuzz targets parse bodies as the server does. */
#ifndef ATLAS_BATCH_H
#define ATLAS_BATCH_H

#include <stddef.h>

#include "api.h"
#include "params.h"

#define BATCH_MAX 16 /* requests in one batch */

enum { BATCH_REFUSED, BATCH_SEARCH, BATCH_NEXT };

/* One request of a batch: its endpoint and parameters, or the 400 that refuses it alone. */
typedef struct batch_item {
	int kind;                    /* BATCH_* */
	params ps;                   /* pointing into the batch's tree */
	param_error pe;              /* why, when kind is BATCH_REFUSED */
} batch_item;

/* A parsed batch body: owns its JSON tree and items. Free with batch_free. */
typedef struct batch {
	void *root;                  /* the cJSON tree */
	batch_item *items;
	int n;
} batch;

/* Parses body[0..len) ({"requests": [...]} or a bare array of 1 to BATCH_MAX requests) into *b.
 * Returns 0 (each item then holds its own endpoint or refusal), or ATLAS_EINVAL (ATLAS_ENOMEM when
 * out of memory) with *pe set for the whole body (a 400, or a 500 when out of memory); *b is then
 * empty. */
int batch_parse(batch *b, const char *body, size_t len, param_error *pe);

/* Computes an answer: fn with args into rp, its results in *count; norm is the request's
 * normalized form (the cache key). The server's goes through the response cache. */
typedef void (*batch_compute_fn)(void *ctx, const strbuf *norm, answer_fn fn, const void *args, reply *rp,
				 long *count);

/* Answers item it of a batch into rp: its 400 when refused, else its parameters mapped
 * (search_request_parse, next_request_parse) and compute called with ctx. *count is its results
 * (-1 when not known). Never fails: errors are replies. */
void batch_answer(const batch_item *it, batch_compute_fn compute, void *ctx, reply *rp, long *count);

/* Frees what batch_parse allocated; b is left empty. */
void batch_free(batch *b);

#endif
