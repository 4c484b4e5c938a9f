/* fuzz_server.c - the checks the HTTP fuzz targets make of the server's answers (fuzz_server.h). */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_server.h"

void fuzz_outcome(const char *route, const char *fmt, ...)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("ATLAS_FUZZ_VERBOSE") != NULL;
	if (!verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "  %-7s ", route);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void fuzz_check_json(const uint8_t *data, size_t size, const char *what, const char *json, size_t len)
{
	cJSON *parsed = cJSON_ParseWithLength(json, len);
	if (!parsed)
		fuzz_fail(data, size, "%s: the body does not parse as JSON: %.*s", what, (int)(len > 400 ? 400 : len),
			  json);
	cJSON_Delete(parsed);
	if (fuzz_utf8_invalid_at(json, len) >= 0)
		fuzz_fail(data, size, "%s: the body is not valid UTF-8", what);
}

void fuzz_check_reply(const uint8_t *data, size_t size, const char *what, reply *rp)
{
	fuzz_outcome(what, "%d %.120s", rp->status, rp->body ? rp->body : "");
	if (rp->status >= 500 || rp->status < 200)
		fuzz_fail(data, size, "%s answered %d: %.*s", what, rp->status, (int)rp->len, rp->body ? rp->body : "");
	if (!rp->body || rp->len == 0)
		fuzz_fail(data, size, "%s answered %d with no body", what, rp->status);
	if (rp->status == 200) {
		fuzz_check_json(data, size, what, rp->body, rp->len);
	} else {
		cJSON *o = cJSON_ParseWithLength(rp->body, rp->len);
		const cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");
		if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "code")) ||
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message")))
			fuzz_fail(data, size, "%s: the %d has no error code and message: %.*s", what, rp->status,
				  (int)rp->len, rp->body);
		cJSON_Delete(o);
		if (fuzz_utf8_invalid_at(rp->body, rp->len) >= 0)
			fuzz_soft("error-json-invalid-utf8", data, size, "%s: the %d body is not valid UTF-8", what,
				  rp->status);
	}
	free(rp->owned);
	memset(rp, 0, sizeof(*rp));
}
