/* track.c - search analytics over HTTP: query ids in answers, settled searches, reported clicks. */
#include "track.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analytics.h"
#include "schema.h"
#include "utf8.h"

#define CLICK_RANK_MAX 1000

/* Writes the query id of sr on e into qid (ANALYTICS_QID_LEN + 1 bytes). Never fails. */
static void qid_of(char *qid, atlas_engine *e, const search_request *sr)
{
	const char *b = atlas_engine_meta(e, ATLAS_META_BUILD_ID);
	analytics_qid(qid, b ? b : "", sr->norm.buf ? sr->norm.buf : "", sr->norm.len);
}

/* Returns json with "query_id" spliced in first (json grown in place, so the pointer may move and
 * the caller owns the result as it owned json), or json itself when analytics are off or it cannot
 * grow. */
char *track_answer(atlas_engine *e, const search_request *sr, const atlas_results *r, char *json)
{
	analytics *a = analytics_active();
	if (!a || !json || json[0] != '{')
		return json;
	char qid[ANALYTICS_QID_LEN + 1];
	qid_of(qid, e, sr);
	if (r->corrected && r->did_you_mean)
		analytics_correction(a, qid, r->did_you_mean);
	char head[ANALYTICS_QID_LEN + 32];
	int k = snprintf(head, sizeof(head), "{\"query_id\":\"%s\"%s", qid, json[1] == '}' ? "" : ",");
	size_t n = strlen(json);
	/* two bytes more for the newline reply_json adds, so that its realloc does not move it again */
	char *out = realloc(json, n + (size_t)k + 2);
	if (!out)
		return json;
	memmove(out + k, out + 1, n);
	memcpy(out, head, (size_t)k);
	return out;
}

/* Writes the filters of sr ("type=a,b&topic=c", "" for none) into buf (cap bytes). */
static void filters_of(char *buf, size_t cap, const search_request *sr)
{
	strbuf sb = STRBUF_INIT;
	const char *type = sr->p.type;
	if (type || sr->ntypes) {
		strbuf_puts(&sb, "type=");
		if (type)
			strbuf_puts(&sb, type);
		for (int i = 0; i < sr->ntypes; i++) {
			if (i || type)
				strbuf_putc(&sb, ',');
			strbuf_puts(&sb, sr->types[i]);
		}
	}
	if (sr->p.topic || sr->ntopics) {
		strbuf_puts(&sb, sb.len ? "&topic=" : "topic=");
		if (sr->p.topic)
			strbuf_puts(&sb, sr->p.topic);
		for (int i = 0; i < sr->ntopics; i++) {
			if (i || sr->p.topic)
				strbuf_putc(&sb, ',');
			strbuf_puts(&sb, sr->topics[i]);
		}
	}
	snprintf(buf, cap, "%s", sb.buf && !sb.oom ? sb.buf : "");
	strbuf_free(&sb);
}

/* Counts and queues the search answered in rp. Never fails. */
void track_search(server *s, const search_request *sr, const request *rq, const reply *rp)
{
	if (rp->status != 200 && rp->status != 304)
		return;
	if (rq->count == 0)
		atomic_fetch_add(&s->zero_results, 1);
	if (!s->analytics || rq->count < 0)
		return;
	char qid[ANALYTICS_QID_LEN + 1], filters[1024];
	static const char head[] = "{\"query_id\":\"";
	size_t hl = sizeof(head) - 1;
	if (!rp->encoding && rp->body && rp->len > hl + ANALYTICS_QID_LEN &&
	    memcmp(rp->body, head, hl) == 0) {
		/* the id the answer carries */
		memcpy(qid, rp->body + hl, ANALYTICS_QID_LEN);
		qid[ANALYTICS_QID_LEN] = '\0';
	} else {
		live_info li;
		live_info_get(s->index, &li);
		analytics_qid(qid, li.build_id, sr->norm.buf ? sr->norm.buf : "", sr->norm.len);
	}
	filters_of(filters, sizeof(filters), sr);
	int limit = sr->p.limit > 0 ? sr->p.limit : 1;
	analytics_search_row row = {
		.qid = qid, .query = sr->q, .filters = filters, .results = rq->count,
		.took_ms = (serve_now() - rq->t0) * 1e3, .page = sr->p.offset / limit + 1,
	};
	analytics_search(s->analytics, &row);
}

/* Returns whether s is ANALYTICS_QID_LEN lowercase hex digits. */
static bool is_qid(const char *s)
{
	if (strlen(s) != ANALYTICS_QID_LEN)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* POST /api/click. Never fails: errors are replies. */
void track_click(server *s, request *rq, reply *rp)
{
	if (!s->analytics) {
		reply_error(rp, 404, "not_found", "analytics are off on this server (--analytics)");
		return;
	}
	if (rq->body_too_large) {
		reply_error(rp, 413, "payload_too_large", "the body is longer than %d bytes", SERVE_BODY_MAX);
		return;
	}
	cJSON *o = rq->body.len && !rq->body.oom ? cJSON_ParseWithLength(rq->body.buf, rq->body.len) : NULL;
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(o, "query_id");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "path");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rank");
	const char *why = NULL;
	if (!cJSON_IsObject(o))
		why = "the body must be a JSON object {\"query_id\", \"path\", \"rank\"}";
	else if (!cJSON_IsString(q) || !is_qid(q->valuestring))
		why = "query_id must be the query_id of a search answer";
	else if (!cJSON_IsString(p) || p->valuestring[0] != '/' || strlen(p->valuestring) > SERVE_PARAM_MAX ||
		 atlas_utf8_invalid_at(p->valuestring, strlen(p->valuestring)) >= 0)
		why = "path must be the path of a page, starting with /";
	else if (r && (!cJSON_IsNumber(r) || r->valuedouble < 1 || r->valuedouble > CLICK_RANK_MAX ||
		       r->valuedouble != (int)r->valuedouble))
		why = "rank must be a whole number from 1 to 1000";
	if (why) {
		cJSON_Delete(o);
		reply_error(rp, 400, "bad_parameter", "%s", why);
		return;
	}
	analytics_click(s->analytics, q->valuestring, p->valuestring, r ? (int)r->valuedouble : 0);
	cJSON_Delete(o);
	rp->status = 204;
}
