/* main.c - atlas-query: the authors' command line over the search engine. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "json.h"
#include "report.h"
#include "strbuf.h"

#ifndef ATLAS_VERSION
#define ATLAS_VERSION "0"
#endif

static const char usage[] =
	"usage: atlas-query --index FILE [options] QUERY...\n"
	"       atlas-query --index FILE --next PATH [--guide SLUG] [--seen PATH,PATH...]\n"
	"       atlas-query --index FILE --suggest PREFIX\n"
	"       atlas-query --index FILE --stats\n"
	"       atlas-query --analytics FILE [--index FILE] [--since DAYS] [--json]\n"
	"       atlas-query --analytics FILE --prune [--since DAYS]\n"
	"\n"
	"Searches the Atlas index FILE and prints a table of results (or JSON with --json, exactly\n"
	"the body atlas-serve returns for the same request). Put -- before a query whose first word\n"
	"starts with '-' (an excluded word), e.g. atlas-query --index FILE -- -redis cache.\n"
	"\n"
	"  --index FILE     the index built by atlas-index\n"
	"  --json           print JSON instead of a table\n"
	"  --limit N        results per page, 1-50 (default 10; 5 for --next)\n"
	"  --offset N       results to skip, 0-1000\n"
	"  --type T         only pages of type T: explainer, guide, topic or page\n"
	"  --topic PATH     only pages in topic PATH (e.g. systems/caching) or below it\n"
	"  --explain        show per-field BM25, boosts, corrections, expansions and the work done\n"
	"  --budget P[,C[,E]] the work budget of a search: postings, candidates, expansions\n"
	"                   (default 400000,20000,20000, as atlas-serve's; postings\n"
	"                   400000 per 10000 pages on larger indexes)\n"
	"  --next PATH      read-next suggestions for the page at PATH\n"
	"  --guide SLUG     with --next: the guide the reader follows\n"
	"  --seen PATHS     with --next: comma-separated paths already read\n"
	"  --suggest PREFIX typeahead for PREFIX: the query completed, then titles (--limit 1-20)\n"
	"  --stats          page counts, vocabulary size, build id and time, corpus digest\n"
	"  --analytics FILE the analytics file of atlas-serve --analytics: top queries,\n"
	"                   zero-result queries (with the pages the --index suggests),\n"
	"                   queries with results but no clicks, click-through by rank\n"
	"  --since DAYS     with --analytics: the last DAYS days (default 30)\n"
	"  --prune          with --analytics: delete rows older than the retention the server\n"
	"                   recorded in the file (default 90 days), or than --since DAYS\n"
	"  --help           show this help\n"
	"  --version        show the version\n"
	"\n"
	"Exit status: 0 success (with or without results), 1 unusable index or unknown page,\n"
	"2 usage error.\n";

/* Reads s, a whole decimal number from -1000000 to 1000000, into *out. Returns 0, or ATLAS_EINVAL
 * (*out unchanged) for anything else; the caller writes the message. */
static int parse_int(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < -1000000 || v > 1000000)
		return ATLAS_EINVAL;
	*out = (int)v;
	return 0;
}

static void print_plain(const char *html, FILE *f)
{
	/* the table shows text, not HTML: drop tags, decode the entities the engine writes */
	static const struct { const char *ent, *ch; } ents[] = {
		{ "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" }, { "&#39;", "'" },
	};
	bool color = isatty(fileno(f)) && !getenv("NO_COLOR");
	for (const char *p = html; *p;) {
		if (strncmp(p, "<mark>", 6) == 0) {
			if (color)
				fputs("\033[1;33m", f);
			p += 6;
			continue;
		}
		if (strncmp(p, "</mark>", 7) == 0) {
			if (color)
				fputs("\033[0m", f);
			p += 7;
			continue;
		}
		if (*p == '&') {
			size_t k;
			for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++)
				if (strncmp(p, ents[k].ent, strlen(ents[k].ent)) == 0)
					break;
			if (k < sizeof(ents) / sizeof(ents[0])) {
				fputs(ents[k].ch, f);
				p += strlen(ents[k].ent);
				continue;
			}
		}
		fputc(*p == '\n' ? ' ' : *p, f);
		p++;
	}
}

static int run_stats(atlas_engine *e, bool json)
{
	const char *keys[] = { ATLAS_META_PAGES,
			       atlas_meta_pages_of_type[ATLAS_TYPE_EXPLAINER],
			       atlas_meta_pages_of_type[ATLAS_TYPE_GUIDE],
			       atlas_meta_pages_of_type[ATLAS_TYPE_TOPIC],
			       atlas_meta_pages_of_type[ATLAS_TYPE_PAGE],
			       ATLAS_META_SECTIONS,
			       ATLAS_META_LINKS,
			       ATLAS_META_GUIDE_STEPS,
			       ATLAS_META_TERMS,
			       ATLAS_META_BUILD_ID,
			       ATLAS_META_BUILT_AT,
			       ATLAS_META_CORPUS_DIGEST,
			       ATLAS_META_SCHEMA_VERSION };
	if (json)
		printf("{");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = atlas_engine_meta(e, keys[i]);
		if (json)
			printf("%s\"%s\":\"%s\"", i ? "," : "", keys[i], v ? v : "");
		else
			printf("%-16s %s\n", keys[i], v ? v : "");
	}
	if (json)
		printf(",\"vocabulary\":%d}\n", atlas_engine_vocab_size(e));
	else
		printf("%-16s %d\n", "vocabulary", atlas_engine_vocab_size(e));
	return 0;
}

/* --suggest: typeahead for prefix, at most limit (0: 10) suggestions. Returns the JSON body to print
 * (malloc'd; NULL when out of memory), or NULL having printed the table. */
static char *run_suggest(atlas_engine *e, const char *prefix, int limit, bool json)
{
	static atlas_suggestion s[ATLAS_SUGGEST_MAX];
	char *body = NULL;
	int max = limit ? limit : 10;
	int n = atlas_suggest(s, max > ATLAS_SUGGEST_MAX ? ATLAS_SUGGEST_MAX : max, e, prefix);
	if (json)
		body = atlas_json_suggest(e, prefix, s, n);
	else
		for (int i = 0; i < n; i++) {
			if (s[i].doc >= 0)
				printf("page  %s  %s\n", atlas_engine_doc(e, s[i].doc)->title,
				       atlas_engine_doc(e, s[i].doc)->path);
			else
				printf("query %s  (%d pages)\n", s[i].text, s[i].pages);
		}
	return body;
}

/* --next: read next for the page at path next, following guide, seen a comma-separated list of paths
 * read. Returns the JSON body to print (malloc'd), or NULL having printed the table or, setting
 * *status to 1, the error. */
static char *run_next(atlas_engine *e, const char *next, const char *guide, const char *seen, int limit, bool json,
		      int *status)
{
	atlas_error err = { 0, "" };
	char *body = NULL;
	const char *list[ATLAS_SEEN_MAX];
	char *copy = seen ? strdup(seen) : NULL;
	int nseen = atlas_next_seen_split(list, copy);
	atlas_next_params np = { next, guide, list, nseen, limit ? limit : 5 };
	atlas_next_results nr;
	if (atlas_next(&nr, e, &np, &err)) {
		fprintf(stderr, "atlas-query: %s\n", err.msg);
		*status = 1;
	} else {
		if (json)
			body = atlas_json_next(e, &nr);
		else
			for (int i = 0; i < nr.nitems; i++) {
				const atlas_doc *d = atlas_engine_doc(e, nr.items[i].doc);
				printf("%2d  %7.3f  %-9s %-44s %s\n", i + 1, nr.items[i].score, d->type, d->path, d->title);
				for (int k = 0; k < nr.items[i].nreasons; k++)
					printf("%24s- %s\n", "", nr.items[i].reasons[k]);
			}
		atlas_next_results_free(&nr);
	}
	free(copy);
	return body;
}

/* A search for sp (its q and offset set; limit 0: 10). Returns the JSON body to print (malloc'd), or
 * NULL having printed the table or, setting *status (2 for a bad parameter, else 1), the error. */
static char *run_search(atlas_engine *e, atlas_search_params *sp, int limit, bool json, int *status)
{
	atlas_error err = { 0, "" };
	char *body = NULL;
	sp->limit = limit ? limit : 10;
	atlas_results r;
	if (atlas_search(&r, e, sp, &err)) {
		fprintf(stderr, "atlas-query: %s\n", err.msg);
		*status = err.code == ATLAS_EINVAL ? 2 : 1;
	} else {
		if (json)
			body = atlas_json_search(e, &r);
		else {
			if (r.explain)
				printf("%s\n", r.explain);
			if (r.did_you_mean)
				printf("did you mean: %s\n", r.did_you_mean);
			printf("%s%d result%s (%.2f ms)\n", r.total_exact ? "" : "about ", r.total,
			       r.total == 1 ? "" : "s", r.took_ms);
			for (int i = 0; i < r.nhits; i++) {
				const atlas_doc *d = atlas_engine_doc(e, r.hits[i].doc);
				printf("%2d  %8.3f  %-9s %-44s %s\n    ", sp->offset + i + 1, r.hits[i].score,
				       d->type, d->path, d->title);
				print_plain(r.hits[i].snippet, stdout);
				printf("\n");
				for (int k = 0; k < r.hits[i].nsections; k++) {
					printf("      #%s  ", r.hits[i].sections[k].anchor);
					print_plain(r.hits[i].sections[k].heading, stdout);
					printf("\n");
				}
				if (r.hits[i].explain)
					printf("    %s\n", r.hits[i].explain);
			}
		}
		atlas_results_free(&r);
	}
	return body;
}

/* atlas-query --analytics: the report (or --prune). Returns the exit status. */
static int run_analytics(const char *file, const char *index, int since, bool json, bool prune)
{
	if (prune)
		return report_prune(file, since);
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	if (index && atlas_engine_open(&e, index, &err)) {
		fprintf(stderr, "atlas-query: %s\n", err.msg);
		return 1;
	}
	int status = report_run(stdout, file, since ? since : 30, json, e);
	atlas_engine_free(e);
	return status;
}

int main(int argc, char **argv)
{
	const char *index = NULL, *next = NULL, *guide = NULL, *seen = NULL, *suggest = NULL;
	atlas_search_params sp = { NULL, 0, 0, NULL, NULL, false, false };
	bool json = false, stats = false, prune = false;
	int limit = 0, since = 0;
	const char *analytics = NULL;
	static const struct option opts[] = {
		{ "index", required_argument, NULL, 'i' },   { "json", no_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'l' },   { "offset", required_argument, NULL, 'o' },
		{ "type", required_argument, NULL, 't' },    { "topic", required_argument, NULL, 'T' },
		{ "explain", no_argument, NULL, 'x' },       { "budget", required_argument, NULL, 'b' },       { "next", required_argument, NULL, 'n' },
		{ "guide", required_argument, NULL, 'g' },   { "seen", required_argument, NULL, 's' },
		{ "suggest", required_argument, NULL, 'S' }, { "stats", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },          { "version", no_argument, NULL, 'V' },
		{ "analytics", required_argument, NULL, 'A' }, { "since", required_argument, NULL, 'D' },
		{ "prune", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'i': index = optarg; break;
		case 'j': json = true; break;
		case 'l':
			if (parse_int(optarg, &limit) || limit < 1 || limit > ATLAS_LIMIT_MAX) {
				fprintf(stderr, "atlas-query: --limit must be a number from 1 to %d\n", ATLAS_LIMIT_MAX);
				return 2;
			}
			break;
		case 'o':
			if (parse_int(optarg, &sp.offset) || sp.offset < 0 || sp.offset > ATLAS_OFFSET_MAX) {
				fprintf(stderr, "atlas-query: --offset must be a number from 0 to %d\n", ATLAS_OFFSET_MAX);
				return 2;
			}
			break;
		case 't': sp.type = optarg; break;
		case 'T': sp.topic = optarg; break;
		case 'x': sp.explain = true; break;
		case 'b': {
			atlas_work w;
			if (atlas_parse_work_budget(optarg, &w)) {
				fprintf(stderr, "atlas-query: --budget must be POSTINGS[,CANDIDATES[,EXPANSIONS]], "
						"positive numbers\n");
				return 2;
			}
			atlas_set_work_budget(&w);
			break;
		}
		case 'n': next = optarg; break;
		case 'g': guide = optarg; break;
		case 's': seen = optarg; break;
		case 'S': suggest = optarg; break;
		case 'z': stats = true; break;
		case 'A': analytics = optarg; break;
		case 'P': prune = true; break;
		case 'D':
			if (parse_int(optarg, &since) || since < 1 || since > 36500) {
				fprintf(stderr, "atlas-query: --since must be a number of days from 1 to 36500\n");
				return 2;
			}
			break;
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("atlas-query %s\n", ATLAS_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (analytics)
		return run_analytics(analytics, index, since, json, prune);
	if (prune || since) {
		fprintf(stderr, "atlas-query: --prune and --since go with --analytics\n%s", usage);
		return 2;
	}
	if (!index) {
		fprintf(stderr, "atlas-query: --index is required\n%s", usage);
		return 2;
	}
	strbuf q = STRBUF_INIT;
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			strbuf_putc(&q, ' ');
		strbuf_puts(&q, argv[i]);
	}
	if (!next && !suggest && !stats && optind >= argc) {
		fprintf(stderr, "atlas-query: nothing to do: give a QUERY, --next, --suggest or --stats\n%s", usage);
		return 2;
	}
	if (sp.type && atlas_page_type_of(sp.type) == ATLAS_TYPE_OTHER) {
		fprintf(stderr, "atlas-query: --type must be explainer, guide, topic or page\n");
		return 2;
	}
	atlas_engine *e = NULL;
	atlas_error err = { 0, "" };
	if (atlas_engine_open(&e, index, &err)) {
		fprintf(stderr, "atlas-query: %s\n", err.msg);
		strbuf_free(&q);
		return 1;
	}
	int status = 0;
	char *body = NULL;
	if (stats) {
		status = run_stats(e, json);
	} else if (suggest) {
		body = run_suggest(e, suggest, limit, json);
	} else if (next) {
		body = run_next(e, next, guide, seen, limit, json, &status);
	} else {
		sp.q = strbuf_str(&q);
		body = run_search(e, &sp, limit, json, &status);
	}
	if (body) {
		printf("%s\n", body);
		free(body);
	}
	atlas_engine_free(e);
	strbuf_free(&q);
	return status;
}
