/* batch.c - POST /api/batch: several searches and read-next requests in one JSON body, answered
 * in one array, each item with its own status and body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "error.h"
#include "batch.h"

/* Appends one answer {"status":N,"body":...} to out from rp (its body is JSON and ends with a
 * newline), freeing rp's body. */
static void put_answer(strbuf *out, reply *rp)
{
	size_t n = rp->len;
	while (n && (rp->body[n - 1] == '\n'))
		n--;
	strbuf_printf(out, "{\"status\":%d,\"body\":", rp->status);
	if (n)
		strbuf_append(out, rp->body, n);
	else
		strbuf_puts(out, "null");
	strbuf_putc(out, '}');
	free(rp->owned);
	memset(rp, 0, sizeof(*rp));
}

/* Reads one item of a batch ({"endpoint": "search"|"next", "params": {...}}) into *it: its kind
 * and parameters, or BATCH_REFUSED with the 400 in it->pe. Never fails. */
static void read_item(batch_item *it, const cJSON *item)
{
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(item, "endpoint");
	const cJSON *pj = cJSON_GetObjectItemCaseSensitive(item, "params");
	it->kind = BATCH_REFUSED;
	it->pe.status = 400;
	it->ps.n = 0;
	it->ps.too_many = false;
	if (!cJSON_IsObject(item) || !cJSON_IsString(ep)) {
		it->pe.code = "bad_parameter";
		snprintf(it->pe.msg, sizeof(it->pe.msg), "%s",
			 "each request is an object {\"endpoint\": \"search\" or \"next\", \"params\": {...}}");
		return;
	}
	for (const cJSON *m = item->child; m; m = m->next)
		if (strcmp(m->string, "endpoint") && strcmp(m->string, "params")) {
			it->pe.code = "unknown_parameter";
			snprintf(it->pe.msg, sizeof(it->pe.msg),
				 "unknown member '%.60s' of a batch request: it takes endpoint and params", m->string);
			return;
		}
	if (pj && params_from_json(&it->ps, pj, &it->pe))
		return;
	const char *name = ep->valuestring;
	if (strcmp(name, "search") == 0 || strcmp(name, "/api/search") == 0) {
		it->kind = BATCH_SEARCH;
	} else if (strcmp(name, "next") == 0 || strcmp(name, "/api/next") == 0) {
		it->kind = BATCH_NEXT;
	} else {
		it->pe.code = "bad_parameter";
		snprintf(it->pe.msg, sizeof(it->pe.msg), "endpoint must be search or next");
	}
}

int batch_parse(batch *b, const char *body, size_t len, param_error *pe)
{
	memset(b, 0, sizeof(*b));
	pe->status = 400;
	pe->code = "bad_body";
	cJSON *root = cJSON_ParseWithLength(body ? body : "", len);
	if (!root) {
		snprintf(pe->msg, sizeof(pe->msg), "the body must be a JSON array of requests");
		return ATLAS_EINVAL;
	}
	const cJSON *list = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "requests") : root;
	int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
	if (n < 1 || n > BATCH_MAX) {
		cJSON_Delete(root);
		snprintf(pe->msg, sizeof(pe->msg),
			 "the body must be a JSON array of 1 to %d requests {\"endpoint\", \"params\"}", BATCH_MAX);
		return ATLAS_EINVAL;
	}
	b->items = calloc((size_t)n, sizeof(*b->items));
	if (!b->items) {
		cJSON_Delete(root);
		pe->status = 500;
		pe->code = "internal";
		snprintf(pe->msg, sizeof(pe->msg), "out of memory");
		return ATLAS_ENOMEM;
	}
	b->root = root;
	const cJSON *item;
	cJSON_ArrayForEach(item, list)
		read_item(&b->items[b->n++], item);
	return 0;
}

void batch_free(batch *b)
{
	cJSON_Delete(b->root);
	free(b->items);
	memset(b, 0, sizeof(*b));
}

void batch_answer(const batch_item *it, batch_compute_fn compute, void *ctx, reply *rp, long *count)
{
	param_error pe;
	*count = -1;
	if (it->kind == BATCH_SEARCH) {
		search_request sr;
		if (search_request_parse(&sr, &it->ps, &pe))
			reply_error(rp, pe.status, pe.code, "%s", pe.msg);
		else
			compute(ctx, &sr.norm, answer_search, &sr, rp, count);
		search_request_free(&sr);
	} else if (it->kind == BATCH_NEXT) {
		next_request nr;
		if (next_request_parse(&nr, &it->ps, &pe))
			reply_error(rp, pe.status, pe.code, "%s", pe.msg);
		else
			compute(ctx, &nr.norm, answer_next, &nr.p, rp, count);
		next_request_free(&nr);
	} else {
		reply_error(rp, it->pe.status, it->pe.code, "%s", it->pe.msg);
	}
}

/* The server and connection a batch is answered for (the ctx of cached_compute). */
typedef struct batch_ctx {
	server *s;
	struct MHD_Connection *c;
} batch_ctx;

/* batch_compute_fn of the server: api_compute, through the response cache. */
static void cached_compute(void *ctx, const strbuf *norm, answer_fn fn, const void *args, reply *rp, long *count)
{
	batch_ctx *bc = ctx;
	char build[64];
	api_compute(bc->s, bc->c, norm, fn, args, rp, count, build);
}

/* Answers POST /api/batch into rp: one array of {status, body}, or a 400/413 for the whole body.
 * Never fails (out of memory is a 500). */
void api_batch(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	if (rq->body_too_large) {
		reply_error(rp, 413, "body_too_large", "a batch is at most %d bytes", SERVE_BODY_MAX);
		return;
	}
	batch b;
	param_error pe;
	if (batch_parse(&b, rq->body.buf, rq->body.len, &pe)) {
		reply_error(rp, pe.status, pe.code, "%s", pe.msg);
		return;
	}
	batch_ctx bc = { s, c };
	strbuf out = STRBUF_INIT;
	strbuf_putc(&out, '[');
	long total = 0;
	for (int i = 0; i < b.n; i++) {
		reply one;
		long count;
		memset(&one, 0, sizeof(one));
		batch_answer(&b.items[i], cached_compute, &bc, &one, &count);
		if (i)
			strbuf_putc(&out, ',');
		put_answer(&out, &one);
		total += count > 0 ? count : 0;
	}
	strbuf_putc(&out, ']');
	batch_free(&b);
	rq->count = total;
	if (out.oom) {
		strbuf_free(&out);
		reply_json(rp, 500, NULL);
		return;
	}
	reply_json(rp, 200, strbuf_detach(&out));
}
