/* main.c - atlas-index: validates a corpus or a built site and builds atlas.db from it, atomically. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer.h"
#include "build.h"
#include "corpus.h"
#include "keep.h"
#include "lint.h"
#include "site.h"

#ifndef ATLAS_VERSION
#define ATLAS_VERSION "0"
#endif

static const char usage[] =
	"usage: atlas-index --corpus DIR --out FILE [--check] [--strict] [--keep-going] [--quiet]\n"
	"                   [--fts-memory MIB]\n"
	"       atlas-index --site DIR --out FILE [--config FILE] [--check] [--strict] [--keep-going] ...\n"
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
	"  --keep-going   build even when some page files are invalid: each is built at its last\n"
	"                 good version, the one in the index FILE being replaced, or left out when\n"
	"                 that has none; each is reported with its error, and the index records them\n"
	"                 (atlas-serve's /healthz says \"degraded\"). Errors outside page files\n"
	"                 (sitemap, topics, synonyms, configuration) still stop the build\n"
	"  --quiet        print problems only, no summary\n"
	"  --fts-memory MIB\n"
	"                 memory for the full-text index's pending terms (1 to 4096; default an\n"
	"                 eighth of the corpus, at most 64;\n"
	"                 a quarter more for the important fields' index): less lowers the build's peak memory; a corpus of more than half of it is\n"
	"                 written in several parts and merged at the end\n"
	"  --help         show this help\n"
	"  --version      show the version\n"
	"\n"
	"Exit status: 0 built (or valid), 1 corpus, site or I/O error, 2 usage error, 3 built (or\n"
	"valid) with page files kept at their previous version or left out (--keep-going).\n";

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

/* The command line's choices; the strings point into argv. */
typedef struct index_args {
	const char *dir, *out, *site_dir, *config;
	int check, strict, quiet, keep_going, fts_memory;
} index_args;

/* Reads the command line into a (zeroed first). Returns -1 when the build is to go on, or the
 * exit status (0 after --help or --version, 2 after a usage error printed on stderr): -1 is not an
 * error code but "no exit status", as every status is 0 or more. */
static int parse_args(index_args *a, int argc, char **argv)
{
	memset(a, 0, sizeof(*a));
	static const struct option opts[] = {
		{ "corpus", required_argument, NULL, 'c' }, { "out", required_argument, NULL, 'o' },
		{ "check", no_argument, NULL, 'k' },        { "strict", no_argument, NULL, 's' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { "fts-memory", required_argument, NULL, 'm' },
		{ "site", required_argument, NULL, 'S' },   { "config", required_argument, NULL, 'C' },
		{ "keep-going", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': a->dir = optarg; break;
		case 'o': a->out = optarg; break;
		case 'S': a->site_dir = optarg; break;
		case 'C': a->config = optarg; break;
		case 'k': a->check = 1; break;
		case 's': a->strict = 1; break;
		case 'q': a->quiet = 1; break;
		case 'K': a->keep_going = 1; break;
		case 'm': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > BUILD_FTS_MEMORY_MIB_MAX) {
				fprintf(stderr, "atlas-index: --fts-memory must be a number from 1 to %d\n%s",
					BUILD_FTS_MEMORY_MIB_MAX, usage);
				return 2;
			}
			a->fts_memory = (int)v;
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
	if (a->dir && a->site_dir) {
		fprintf(stderr, "atlas-index: --corpus and --site cannot be given together\n%s", usage);
		return 2;
	}
	if (a->config && !a->site_dir) {
		fprintf(stderr, "atlas-index: --config goes with --site\n%s", usage);
		return 2;
	}
	if ((!a->dir && !a->site_dir) || (!a->out && !a->check)) {
		fprintf(stderr, "atlas-index: --corpus and --out are required (or --site and --out; --out may be left out with --check)\n%s", usage);
		return 2;
	}
	return -1;
}

/* Prints the build's summary on stdout: the counts in st, the corpus c's size and d's warnings,
 * the total and reading times in milliseconds. */
static void print_stats(const build_stats *st, const corpus *c, const diag_list *d, const char *out,
			const char *what, double total_ms, double t_read)
{
	printf("atlas-index: built %s (build %s)\n", out, st->build_id);
	printf("  pages       %d  (%d explainers, %d guides, %d topics, %d site pages)\n", c->npages,
	       st->pages[ATLAS_TYPE_EXPLAINER], st->pages[ATLAS_TYPE_GUIDE], st->pages[ATLAS_TYPE_TOPIC], st->pages[ATLAS_TYPE_PAGE]);
	printf("  sections    %d\n", st->sections);
	printf("  terms       %d distinct\n", st->terms);
	printf("  links       %d\n", st->links);
	printf("  guide steps %d\n", st->guide_steps);
	printf("  read next   %d candidates\n", st->candidates);
	if (c->redirects)
		printf("  redirects   %d  (left out; links to them lead to their targets)\n", c->redirects);
	if (c->search_pages)
		printf("  search      %d  (the page its pages name with rel=search, left out)\n", c->search_pages);
	if (c->error_pages)
		printf("  not found   %d  (404.html, the page for missing addresses, left out)\n", c->error_pages);
	if (c->compilations)
		printf("  repeats     %d  (pages made of other pages whole, left out as noindex pages are: %s)\n",
		       c->compilations, c->compilation_example ? c->compilation_example : "");
	if (c->chrome_lines)
		printf("  chrome      %d lines on most pages, taken out of %d pages\n", c->chrome_lines, c->chrome_pages);
	if (c->copies)
		printf("  copies      %d  (pages the same as another, left out; links to them lead to it: %s)\n",
		       c->copies, c->copy_example ? c->copy_example : "");
	printf("  warnings    %d\n", d->warnings);
	printf("  %-11s %.1f KiB, index %.1f KiB\n", what, c->bytes / 1024.0, st->index_bytes / 1024.0);
	printf("  time        %.0f ms (reading %.0f ms", total_ms, t_read);
	for (int i = 0; i < st->nphases; i++)
		printf(", %s %.0f ms", st->phase_name[i], st->phase_ms[i]);
	printf(")\n");
}

int main(int argc, char **argv)
{
	/* the corpus's vocabulary in the stem cache: with the default 4096 slots a quarter of the
	 * words of 1,000 generated explainers missed it, and Snowball stemming them was an eighth of
	 * the build's instructions; each of the build's four analyzers has one (400 KiB) */
	atlas_analyzer_set_stem_cache(8192);
	/* no allocation statistics: SQLite otherwise takes one process-wide mutex on every
	 * allocation and free to count them, and the full-text and read-next threads both allocate
	 * all the time */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* blocks of 128 KiB and more (the texts' blocks, hash tables, SQLite's and FTS5's buffers)
	 * mapped on their own and given back when freed: glibc's threshold otherwise grows with the
	 * first such block freed, and the build's peak with what it cannot give back */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	index_args args;
	int parsed = parse_args(&args, argc, argv);
	if (parsed >= 0)
		return parsed;
	const char *dir = args.dir, *out = args.out, *site_dir = args.site_dir, *config = args.config;
	int check = args.check, strict = args.strict, quiet = args.quiet, keep_going = args.keep_going;
	int fts_memory = args.fts_memory;
	double t0 = now_ms();
	diag_list d = { 0 };
	corpus c;
	keep_state k;
	keep_source src = { site_dir ? site_dir : dir, site_dir != NULL, config, strict };
	int valid = keep_load(&c, &src, keep_going, out ? out : "", &k, &d);
	const char *what = site_dir ? "site" : "corpus";
	if (site_dir)
		dir = site_dir;
	double t_read = now_ms() - t0;
	if (check && valid == 0)
		lint_corpus(&c, dir, &d);
	if (check && valid == 0 && d.errors > 0 && !k.n)
		valid = ATLAS_EINVAL;
	print_diags(&d);
	int status = 0;
	for (int i = 0; valid == 0 && i < k.n; i++)
		fprintf(stderr, "atlas-index: %s: %s (%s)\n", k.files[i].rel,
			k.files[i].kept ? "kept at its previous version" : "left out, no previous version",
			k.files[i].error);
	if (valid == 0 && k.n) {
		fprintf(stderr, "atlas-index: --keep-going: %d invalid page file%s set apart\n", k.n,
			k.n == 1 ? "" : "s");
		status = 3;
	}
	if (valid) {
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
	keep_install(&k);
	if (index_build(&st, &c, out, fts_memory, &err)) {
		fprintf(stderr, "atlas-index: %s\natlas-index: build failed; the previous index is untouched\n",
			err.msg);
		status = 1;
		goto done;
	}
	if (!quiet) {
		print_stats(&st, &c, &d, out, what, now_ms() - t0, t_read);
	}
done:
	keep_free(&k);
	corpus_free(&c);
	diag_list_free(&d);
	return status;
}
