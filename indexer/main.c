/* main.c - atlas-index: validates a corpus or a built site and builds atlas.db from it, atomically. */
#include <errno.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer.h"
#include "build.h"
#include "corpus.h"
#include "site.h"

#ifndef ATLAS_VERSION
#define ATLAS_VERSION "0"
#endif

static const char usage[] =
	"usage: atlas-index --corpus DIR --out FILE [--check] [--strict] [--quiet] [--fts-memory MIB]\n"
	"       atlas-index --site DIR --out FILE [--config FILE] [--check] [--strict] [--quiet] ...\n"
	"\n"
	"Validates the corpus (or the built HTML site) in DIR and builds the search index FILE from\n"
	"it. The index is written to a temporary file beside FILE and renamed over it only when\n"
	"complete and checked, so a failed build leaves the previous index untouched.\n"
	"\n"
	"  --corpus DIR   corpus directory (explainers/, guides/, pages/, topics.json, ...)\n"
	"  --site DIR     a built site's folder of HTML pages (Hugo's public/, Sphinx's _build/html,\n"
	"                 MkDocs' site/, DocBook output), with its sitemap.xml when it has one\n"
	"  --config FILE  the site's configuration (JSON; default DIR/atlas.json when present)\n"
	"  --out FILE     index to write\n"
	"  --check        validate only; write nothing\n"
	"  --strict       treat warnings (broken links, sitemap differences, pages without a title\n"
	"                 or content, ...) as errors\n"
	"  --quiet        print problems only, no summary\n"
	"  --fts-memory MIB\n"
	"                 memory for the full-text index's pending terms (default 64, 1 to 4096;\n"
	"                 a quarter more for the important fields' index): less lowers the build's peak memory; a corpus of more than half of it is\n"
	"                 written in several parts and merged at the end\n"
	"  --help         show this help\n"
	"  --version      show the version\n"
	"\n"
	"Exit status: 0 built (or valid), 1 corpus, site or I/O error, 2 usage error.\n";

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void print_diags(const diag_list *d)
{
	for (int i = 0; i < d->n; i++)
		fprintf(stderr, "%s:%d: %s: %s\n", d->items[i].file, d->items[i].line,
			d->items[i].severity == DIAG_ERROR ? "error" : "warning", d->items[i].msg);
}

int main(int argc, char **argv)
{
	/* the corpus's vocabulary in the stem cache: with the default 4096 slots a quarter of the
	 * words of 1,000 generated explainers missed it, and Snowball stemming them was an eighth of
	 * the build's instructions */
	atlas_analyzer_set_stem_cache(32768);
	/* no allocation statistics: SQLite otherwise takes one process-wide mutex on every
	 * allocation and free to count them, and the full-text and read-next threads both allocate
	 * all the time */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	const char *dir = NULL, *out = NULL, *site_dir = NULL, *config = NULL;
	int check = 0, strict = 0, quiet = 0, fts_memory = BUILD_FTS_MEMORY_MIB;
	static const struct option opts[] = {
		{ "corpus", required_argument, NULL, 'c' }, { "out", required_argument, NULL, 'o' },
		{ "check", no_argument, NULL, 'k' },        { "strict", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { "fts-memory", required_argument, NULL, 'm' },
		{ "site", required_argument, NULL, 'S' },   { "config", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': dir = optarg; break;
		case 'o': out = optarg; break;
		case 'S': site_dir = optarg; break;
		case 'C': config = optarg; break;
		case 'k': check = 1; break;
		case 's': strict = 1; break;
		case 'q': quiet = 1; break;
		case 'm': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > BUILD_FTS_MEMORY_MIB_MAX) {
				fprintf(stderr, "atlas-index: --fts-memory must be a number from 1 to %d\n%s",
					BUILD_FTS_MEMORY_MIB_MAX, usage);
				return 2;
			}
			fts_memory = (int)v;
			break;
		}
		case 'h': fputs(usage, stdout); return 0;
		case 'V': printf("atlas-index %s\n", ATLAS_VERSION); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "atlas-index: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	if (dir && site_dir) {
		fprintf(stderr, "atlas-index: --corpus and --site cannot be given together\n%s", usage);
		return 2;
	}
	if (config && !site_dir) {
		fprintf(stderr, "atlas-index: --config goes with --site\n%s", usage);
		return 2;
	}
	if ((!dir && !site_dir) || (!out && !check)) {
		fprintf(stderr, "atlas-index: --corpus and --out are required (or --site and --out; --out may be left out with --check)\n%s", usage);
		return 2;
	}
	double t0 = now_ms();
	diag_list d = { 0 };
	corpus c;
	if (site_dir)
		site_load(&c, site_dir, config, strict, &d);
	else
		corpus_load(&c, dir, strict, &d);
	const char *what = site_dir ? "site" : "corpus";
	if (site_dir)
		dir = site_dir;
	double t_read = now_ms() - t0;
	print_diags(&d);
	int status = 0;
	if (d.errors) {
		fprintf(stderr, "atlas-index: %d error%s, %d warning%s; %s\n", d.errors, d.errors == 1 ? "" : "s",
			d.warnings, d.warnings == 1 ? "" : "s",
			check ? (site_dir ? "the site is not valid" : "the corpus is not valid")
			      : "no index written, the previous one is untouched");
		status = 1;
		goto done;
	}
	if (check) {
		if (!quiet)
			printf("%s %s: valid, %d pages, %d warning%s (%.0f ms)\n", what, dir, c.npages, d.warnings,
			       d.warnings == 1 ? "" : "s", now_ms() - t0);
		goto done;
	}
	build_stats st;
	atlas_error err = { 0, "" };
	if (index_build(&st, &c, out, fts_memory, &err)) {
		fprintf(stderr, "atlas-index: %s\natlas-index: build failed; the previous index is untouched\n",
			err.msg);
		status = 1;
		goto done;
	}
	if (!quiet) {
		printf("atlas-index: built %s (build %s)\n", out, st.build_id);
		printf("  pages       %d  (%d explainers, %d guides, %d topics, %d site pages)\n", c.npages,
		       st.pages[ATLAS_TYPE_EXPLAINER], st.pages[ATLAS_TYPE_GUIDE], st.pages[ATLAS_TYPE_TOPIC], st.pages[ATLAS_TYPE_PAGE]);
		printf("  sections    %d\n", st.sections);
		printf("  terms       %d distinct\n", st.terms);
		printf("  links       %d\n", st.links);
		printf("  guide steps %d\n", st.guide_steps);
		printf("  read next   %d candidates\n", st.candidates);
		printf("  warnings    %d\n", d.warnings);
		printf("  %-11s %.1f KiB, index %.1f KiB\n", what, c.bytes / 1024.0, st.index_bytes / 1024.0);
		printf("  time        %.0f ms (reading %.0f ms", now_ms() - t0, t_read);
		for (int i = 0; i < st.nphases; i++)
			printf(", %s %.0f ms", st.phase_name[i], st.phase_ms[i]);
		printf(")\n");
	}
done:
	corpus_free(&c);
	diag_list_free(&d);
	return status;
}
