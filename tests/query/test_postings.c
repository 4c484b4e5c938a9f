/* test_postings.c - an engine holding the index's postings in memory, and one reading the postings
 * table (atlas_engine_read_postings_table), answer every search exactly as one that asks FTS5: the
 * same JSON body (took_ms aside) for the relevance queries, every prefix of their last words, and queries written to reach each part of the expressions (phrases,
 * identifiers, negation, prefixes, column-limited completions, filters, pages past the first);
 * and each engine's first ten hits are the first ten of a page of fifty.
 *
 * usage: test_postings INDEX QUERIES.tsv */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "engine_internal.h"
#include "blockmax.h"
#include "json.h"

/* The body of a search, without took_ms; NULL (and a failure) when the search fails. */
static char *body(atlas_engine *e, const atlas_search_params *p, const char *label)
{
	atlas_results r;
	atlas_error err = {0, ""};
	if (atlas_search(&r, e, p, &err)) {
		if (err.code == ATLAS_EINVAL)
			return strdup("EINVAL");
		CHECK(0, "%s: %s", label, err.msg);
		return NULL;
	}
	char *s = atlas_json_search(e, &r);
	atlas_results_free(&r);
	cJSON *j = s ? cJSON_Parse(s) : NULL;
	free(s);
	if (!CHECK(j != NULL, "%s: a JSON body", label))
		return NULL;
	cJSON_DeleteItemFromObject(j, "took_ms");
	s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return s;
}

static void compare(atlas_engine *held, atlas_engine *fts, const char *q)
{
	static const atlas_search_params variants[] = {
	    {NULL, 10, 0, NULL, NULL, false, false},
	    {NULL, 20, 5, NULL, NULL, false, false},
	    {NULL, 10, 0, ATLAS_TYPE_NAME_EXPLAINER, NULL, true, false},
	    {NULL, 5, 0, NULL, "systems", false, false},
	    {NULL, 10, 0, NULL, NULL, false, true},
	};
	for (size_t v = 0; v < sizeof(variants) / sizeof(*variants); v++) {
		atlas_search_params p = variants[v];
		p.q = q;
		char label[400];
		snprintf(label, sizeof(label), "'%s' (variant %zu)", q, v);
		char *a = body(held, &p, label), *b = body(fts, &p, label);
		if (a && b) {
			size_t i = 0;
			while (a[i] && a[i] == b[i])
				i++;
			size_t from = i > 60 ? i - 60 : 0;
			CHECK(a[i] == b[i], "%s: bodies differ at byte %zu\n  held: %.160s\n  fts5: %.160s",
			      label, i, a + from, b + from);
		}
		free(a);
		free(b);
	}
}

/* The first ten hits of a search for q are the same pages, in the same order and with the same
 * scores, as the first ten of a page of fifty: the boosts read for the pages that could be shown
 * alone (boost_shown) leave out none that could. */
static void same_first(atlas_engine *e, const char *q, const char *engine)
{
	atlas_search_params ten = {NULL, 10, 0, NULL, NULL, false, false}, fifty = ten;
	ten.q = fifty.q = q;
	fifty.limit = 50;
	atlas_results a, b;
	atlas_error err = {0, ""};
	if (atlas_search(&a, e, &ten, &err))
		return; /* compare() reports a failing search */
	if (atlas_search(&b, e, &fifty, &err)) {
		atlas_results_free(&a);
		return;
	}
	int n = a.nhits < b.nhits ? a.nhits : b.nhits, i = 0;
	while (i < n && a.hits[i].doc == b.hits[i].doc && a.hits[i].score == b.hits[i].score)
		i++;
	CHECK(a.nhits == (b.nhits < 10 ? b.nhits : 10) && i == n,
	      "'%s' (%s): the first ten of fifty differ from ten at hit %d (%d and %d hits)", q, engine, i,
	      a.nhits, b.nhits);
	atlas_results_free(&a);
	atlas_results_free(&b);
}

static atlas_engine *own;

/* Compares the held engine's and the postings table's engine's answers with FTS5's, and each
 * engine's first ten with its first ten of fifty. */
static void compare_all(atlas_engine *held, atlas_engine *fts, const char *q)
{
	compare(held, fts, q);
	compare(own, fts, q);
	same_first(held, q, "held");
	same_first(fts, q, "fts5");
	same_first(own, q, "table");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_postings INDEX QUERIES.tsv\n");
		return 2;
	}
	atlas_engine *held = NULL, *fts = NULL;
	atlas_error err = {0, ""};
	if (atlas_engine_open(&held, argv[1], &err) || atlas_engine_open(&fts, argv[1], &err) ||
	    atlas_engine_open(&own, argv[1], &err) || atlas_engine_hold_postings(held, &err) ||
	    atlas_engine_read_postings_table(own, &err)) {
		printf("FAIL  cannot open %s: %s\n", argv[1], err.msg);
		return 1;
	}
	CHECK(held->postings && !fts->postings && !own->postings && own->blockmax && !fts->blockmax,
	      "the first engine holds the index's postings, the others not; the third reads the "
	      "postings table");
	static const char *const written[] = {
	    "\"consistent hashing\"",
	    "cache -redis",
	    "\"leader election\" -zookeeper",
	    "raft NOT paxos",
	    "jax.numpy.einsum",
	    "jax.jit",
	    "tpu_lowering_rule",
	    "fan-out",
	    "fanout",
	    "k8s",
	    "kv cache",
	    "c++",
	    "x",
	    "ab",
	    "qu",
	    "shard* rebalanc",
	    "\"write ahead\" log",
	    "-cache",
	    "\"\"",
	    "**",
	    "the of and",
	    "consistent hashing ring virtual nodes rebalance membership gossip protocol "
	    "failure detector quorum read repair hinted handoff merkle tree anti entropy vector "
	    "clock",
	    "\"two phase commit\" -\"three phase\"",
	    "pallas_call grid",
	    "XLA HLO fusion",
	    "gradient chekpointing",
	    "databse sharding",
	    "vmap",
	    "transformr",
	    "\"a\"",
	    "rate limiter token bucket",
	    "b+ tree",
	    "p99 latency",
	    "python's GIL",
	    "GIL",
	};
	for (size_t i = 0; i < sizeof(written) / sizeof(*written); i++)
		compare_all(held, fts, written[i]);
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		printf("FAIL  cannot read %s\n", argv[2]);
		return 1;
	}
	char line[1024];
	int nq = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		line[strcspn(line, "\t\n")] = '\0';
		compare_all(held, fts, line);
		nq++;
		/* the last word as it is typed, letter by letter */
		char *last = strrchr(line, ' ');
		last = last ? last + 1 : line;
		size_t full = strlen(last);
		for (size_t k = 1; k < full; k++) {
			char saved = last[k];
			last[k] = '\0';
			compare_all(held, fts, line);
			last[k] = saved;
		}
	}
	fclose(f);
	atlas_engine_free(held);
	atlas_engine_free(fts);
	atlas_engine_free(own);
	printf("%d queries of the file\n", nq);
	return check_done("test_postings");
}
