/* fuzz_http_params.c - arbitrary bytes as the query string of a request to atlas-serve, through the
 * server's own parameter mapping (server/params.c) and answers (answer_search, answer_next):
 *
 *   input    = [ "/api/search?" | "/api/next?" ] query-string
 *   pairs    split on '&', key and value split at the first '='; '+' is a space, then %XX is
 *            decoded by MHD_http_unescape, as libmicrohttpd hands them to params_from_connection
 *            (a key without '=' is present with an empty value); more than PARAMS_MAX sets
 *            too_many, as params_from_connection does
 *   mapping  search_request_parse or next_request_parse, then answer_search or answer_next on the
 *            engine over the fuzzing index
 *
 * Without a route prefix the input is sent to both. Property: a refused request is a 4xx whose
 * body is {"error": {"code", "message"}}; an answer is never a 5xx and its body is JSON in valid
 * UTF-8; nothing crashes or leaks. Invalid UTF-8 echoed into an error body is a soft finding. */
#include <microhttpd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "fuzz.h"
#include "fuzz_server.h"
#include "params.h"

/* Splits s[0..n) into *ps as libmicrohttpd would, the decoded texts in *store (the caller frees
 * it). */
static void split_query(params *ps, const char *s, size_t n, char **store)
{
	char *buf = malloc(n + 1);
	*store = buf;
	ps->n = 0;
	ps->too_many = false;
	if (!buf)
		return;
	memcpy(buf, s, n);
	buf[n] = '\0';
	/* a NUL byte ends the query string, as it ends MHD's copy of the request line */
	for (char *save = NULL, *tok = strtok_r(buf, "&", &save); tok; tok = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(tok, '=');
		char *val = eq ? eq + 1 : tok + strlen(tok);
		if (eq)
			*eq = '\0';
		for (char *p = tok; *p; p++)
			if (*p == '+')
				*p = ' ';
		for (char *p = val; *p; p++)
			if (*p == '+')
				*p = ' ';
		size_t vlen = eq ? MHD_http_unescape(val) : 0;
		MHD_http_unescape(tok);
		if (ps->n == PARAMS_MAX) {
			ps->too_many = true;
			continue;
		}
		ps->v[ps->n++] = (param){ tok, val, vlen, false };
	}
}

/* Sends ps to /api/search through the server's code and checks the answer. */
static void do_search(atlas_engine *e, const params *ps, const uint8_t *data, size_t size)
{
	search_request sr;
	param_error pe;
	reply rp;
	long count = -1;
	memset(&rp, 0, sizeof(rp));
	if (search_request_parse(&sr, ps, &pe))
		reply_error(&rp, pe.status, pe.code, "%s", pe.msg);
	else
		answer_search(e, &sr, &rp, &count);
	if (rp.status == 200 && (sr.p.limit < 0 || count < 0))
		fuzz_fail(data, size, "search: a 200 for limit %d counts %ld results", sr.p.limit, count);
	search_request_free(&sr);
	fuzz_check_reply(data, size, "search", &rp);
}

/* Sends ps to /api/next through the server's code and checks the answer (a 404 for a page the
 * index does not have is an answer too). */
static void do_next(atlas_engine *e, const params *ps, const uint8_t *data, size_t size)
{
	next_request nr;
	param_error pe;
	reply rp;
	long count = -1;
	memset(&rp, 0, sizeof(rp));
	if (next_request_parse(&nr, ps, &pe))
		reply_error(&rp, pe.status, pe.code, "%s", pe.msg);
	else
		answer_next(e, &nr.p, &rp, &count);
	next_request_free(&nr);
	fuzz_check_reply(data, size, "next", &rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *prefix;
		int route; /* 1 search, 2 next */
	} routes[] = { { "/api/search?", 1 }, { "/api/next?", 2 } };
	const char *s = (const char *)data;
	size_t n = size;
	int which = 3;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		size_t pl = strlen(routes[i].prefix);
		if (n >= pl && memcmp(s, routes[i].prefix, pl) == 0) {
			which = routes[i].route;
			s += pl;
			n -= pl;
			break;
		}
	}
	params *ps = malloc(sizeof(*ps));
	if (!ps)
		return 0;
	char *store;
	split_query(ps, s, n, &store);
	atlas_engine *e = fuzz_engine();
	if (which & 1)
		do_search(e, ps, data, size);
	if (which & 2)
		do_next(e, ps, data, size);
	free(store);
	free(ps);
	return 0;
}
