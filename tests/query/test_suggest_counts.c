/* test_suggest_counts.c - typeahead's counts are a search's: each completed query that
 * atlas_suggest offers after words typed before the last carries the pages a full search for its
 * text finds holding all its words (total_all), through FTS5 and over the postings held in memory.
 * The inputs: every judged query of QUERIES of two words or more, cut after each word and inside
 * its last word, and the shapes below (stop words, typos, identifiers, excluded words). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"

static const char *const shapes[] = {
	"how do i prevent a cache st",  "what is the difference between lambda and ka",
	"raft concensus lea",		"consistent hashing -redis vir",
	"\"leader election\" ra",	"torch_xla recompile ev",
	"jax.jit sha",			"the of a",
	"why is my multithreaded python code not fa", "k8s depl",
};

/* The pages a full search (not count-only) for text finds holding all its words, or -1 when it
 * fails. */
static int all_words_total(atlas_engine *e, const char *text)
{
	char q[ATLAS_SUGGEST_TEXT_MAX + 2];
	snprintf(q, sizeof(q), "%s ", text); /* a finished word, as typeahead counts it */
	atlas_search_params p = { q, 1, 0, NULL, NULL, false, false };
	atlas_results r;
	atlas_error err = { 0, "" };
	if (atlas_search(&r, e, &p, &err))
		return -1;
	int total = r.total_all;
	atlas_results_free(&r);
	return total;
}

/* Checks every completed query atlas_suggest gives for prefix; returns how many were compared. */
static int check_prefix(atlas_engine *e, const char *how, const char *prefix)
{
	atlas_suggestion s[10];
	int n = atlas_suggest(s, 10, e, prefix);
	int compared = 0;
	for (int i = 0; i < n; i++) {
		if (s[i].doc >= 0)
			continue;
		int want = all_words_total(e, s[i].text);
		CHECK(s[i].pages == want, "%s: suggest \"%s\" offers \"%s\" with %d pages; a search finds %d",
		      how, prefix, s[i].text, s[i].pages, want);
		compared++;
	}
	return compared;
}

/* The cuts of query q (two words or more) typeahead is asked for: after each word but the first,
 * and inside the last word. Calls check_prefix on each; returns the completions compared. */
static int check_query(atlas_engine *e, const char *how, const char *q)
{
	int compared = 0;
	size_t len = strlen(q);
	const char *first_space = strchr(q, ' ');
	if (!first_space)
		return 0;
	char cut[512];
	for (size_t i = (size_t)(first_space - q) + 2; i <= len && i < sizeof(cut); i++) {
		bool word_end = i == len || q[i] == ' ';
		bool inside_last = !strchr(q + i, ' ') && i + 2 == len;
		if (!word_end && !inside_last)
			continue;
		memcpy(cut, q, i);
		cut[i] = '\0';
		compared += check_prefix(e, how, cut);
	}
	return compared;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_suggest_counts INDEX QUERIES\n");
		return 2;
	}
	for (int held = 0; held < 2; held++) {
		const char *how = held ? "held postings" : "FTS5";
		atlas_engine *e = NULL;
		atlas_error err = { 0, "" };
		if (atlas_engine_open(&e, argv[1], &err) || (held && atlas_engine_hold_postings(e, &err))) {
			printf("FAIL  open: %s\n", err.msg);
			atlas_engine_free(e);
			return 1;
		}
		int compared = 0;
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
			compared += check_prefix(e, how, shapes[i]);
		FILE *f = fopen(argv[2], "r");
		if (!CHECK(f != NULL, "%s: cannot be read", argv[2])) {
			atlas_engine_free(e);
			break;
		}
		char line[1024];
		while (fgets(line, sizeof(line), f)) {
			if (line[0] == '#' || line[0] == '\n')
				continue;
			line[strcspn(line, "\t\n")] = '\0';
			compared += check_query(e, how, line);
		}
		fclose(f);
		CHECK(compared > 500, "%s: at least 500 completions compared (%d)", how, compared);
		printf("ok    %s: %d completions compared with a search\n", how, compared);
		atlas_engine_free(e);
	}
	return check_done("test_suggest_counts");
}
