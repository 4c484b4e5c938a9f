/* batch.c - POST /api/batch: several searches and read-next requests in one JSON body, answered
 * in one array, each item with its own status and body. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api.h"
#include "params.h"

#define BATCH_MAX 16 /* requests in one batch */

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

/* Answers one item of a batch ({"endpoint": "search"|"next", "params": {...}}) into rp. */
static void batch_item(server *s, struct MHD_Connection *c, const cJSON *item, reply *rp, long *count)
{
	char build[64];
	params ps;
	param_error pe;
	const cJSON *ep = cJSON_GetObjectItemCaseSensitive(item, "endpoint");
	const cJSON *pj = cJSON_GetObjectItemCaseSensitive(item, "params");
	*count = -1;
	if (!cJSON_IsObject(item) || !cJSON_IsString(ep)) {
		reply_error(rp, 400, "bad_parameter",
			    "each request is an object {\"endpoint\": \"search\" or \"next\", \"params\": {...}}");
		return;
	}
	for (const cJSON *it = item->child; it; it = it->next)
		if (strcmp(it->string, "endpoint") && strcmp(it->string, "params")) {
			char name[64];
			snprintf(name, sizeof(name), "%s", it->string);
			reply_error(rp, 400, "unknown_parameter",
				    "unknown member '%s' of a batch request: it takes endpoint and params", name);
			return;
		}
	if (pj && params_from_json(&ps, pj, &pe)) {
		reply_error(rp, pe.status, pe.code, "%s", pe.msg);
		return;
	}
	if (!pj)
		ps.n = 0, ps.too_many = false;
	const char *name = ep->valuestring;
	if (strcmp(name, "search") == 0 || strcmp(name, "/api/search") == 0) {
		search_request sr;
		if (search_request_parse(&sr, &ps, &pe))
			reply_error(rp, pe.status, pe.code, "%s", pe.msg);
		else
			api_compute(s, c, &sr.norm, answer_search, &sr, rp, count, build);
		search_request_free(&sr);
	} else if (strcmp(name, "next") == 0 || strcmp(name, "/api/next") == 0) {
		next_request nr;
		if (next_request_parse(&nr, &ps, &pe))
			reply_error(rp, pe.status, pe.code, "%s", pe.msg);
		else
			api_compute(s, c, &nr.norm, answer_next, &nr.p, rp, count, build);
		next_request_free(&nr);
	} else {
		reply_error(rp, 400, "bad_parameter", "endpoint must be search or next");
	}
}

/* Answers POST /api/batch into rp: one array of {status, body}, or a 400/413 for the whole body.
 * Never fails (out of memory is a 500). */
void api_batch(server *s, struct MHD_Connection *c, request *rq, reply *rp)
{
	if (rq->body_too_large) {
		reply_error(rp, 413, "body_too_large", "a batch is at most %d bytes", SERVE_BODY_MAX);
		return;
	}
	cJSON *root = cJSON_ParseWithLength(rq->body.buf ? rq->body.buf : "", rq->body.len);
	if (!root) {
		reply_error(rp, 400, "bad_body", "the body must be a JSON array of requests");
		return;
	}
	const cJSON *list = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "requests") : root;
	int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
	if (n < 1 || n > BATCH_MAX) {
		cJSON_Delete(root);
		reply_error(rp, 400, "bad_body",
			    "the body must be a JSON array of 1 to %d requests {\"endpoint\", \"params\"}",
			    BATCH_MAX);
		return;
	}
	strbuf out = STRBUF_INIT;
	strbuf_putc(&out, '[');
	long total = 0;
	int i = 0;
	const cJSON *item;
	cJSON_ArrayForEach(item, list) {
		reply one;
		long count;
		memset(&one, 0, sizeof(one));
		batch_item(s, c, item, &one, &count);
		if (i++)
			strbuf_putc(&out, ',');
		put_answer(&out, &one);
		total += count > 0 ? count : 0;
	}
	strbuf_putc(&out, ']');
	cJSON_Delete(root);
	rq->count = total;
	if (out.oom) {
		strbuf_free(&out);
		reply_json(rp, 500, NULL);
		return;
	}
	reply_json(rp, 200, strbuf_detach(&out));
}
