/* test_hostile.c - whatever a reader types, the engine answers with results or a clear error:
 * never an FTS5 syntax error, never a crash. Each outcome is asserted. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "json.h"
#include "strbuf.h"
#include "utf8.h"

/* Runs q (n bytes, may hold NUL) and checks the call succeeds and serializes to valid JSON.
 * want_results: 1 at least one result, 0 none, -1 either. */
static void run(atlas_engine *e, const char *label, const char *q, size_t n, int want_results)
{
	char *copy = malloc(n + 1);
	memcpy(copy, q, n);
	copy[n] = '\0';
	atlas_search_params p = { copy, 10, 0, NULL, NULL, false, false };
	atlas_results r;
	atlas_error err = { 0, "" };
	int rc = atlas_search(&r, e, &p, &err);
	if (!CHECK(rc == 0, "%-28s error %d: %s", label, rc, err.msg)) {
		free(copy);
		return;
	}
	char *json = atlas_json_search(e, &r);
	cJSON *parsed = json ? cJSON_Parse(json) : NULL;
	bool ok = parsed && cJSON_IsArray(cJSON_GetObjectItem(parsed, "results"));
	if (ok && want_results >= 0)
		ok = (r.total > 0) == (want_results > 0);
	if (CHECK(ok, "%-28s total %d (want %s), json %s", label, r.total,
		  want_results > 0 ? "some" : want_results == 0 ? "none" : "any", parsed ? "valid" : "INVALID"))
		printf("ok    %-28s total %d\n", label, r.total);
	cJSON_Delete(parsed);
	free(json);
	atlas_results_free(&r);
	free(copy);
}

/* Every byte through the HTML escaper: what comes out holds no quote, backslash or control byte
 * (so it goes into JSON unescaped), and reads back as the input, controls as spaces. */
static void check_html_escaper(void)
{
	char in[255];
	for (int i = 0; i < 255; i++)
		in[i] = (char)(i + 1);
	strbuf sb = STRBUF_INIT;
	strbuf_append_html(&sb, in, sizeof(in));
	const char *out = strbuf_str(&sb);
	for (const char *c = out; *c; c++)
		if (!CHECK(*c != '"' && *c != '\\' && (unsigned char)*c >= 0x20,
			   "HTML escaper left byte 0x%02x at %d", (unsigned char)*c, (int)(c - out))) {
			strbuf_free(&sb);
			return;
		}
	static const char *const ent[][2] = { { "&amp;", "&" },	  { "&lt;", "<" },  { "&gt;", ">" },
					     { "&quot;", "\"" }, { "&#39;", "'" }, { "&#92;", "\\" } };
	char back[512];
	size_t n = 0;
	for (const char *c = out; *c && n < sizeof(back) - 1;) {
		size_t k = 0;
		while (k < sizeof(ent) / sizeof(ent[0]) && strncmp(c, ent[k][0], strlen(ent[k][0])) != 0)
			k++;
		if (k < sizeof(ent) / sizeof(ent[0])) {
			back[n++] = ent[k][1][0];
			c += strlen(ent[k][0]);
		} else
			back[n++] = *c++;
	}
	back[n] = '\0';
	bool same = n == sizeof(in);
	for (size_t i = 0; same && i < n; i++)
		same = back[i] == ((unsigned char)in[i] < 0x20 ? ' ' : in[i]);
	if (CHECK(same, "HTML escaper output reads back as its input"))
		printf("ok    HTML escaper: 255 bytes, nothing JSON would escape\n");
	strbuf_free(&sb);
}

/* Writes a random string of at most 99 bytes at a random offset below 16 of in (sets *at) and
 * returns its length: each byte a lowercase letter with probability letters/16, else a byte of
 * pool[0..npool). The same seed gives the same strings. */
static size_t random_text(unsigned long long *seed, char *in, size_t *at, const char *pool,
			  size_t npool, unsigned letters)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	size_t n = (size_t)(*seed >> 33) % 100;
	*at = (size_t)(*seed >> 20) % 16;
	for (size_t i = 0; i < n; i++) {
		*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
		in[*at + i] = (*seed >> 60) < letters ? (char)('a' + (*seed >> 40) % 26)
							: pool[(*seed >> 33) % npool];
	}
	return n;
}

/* The escaper against a byte-at-a-time one, over 20,000 strings of 0 to 99 bytes from a few
 * letters, the bytes it changes and bytes of UTF-8, at every alignment: the scan that skips ahead
 * sixteen bytes at a time must stop at exactly the bytes a byte-wise scan stops at. */
static void check_html_escaper_random(void)
{
	static const char pool[] = "ab &<>\"'\\\t\n\x01\x1f\x7f\x80\xc3\xa9\xe2\x80\xa6xyz ";
	char in[128 + 16];
	unsigned long long seed = 42;
	int bad = 0;
	for (int t = 0; t < 20000 && !bad; t++) {
		size_t at, n = random_text(&seed, in, &at, pool, sizeof(pool) - 1, 12); /* mostly letters */
		strbuf got = STRBUF_INIT, want = STRBUF_INIT;
		strbuf_append(&got, "", 0);
		strbuf_append_html(&got, in + at, n);
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)in[at + i];
			switch (c) {
			case '&': strbuf_puts(&want, "&amp;"); break;
			case '<': strbuf_puts(&want, "&lt;"); break;
			case '>': strbuf_puts(&want, "&gt;"); break;
			case '"': strbuf_puts(&want, "&quot;"); break;
			case '\'': strbuf_puts(&want, "&#39;"); break;
			case '\\': strbuf_puts(&want, "&#92;"); break;
			default: strbuf_putc(&want, c < 0x20 ? ' ' : (char)c);
			}
		}
		if (strcmp(strbuf_str(&got), strbuf_str(&want)) != 0) {
			bad = 1;
			printf("FAIL  HTML escaper: %zu bytes at offset %zu: got \"%s\", want \"%s\"\n", n, at,
			       strbuf_str(&got), strbuf_str(&want));
		}
		strbuf_free(&got);
		strbuf_free(&want);
	}
	if (CHECK(!bad, "HTML escaper: a string escaped otherwise than byte by byte"))
		printf("ok    HTML escaper: 20,000 strings as a byte-wise escaper writes them\n");
}

/* The UTF-8 validator (ASCII skipped a word at a time) against a scan a sequence at a time, over
 * 20,000 random strings at every alignment: mostly ASCII, with valid and broken sequences. */
static void check_utf8_random(void)
{
	static const char pool[] = "ab \x7f\xc3\xa9\xe2\x80\xa6\xf0\x9f\x98\x80"
				   "\x80\xc3\xe2\x80\xed\xa0\x80\xff";
	char in[128 + 16];
	unsigned long long seed = 7;
	int bad = 0;
	for (int t = 0; t < 20000 && !bad; t++) {
		size_t at, n = random_text(&seed, in, &at, pool, sizeof(pool) - 1, 14);
		const unsigned char *u = (const unsigned char *)in + at;
		long want = -1;
		for (size_t i = 0; i < n;) {
			size_t len = atlas_utf8_len(u + i, n - i);
			if (!len) {
				want = (long)i;
				break;
			}
			i += len;
		}
		long got = atlas_utf8_invalid_at(in + at, n);
		if (got != want) {
			bad = 1;
			printf("FAIL  UTF-8 validator: %zu bytes at offset %zu: invalid at %ld, want %ld\n", n, at,
			       got, want);
		}
	}
	if (CHECK(!bad, "UTF-8 validator: a string judged otherwise than a sequence at a time"))
		printf("ok    UTF-8 validator agrees with the sequence-at-a-time scan on 20000 strings\n");
}

/* A snippet of text with a backslash and quotes: the response is valid JSON, and the reader sees
 * the backslash (as an entity in the snippet's HTML). */
static void check_snippet_escapes(atlas_engine *e)
{
	atlas_search_params p = { "metadata keys matching such as", 10, 0, NULL, NULL, false, false };
	atlas_results r;
	atlas_error err = { 0, "" };
	if (!CHECK(atlas_search(&r, e, &p, &err) == 0, "backslash snippet: %s", err.msg))
		return;
	char *json = atlas_json_search(e, &r);
	cJSON *parsed = json ? cJSON_Parse(json) : NULL;
	cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(parsed, "results"), 0);
	const char *snippet = cJSON_GetStringValue(cJSON_GetObjectItem(first, "snippet"));
	if (CHECK(snippet && strstr(snippet, "/&#92;d+(&#92;.&#92;d+)*$"), "backslash snippet: %s",
		  snippet ? snippet : parsed ? "no snippet" : "invalid JSON"))
		printf("ok    backslash snippet: %s\n", snippet);
	cJSON_Delete(parsed);
	free(json);
	atlas_results_free(&r);
}

/* Every hostile input, run on e. */
static void hostile_inputs(atlas_engine *e)
{
	atlas_error err = { 0, "" };
	char big[10 * 1024 + 1];
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = "consistent hashing ring "[i % 24];
	big[sizeof(big) - 1] = '\0';
	char many[500 * 6 + 1] = "";
	for (int i = 0; i < 500; i++)
		strcat(many, i % 2 ? "cache " : "raft ");
#define RUN(label, s, want) run(e, label, s, sizeof(s) - 1, want)
	RUN("empty", "", 0);
	RUN("whitespace only", "   \t  ", 0);
	run(e, "10 KB of text", big, strlen(big), 1);
	RUN("lone quote", "\"", 0);
	RUN("unbalanced quote", "\"consistent hashing", 1);
	RUN("unbalanced parens", "((raft", 1);
	RUN("close paren", "raft)", 1);
	RUN("operators only", "AND OR NOT NEAR", -1);
	RUN("operators with words", "raft AND OR NOT NEAR(cache, 2)", 1);
	RUN("column filter", "title:raft", -1);
	RUN("column filter braces", "{title body}: raft", 1);
	RUN("star", "*", 0);
	RUN("caret", "^raft", 1);
	RUN("lone minus", "-", 0);
	RUN("only exclusions", "-raft -cache", 0);
	RUN("exclusion", "cache -redis", 1);
	RUN("NUL byte", "raft\0cache", 1);
	RUN("invalid UTF-8", "ca\xff\xfe" "che \xc3\x28 raft", 1);
	RUN("overlong UTF-8", "\xc0\xaf raft", 1);
	RUN("emoji", "\xf0\x9f\x94\xa5 cache \xf0\x9f\x9a\x80", 1);
	RUN("sql injection", "'; DROP TABLE docs; --", -1);
	RUN("sql injection 2", "\" OR 1=1 --", -1);
	RUN("fts injection", "\") OR (\"", -1);
	RUN("backslashes", "\\\\ \\\" raft", 1);
	run(e, "500 words", many, strlen(many), 1);
	RUN("control bytes", "\x01\x02raft\x1b[31m", 1);
	RUN("very long word", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0);
	RUN("percent and underscore", "%_% raft_", 1);
	RUN("html", "<script>alert(1)</script>", -1);
	check_html_escaper();
	check_html_escaper_random();
	check_utf8_random();
	check_snippet_escapes(e);

	/* parameters out of range are clear errors */
	atlas_search_params bad = { "raft", 51, 0, NULL, NULL, false, false };
	atlas_results r;
	CHECK(atlas_search(&r, e, &bad, &err) == ATLAS_EINVAL, "limit 51 refused");
	bad.limit = 10;
	bad.offset = 1001;
	CHECK(atlas_search(&r, e, &bad, &err) == ATLAS_EINVAL, "offset 1001 refused");
	bad.offset = 0;
	bad.type = "nonsense";
	CHECK(atlas_search(&r, e, &bad, &err) == ATLAS_EINVAL, "type nonsense refused");
}

/* The work budget by index size: the defaults up to ATLAS_WORK_PAGES pages, postings in
 * proportion above it (candidates and expansions fixed), and a field given by
 * atlas_set_work_budget held as given at every size. */
static void check_work_budget(void)
{
	static const struct { int ndocs; long postings; } want[] = {
		{ 0, ATLAS_WORK_POSTINGS },	     { 1000, ATLAS_WORK_POSTINGS },
		{ ATLAS_WORK_PAGES, ATLAS_WORK_POSTINGS }, { 2 * ATLAS_WORK_PAGES, 2 * ATLAS_WORK_POSTINGS },
		{ 108720, 4348800 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		atlas_work w = atlas_work_budget_for(want[i].ndocs);
		if (CHECK(w.postings == want[i].postings && w.candidates == ATLAS_WORK_CANDIDATES &&
				  w.expansions == ATLAS_WORK_EXPANSIONS,
			  "default budget on %d pages: %ld,%ld,%ld (want %ld,%ld,%ld)", want[i].ndocs,
			  w.postings, w.candidates, w.expansions, want[i].postings, ATLAS_WORK_CANDIDATES,
			  ATLAS_WORK_EXPANSIONS))
			printf("ok    default budget on %d pages: postings %ld\n", want[i].ndocs, w.postings);
	}
	atlas_work given;
	CHECK(atlas_parse_work_budget("300,,1000", &given) == 0, "--budget 300,,1000 parses");
	atlas_set_work_budget(&given);
	atlas_work small = atlas_work_budget_for(100), big = atlas_work_budget_for(108720);
	if (CHECK(small.postings == 300 && big.postings == 300 && small.expansions == 1000 &&
			  big.expansions == 1000 && big.candidates == ATLAS_WORK_CANDIDATES,
		  "a given budget holds at every size: %ld,%ld,%ld on 100 pages, %ld,%ld,%ld on 108720",
		  small.postings, small.candidates, small.expansions, big.postings, big.candidates,
		  big.expansions))
		printf("ok    a given budget (300,,1000) holds as given on 100 and 108720 pages\n");
	atlas_set_work_budget(NULL);
	CHECK(atlas_work_budget_for(108720).postings == 4348800, "atlas_set_work_budget(NULL) restores the defaults");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_hostile INDEX\n");
		return 2;
	}
	/* searched through FTS5 (as atlas-query does), then over the postings held in memory (as
	 * atlas-serve does) */
	for (int held = 0; held < 2; held++) {
		atlas_engine *e = NULL;
		atlas_error err = { 0, "" };
		if (atlas_engine_open(&e, argv[1], &err) || (held && atlas_engine_hold_postings(e, &err))) {
			printf("FAIL  open: %s\n", err.msg);
			atlas_engine_free(e);
			return 1;
		}
		hostile_inputs(e);
		atlas_engine_free(e);
	}
	check_work_budget();
	return check_done("test_hostile");
}
