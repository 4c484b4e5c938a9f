/* health.c - the last reindex's status file and the kept pages of the served index. */
#include "health.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine.h"
#include "schema.h"

#define STATUS_MAX_BYTES 65536

/* Writes index_path + ".status" into buf. Never fails (truncates). */
void health_status_path(char *buf, size_t cap, const char *index_path)
{
	snprintf(buf, cap, "%s.status", index_path);
}

/* Reads the whole file path (at most STATUS_MAX_BYTES) into a malloc'd NUL-terminated string.
 * Returns it, or NULL when it cannot be read. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = malloc(STATUS_MAX_BYTES + 1);
	size_t n = buf ? fread(buf, 1, STATUS_MAX_BYTES, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

/* Fills *out from the status file of index_path. Never fails. */
void health_reindex(const char *index_path, reindex_status *out)
{
	memset(out, 0, sizeof(*out));
	char path[4096];
	health_status_path(path, sizeof(path), index_path);
	char *text = slurp(path);
	cJSON *o = text ? cJSON_Parse(text) : NULL;
	free(text);
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(o, "exit");
	if (!cJSON_IsObject(o) || !cJSON_IsNumber(code)) {
		cJSON_Delete(o);
		return;
	}
	out->known = true;
	out->exit_code = code->valueint;
	out->failed = out->exit_code != 0 && out->exit_code != 3;
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "at");
	if (cJSON_IsNumber(at))
		out->at = (long long)at->valuedouble;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");
	if (out->failed)
		snprintf(out->error, sizeof(out->error), "%s",
			 cJSON_IsString(err) && err->valuestring[0] ? err->valuestring : "reindex failed");
	cJSON_Delete(o);
}

/* Returns meta kept_pages of the served index, 0 when absent: read from the live index's facts,
 * so that /healthz and /metrics, answered on the HTTP threads, take no search worker's engine. */
int health_kept_pages(server *s)
{
	live_info li;
	live_info_get(s->index, &li);
	return li.kept_pages;
}
