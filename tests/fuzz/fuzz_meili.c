/* fuzz_meili.c - arbitrary bytes as the JSON body of POST /indexes/{uid}/search, through the
 * server's own Meilisearch request reader (meili_read_query, with its filter parser) and answer
 * (meili_results) on the engine over the fuzzing index.
 *
 * Property: a body that is not JSON is left to the route (a 400 before the reader); a JSON value
 * is read into a query or refused with a 4xx, a Meilisearch error code and a message; a query is
 * answered without a 5xx, every hit passes the query's filter (evaluated again on the hit's page),
 * at most limit hits, and the answer serializes to JSON in valid UTF-8 (crop markers and highlight
 * tags are the client's text, cleaned by the server). Nothing crashes or leaks. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_server.h"
#include "meili.h"

/* Checks that the refusal me is a Meilisearch error of a request. */
static void check_refusal(const uint8_t *data, size_t size, const meili_error *me)
{
	if (me->status < 400 || me->status >= 500 || !me->code || !me->code[0] || !me->type ||
	    !me->message[0])
		fuzz_fail(data, size, "refused with status %d code %s type %s message \"%s\"", me->status,
			  me->code ? me->code : "(none)", me->type ? me->type : "(none)", me->message);
	fuzz_outcome("meili", "%d %s: %.100s", me->status, me->code, me->message);
}

/* Checks the answer o of query qr: sizes, the filter on every hit, its JSON. */
static void check_answer(const uint8_t *data, size_t size, atlas_engine *e, const query *qr, cJSON *o)
{
	const cJSON *hits = cJSON_GetObjectItemCaseSensitive(o, "hits");
	if (!cJSON_IsArray(hits))
		fuzz_fail(data, size, "the answer has no hits array");
	int n = cJSON_GetArraySize(hits);
	if (n > qr->limit)
		fuzz_fail(data, size, "%d hits for limit %d", n, qr->limit);
	const cJSON *h;
	cJSON_ArrayForEach(h, hits) {
		const cJSON *path = cJSON_GetObjectItemCaseSensitive(h, "path");
		if (!cJSON_IsString(path))
			continue; /* not retrieved */
		int doc = atlas_engine_find(e, path->valuestring);
		if (doc < 0)
			fuzz_fail(data, size, "hit %s is no page of the index", path->valuestring);
		if (qr->f.root >= 0 && !meili_accept_filter(atlas_engine_doc(e, doc), (void *)&qr->f))
			fuzz_fail(data, size, "hit %s does not pass the filter", path->valuestring);
	}
	char *text = cJSON_PrintUnformatted(o);
	if (!text)
		return; /* out of memory: the route answers 500 from a static body */
	fuzz_check_json(data, size, "meili", text, strlen(text));
	fuzz_outcome("meili", "200 %d hits", n);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *root = cJSON_ParseWithLength((const char *)data, size);
	if (!root)
		return 0;
	query *qr = malloc(sizeof(*qr));
	if (!qr) {
		cJSON_Delete(root);
		return 0;
	}
	meili_error me;
	memset(&me, 0, sizeof(me));
	if (meili_read_query(qr, root, &me)) {
		check_refusal(data, size, &me);
	} else {
		atlas_engine *e = fuzz_engine();
		long count = 0;
		cJSON *o = meili_results(e, qr, &me, &count);
		if (!o)
			check_refusal(data, size, &me);
		else
			check_answer(data, size, e, qr, o);
		cJSON_Delete(o);
	}
	free(qr);
	cJSON_Delete(root);
	return 0;
}
