/* params.h - the parameters of /api/search and /api/next, from a query string or a JSON object:
 * checked (unknown names, undecodable bytes, ranges), normalized into a cache key, and page paths
 * resolved as the site writes them. */
#ifndef ATLAS_PARAMS_H
#define ATLAS_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "engine.h"
#include "schema.h"
#include "server.h"
#include "strbuf.h"

#define PARAMS_MAX 64            /* parameters read from one request; more is a 400 */
#define SEARCH_TYPES_MAX ATLAS_TYPE_COUNT /* the known page types */
#define SEARCH_TOPICS_MAX 16     /* topics one search may filter by */

/* One name=value pair; both owned by whoever filled the params (MHD, or a cJSON tree). */
typedef struct param {
	const char *key;
	const char *value;           /* len bytes, may hold NUL bytes */
	size_t len;
	bool number;                 /* given as a JSON number (for the messages only) */
} param;

typedef struct params {
	param v[PARAMS_MAX];
	int n;
	bool too_many;               /* more than PARAMS_MAX were given */
	char numbers[PARAMS_MAX][24]; /* the text of JSON numbers, pointed to by v[].value */
} params;

/* Why parameters were refused: the HTTP status (400), the error code, a sentence. */
typedef struct param_error {
	int status;
	const char *code;
	char msg[480];
} param_error;

/* A parsed /api/search request: p and more are ready for atlas_search_with, norm is the cache
 * key. Free with search_request_free. */
typedef struct search_request {
	char q[SERVE_QUERY_MAX + 1];
	const char *types[SEARCH_TYPES_MAX];
	int ntypes;
	char topic_text[SEARCH_TOPICS_MAX][SERVE_QUERY_MAX + 1];
	const char *topics[SEARCH_TOPICS_MAX];
	int ntopics;
	atlas_search_params p;
	atlas_search_more more;
	strbuf norm;
} search_request;

/* A parsed /api/next request (paths as given; answer_next resolves them). */
typedef struct next_request {
	char path[SERVE_PARAM_MAX + 1], guide[SERVE_PARAM_MAX + 1], seen[SERVE_SEEN_MAX + 1];
	const char *list[ATLAS_SEEN_MAX];
	atlas_next_params p;
	strbuf norm;
} next_request;

/* Fills *ps with the query-string arguments of c, in their order. Never fails (more than
 * PARAMS_MAX sets too_many). */
void params_from_connection(params *ps, struct MHD_Connection *c);

/* Fills *ps from the members of a JSON object (a cJSON *): strings as they are, numbers as decimal
 * text, arrays of those as one parameter per element. Returns 0, or ATLAS_EINVAL with *pe set for
 * any other value. The tree must outlive ps. */
int params_from_json(params *ps, const void *object, param_error *pe);

/* Checks every parameter: a name of names (a NULL-terminated list, shown in the message with
 * route), a value of valid UTF-8 once percent-decoded, at most PARAMS_MAX of them. Returns 0, or
 * ATLAS_EINVAL with *pe set (unknown_parameter, bad_encoding, bad_parameter) naming the first
 * offender. */
int params_check(const params *ps, const char *route, const char *const *names, param_error *pe);

/* Makes q (NUL-terminated, changed in place) the query as the cache and the ETag know it: every
 * run of white space and control bytes one space, none at the start, one kept at the end (a
 * trailing space means no prefix word). Never fails. */
void params_normalize_query(char *q);

/* Parses parameter key (the first given) as a decimal number in lo..hi into *out, which is left as
 * it is when the parameter is absent or empty. Returns 0, or ATLAS_EINVAL for anything but digits
 * or a number out of range. */
int params_int(const params *ps, const char *key, int lo, int hi, int *out);

/* Parses the parameters of /api/search into *sr. Returns 0, or ATLAS_EINVAL with *pe set (a 400
 * naming the parameter: unknown, not valid UTF-8, out of range, too long). sr->norm is allocated
 * either way: free with search_request_free. */
int search_request_parse(search_request *sr, const params *ps, param_error *pe);
void search_request_free(search_request *sr);

/* The same for /api/next. Free with next_request_free. */
int next_request_parse(next_request *nr, const params *ps, param_error *pe);
void next_request_free(next_request *nr);

#endif
