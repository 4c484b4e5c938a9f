/* site_repeats.c - a built site's pages that repeat others: a page made of other pages whole,
 * left out, and the copies of one page, all but one leading to it; found from the hashes of the
 * pages' section texts. */
#include "site_internal.h"
#include "html_internal.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A section counts when its body holds at least REPEAT_MIN_BYTES; one found on more than
 * REPEAT_MAX_PAGES pages is boilerplate (a notice, a licence) and counts for none. */
#define REPEAT_MIN_BYTES 64
#define REPEAT_MAX_PAGES 32

/* A page made of other pages: the sections that at least COMPILATION_MIN_PARTS smaller pages (at
 * most half its text) each hold nearly whole (COMPILATION_PART_SHARE of their text) make up
 * COMPILATION_SHARE of its text, as Node.js's "all.html" or a single-page build beside the pages
 * is. */
#define COMPILATION_MIN_PARTS 3
#define COMPILATION_PART_SHARE 0.8
#define COMPILATION_SHARE 0.8

/* Copies: pages of the same section texts, at least COPY_MIN_BYTES of them, and of the same
 * title unless the text holds COPY_ANY_TITLE_BYTES (a short text under several titles may be a
 * placeholder each page names differently: "Coming soon"). */
#define COPY_MIN_BYTES 128
#define COPY_ANY_TITLE_BYTES 2048

/* Sets *slot, when still NULL, to the description fmt makes (malloc'd, owned by the corpus): the
 * first page of a kind named in the summary. Out of memory leaves it NULL. */
static void describe_first(char **slot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void describe_first(char **slot, const char *fmt, ...)
{
	if (*slot)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(*slot = malloc((size_t)n + 1)))
		return;
	va_start(ap, fmt);
	vsnprintf(*slot, (size_t)n + 1, fmt, ap);
	va_end(ap);
}

/**************************************************************************************************
** The pages' sections by hash.
*/

typedef struct sec_key {
	unsigned long long hash;
	int file;
	size_t len;
} sec_key;

typedef struct sections_index {
	sec_key *keys;      /* sorted by hash, then file */
	size_t n;
	size_t *total;      /* per file, the bytes of its counted sections */
	size_t *start, *at; /* per file f, its keys' positions in keys: at[start[f] .. start[f + 1]) */
} sections_index;

static int cmp_sec_key(const void *a, const void *b)
{
	const sec_key *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return (x->file > y->file) - (x->file < y->file);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Sets [*lo, *hi) to the run of sorted keys sharing keys[k]'s hash. */
static void hash_run(const sec_key *keys, size_t nkeys, size_t k, size_t *lo, size_t *hi)
{
	*lo = k;
	*hi = k + 1;
	while (*lo > 0 && keys[*lo - 1].hash == keys[k].hash)
		(*lo)--;
	while (*hi < nkeys && keys[*hi].hash == keys[k].hash)
		(*hi)++;
}

static void sections_index_free(sections_index *x)
{
	free(x->keys);
	free(x->total);
	free(x->start);
	free(x->at);
	memset(x, 0, sizeof(*x));
}

/* Fills x with the counted sections of s's pages. Returns 0, or ATLAS_ENOMEM with x emptied. */
static int sections_index_build(sections_index *x, const site *s)
{
	size_t cap = 0, nf = (size_t)s->nfiles + 1;
	memset(x, 0, sizeof(*x));
	x->total = calloc(nf, sizeof(size_t));
	x->start = calloc(nf, sizeof(size_t));
	if (!x->total || !x->start)
		goto oom;
	for (int i = 0; i < s->nfiles; i++) {
		const site_file *f = &s->files[i];
		if (!is_page_file(f) || !f->hp.text)
			continue;
		for (int k = 0; k < f->hp.nsecs; k++) {
			const char *body = f->hp.text + f->hp.secs[k].body_off;
			size_t len = strlen(body);
			if (len < REPEAT_MIN_BYTES)
				continue;
			if (x->n == cap) {
				size_t nc = cap ? cap * 2 : 1024;
				sec_key *nk = realloc(x->keys, nc * sizeof(*nk));
				if (!nk)
					goto oom;
				x->keys = nk;
				cap = nc;
			}
			x->keys[x->n++] = (sec_key){ fnv1a(14695981039346656037ULL, body, len), i, len };
			x->total[i] += len;
		}
	}
	if (x->n)
		qsort(x->keys, x->n, sizeof(*x->keys), cmp_sec_key);
	x->at = malloc((x->n ? x->n : 1) * sizeof(size_t));
	size_t *fill = calloc(nf, sizeof(size_t));
	if (!x->at || !fill) {
		free(fill);
		goto oom;
	}
	for (size_t k = 0; k < x->n; k++)
		x->start[x->keys[k].file + 1]++;
	for (int i = 0; i < s->nfiles; i++)
		x->start[i + 1] += x->start[i];
	for (size_t k = 0; k < x->n; k++) {
		int f = x->keys[k].file;
		x->at[x->start[f] + fill[f]++] = k;
	}
	free(fill);
	return 0;
oom:
	sections_index_free(x);
	return ATLAS_ENOMEM;
}

/**************************************************************************************************
** Pages made of other pages.
*/

/* Bytes of p's sections that a part of it holds, the parts being marked in others (pairs of file
 * and mark, sorted by file; a mark below 0 is a part). */
static size_t part_bytes(const sections_index *x, int p, const int *others, size_t nothers)
{
	size_t covered = 0;
	for (size_t j = x->start[p]; j < x->start[p + 1]; j++) {
		size_t k = x->at[j], lo, hi;
		hash_run(x->keys, x->n, k, &lo, &hi);
		if (hi - lo > REPEAT_MAX_PAGES)
			continue;
		bool in_part = false;
		for (size_t m = lo; m < hi && !in_part; m++)
			if (x->keys[m].file != p) {
				const int *hit = bsearch(&x->keys[m].file, others, nothers, 2 * sizeof(int), cmp_int);
				/* bsearch may land on any row of that page: all of its rows share the mark */
				in_part = hit && hit[1] < 0;
			}
		if (in_part)
			covered += x->keys[k].len;
	}
	return covered;
}

/* Leaves out the pages that repeat other pages whole (see COMPILATION_SHARE): each is marked
 * skip, as a page marked noindex is, and counted in c->compilations, the first described in
 * c->compilation_example (owned by the corpus), so that a search finds each text once, on its
 * own page. Not a warning: such a page is how the site is built, not a fault in it. Out of
 * memory leaves the pages not yet looked at in. */
static void find_compilations(site *s, const sections_index *x)
{
	int *others = NULL; /* pairs: another page holding one of p's sections, that section's bytes */
	size_t nothers = 0, capothers = 0;
	for (int p = 0; p < s->nfiles; p++) {
		if (x->start[p + 1] - x->start[p] < COMPILATION_MIN_PARTS)
			continue;
		/* the other pages holding each of p's sections, a page once per section */
		nothers = 0;
		for (size_t j = x->start[p]; j < x->start[p + 1]; j++) {
			size_t k = x->at[j], lo, hi;
			hash_run(x->keys, x->n, k, &lo, &hi);
			if (hi - lo > REPEAT_MAX_PAGES)
				continue;
			for (size_t m = lo; m < hi; m++) {
				if (x->keys[m].file == p || (m > lo && x->keys[m].file == x->keys[m - 1].file))
					continue;
				if (nothers == capothers) {
					size_t nc = capothers ? capothers * 2 : 256;
					int *no = realloc(others, nc * 2 * sizeof(int));
					if (!no)
						goto done;
					others = no;
					capothers = nc;
				}
				others[2 * nothers] = x->keys[m].file;
				others[2 * nothers + 1] = (int)x->keys[k].len;
				nothers++;
			}
		}
		if (nothers == 0)
			continue;
		/* each other page's bytes found in p; the parts: smaller pages held nearly whole */
		qsort(others, nothers, 2 * sizeof(int), cmp_int);
		int nparts = 0, example = -1;
		for (size_t j = 0; j < nothers;) {
			int o = others[2 * j];
			size_t held = 0, e = j;
			for (; e < nothers && others[2 * e] == o; e++)
				held += (size_t)others[2 * e + 1];
			if (held >= COMPILATION_PART_SHARE * (double)x->total[o] && 2 * x->total[o] <= x->total[p]) {
				nparts++;
				if (example < 0)
					example = o;
				for (size_t q = j; q < e; q++)
					others[2 * q + 1] = -1; /* mark: a part */
			}
			j = e;
		}
		if (nparts < COMPILATION_MIN_PARTS ||
		    part_bytes(x, p, others, nothers) < COMPILATION_SHARE * (double)x->total[p])
			continue;
		s->files[p].hp.skip = true;
		s->c->compilations++;
		describe_first(&s->c->compilation_example, "%s repeats %d pages, %s among them", s->files[p].rel,
			       nparts, s->files[example].rel);
	}
done:
	free(others);
}

/**************************************************************************************************
** Copies of one page.
*/

/* The length of the address of the file named rel: a folder's index page's is the folder's. */
static size_t address_len(const char *rel)
{
	size_t n = strlen(rel);
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	if (strcmp(base, "index.html") == 0 || strcmp(base, "index.htm") == 0)
		n = (size_t)(base - rel);
	return n;
}

/* Whether file i is kept before file j among copies: the one in the sitemap, else the one less
 * deep, else the one of the shorter address (a folder's index page before a named page), else
 * the first by name. */
static bool kept_before(const site *s, int i, int j)
{
	const site_file *f = &s->files[i], *g = &s->files[j];
	if (f->in_sitemap != g->in_sitemap)
		return f->in_sitemap;
	int df = 0, dg = 0;
	for (const char *c = f->rel; *c; c++)
		df += *c == '/';
	for (const char *c = g->rel; *c; c++)
		dg += *c == '/';
	if (df != dg)
		return df < dg;
	size_t lf = address_len(f->rel), lg = address_len(g->rel);
	if (lf != lg)
		return lf < lg;
	return strcmp(f->rel, g->rel) < 0;
}

/* A page's text digest: its section bodies in order, with the headings of all but its first
 * section (the first, like its title, may name where the page is: "Struct std::collections::
 * HashMap"); *len set to the bodies' bytes. */
static unsigned long long text_digest(const site_file *f, size_t *len)
{
	unsigned long long h = 14695981039346656037ULL;
	*len = 0;
	for (int k = 0; k < f->hp.nsecs; k++) {
		const char *body = f->hp.text + f->hp.secs[k].body_off, *head = f->hp.secs[k].heading;
		size_t n = strlen(body);
		if (k > 0)
			h = fnv1a(h, head ? head : "", head ? strlen(head) + 1 : 1);
		h = fnv1a(h, body, n + 1); /* with its NUL: where one body ends counts */
		*len += n;
	}
	return h;
}

typedef struct page_digest {
	unsigned long long h, title; /* the text's digest; the title's, or 0 when any title will do */
	int file;
} page_digest;

static int cmp_digest(const void *a, const void *b)
{
	const page_digest *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	if (x->title != y->title)
		return x->title < y->title ? -1 : 1;
	return (x->file > y->file) - (x->file < y->file);
}

/* Makes every copy of a page but one (pages of the same text_digest and title, see COPY_MIN_BYTES:
 * rustdoc's page of a re-exported item beside the item's own, mdBook's index.html beside the
 * first chapter) lead to the one kept_before the others, as a redirect does: it is no page, and a
 * link to it leads to the one kept. Counts them in c->copies, the first described in
 * c->copy_example (owned by the corpus). Out of memory leaves every page in. */
static void find_copies(site *s)
{
	page_digest *d = malloc(((size_t)s->nfiles + 1) * sizeof(*d));
	int n = 0;
	if (!d)
		return;
	for (int i = 0; i < s->nfiles; i++) {
		const site_file *f = &s->files[i];
		size_t len;
		if (!is_page_file(f) || !f->hp.text)
			continue;
		d[n].h = text_digest(f, &len);
		if (len < COPY_MIN_BYTES)
			continue;
		const char *t = f->hp.title ? f->hp.title : "";
		d[n].title = len >= COPY_ANY_TITLE_BYTES ? 0 : fnv1a(14695981039346656037ULL, t, strlen(t)) | 1;
		d[n++].file = i;
	}
	qsort(d, (size_t)n, sizeof(*d), cmp_digest);
	for (int j = 0; j < n;) {
		int e = j + 1, kept = d[j].file;
		for (; e < n && d[e].h == d[j].h && d[e].title == d[j].title; e++)
			if (kept_before(s, d[e].file, kept))
				kept = d[e].file;
		for (int m = j; m < e; m++) {
			int i = d[m].file;
			if (i == kept)
				continue;
			s->files[i].redirect_to = kept;
			s->c->copies++;
			describe_first(&s->c->copy_example, "%s, the same as %s", s->files[i].rel, s->files[kept].rel);
		}
		j = e;
	}
	free(d);
}

/**************************************************************************************************
** Lines on most pages.
*/

/* A line of a section's body (a block's text: a paragraph, a table's row, a line of code) of at
 * least two words, among a page's first or last BOILERPLATE_EDGE_LINES, that is so on
 * BOILERPLATE_SHARE of the site's pages, and on BOILERPLATE_MIN_PAGES
 * at least, is the site's chrome left inside the pages' content (Doxygen's header of project
 * links and its "Generated on ... by doxygen" footer, gtk-doc's "Home Up Prev Next" bar, a
 * theme's "« previous | up | next »", a "Last updated" line, a banner on every page): no words
 * of any page. */
#define BOILERPLATE_SHARE 0.5
#define BOILERPLATE_MIN_PAGES 5
/* A line on a page more often than this, on average over the pages holding it, is the pages' own
 * (a parameter's line in each of many signatures, "unsigned int flags);"); chrome is once a page,
 * or twice (a bar at the top and at the foot) */
#define BOILERPLATE_PER_PAGE 2
/* Chrome is at a page's top or its foot: its first and last lines this many */
#define BOILERPLATE_EDGE_LINES 8

/* The line at l (ended by '\n' or the NUL): its length into *n, its text without the spaces around
 * it [*a, *b) of l. Returns whether it could be chrome: two words at least. */
static bool line_at(const char *l, size_t *n, size_t *a, size_t *b)
{
	*n = strcspn(l, "\n");
	*a = 0;
	*b = *n;
	while (*a < *b && l[*a] == ' ')
		(*a)++;
	while (*b > *a && l[*b - 1] == ' ')
		(*b)--;
	return *b > *a && memchr(l + *a, ' ', *b - *a);
}

/* The lines of page hp's text (its sections' bodies, lines ended by '\n' or a body's NUL). */
static int count_lines(const html_page *hp)
{
	int lines = 0;
	for (int k = 0; k < hp->nsecs; k++)
		for (const char *l = hp->text + hp->secs[k].body_off; *l; lines++) {
			size_t n = strcspn(l, "\n");
			l += n + (l[n] == '\n');
		}
	return lines;
}

/* Whether line i of a page of total lines is where chrome is: BOILERPLATE_EDGE_LINES from its
 * start or its end. */
static bool at_edge(int i, int total)
{
	return i < BOILERPLATE_EDGE_LINES || i >= total - BOILERPLATE_EDGE_LINES;
}

/* Calls fn(ctx, line, n) for each line of page hp that could be chrome (line_at, at_edge). */
static void edge_lines(const html_page *hp, void (*fn)(void *, const char *, size_t), void *ctx)
{
	int total = count_lines(hp), i = 0;
	for (int k = 0; k < hp->nsecs; k++)
		for (const char *l = hp->text + hp->secs[k].body_off; *l; i++) {
			size_t n, a, b;
			if (line_at(l, &n, &a, &b) && at_edge(i, total))
				fn(ctx, l + a, b - a);
			l += n + (l[n] == '\n');
		}
}

/* The lines' keys (sec_key: a line's hash, its page; len unused) */
typedef struct line_keys {
	sec_key *k;
	size_t n, cap;
	int file;
	bool oom;
} line_keys;

static void add_line_key(void *ctx, const char *line, size_t n)
{
	line_keys *x = ctx;
	if (x->n == x->cap) {
		size_t nc = x->cap ? x->cap * 2 : 4096;
		sec_key *nk = realloc(x->k, nc * sizeof(*nk));
		if (!nk) {
			x->oom = true;
			return;
		}
		x->k = nk;
		x->cap = nc;
	}
	x->k[x->n++] = (sec_key){ fnv1a(14695981039346656037ULL, line, n), x->file, 0 };
}

static int cmp_hash(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return (x > y) - (x < y);
}

/* Whether the line line[0..n) (trimmed) is one of the sorted hashes chrome[0..nchrome). */
static bool is_chrome(const unsigned long long *chrome, size_t nchrome, const char *line, size_t n)
{
	unsigned long long h = fnv1a(14695981039346656037ULL, line, n);
	return bsearch(&h, chrome, nchrome, sizeof(*chrome), cmp_hash) != NULL;
}

/* Rewrites page hp's text without the lines of chrome, each section's body moved to its new place.
 * Returns the bytes taken out; out of memory leaves the text as it was. */
static size_t strip_chrome(html_page *hp, const unsigned long long *chrome, size_t nchrome)
{
	if (!hp->nsecs)
		return 0;
	char *out = malloc(hp->text_len + 1);
	if (!out)
		return 0;
	size_t o = 0;
	int total = count_lines(hp), i = 0;
	for (int k = 0; k < hp->nsecs; k++) {
		const char *l = hp->text + hp->secs[k].body_off;
		hp->secs[k].body_off = o;
		size_t start = o;
		for (; *l; i++) {
			size_t n, a, b;
			bool can = line_at(l, &n, &a, &b) && at_edge(i, total);
			if (!can || !is_chrome(chrome, nchrome, l + a, b - a)) {
				if (o > start)
					out[o++] = '\n';
				memcpy(out + o, l, n);
				o += n;
			}
			l += n + (l[n] == '\n');
		}
		out[o++] = '\0';
	}
	size_t taken = hp->text_len + 1 - o;
	free(hp->text);
	hp->text = out;
	hp->text_len = o - 1;
	if (hp->first_para && is_chrome(chrome, nchrome, hp->first_para, strlen(hp->first_para))) {
		free(hp->first_para);
		hp->first_para = NULL;
	}
	return taken;
}

void find_boilerplate(site *s)
{
	line_keys x = { NULL, 0, 0, 0, false };
	int pages = 0;
	for (int i = 0; i < s->nfiles && !x.oom; i++) {
		const site_file *f = &s->files[i];
		if (!is_page_file(f) || !f->hp.text)
			continue;
		pages++;
		x.file = i;
		edge_lines(&f->hp, add_line_key, &x);
	}
	if (x.oom || pages < BOILERPLATE_MIN_PAGES) {
		free(x.k);
		return;
	}
	qsort(x.k, x.n, sizeof(*x.k), cmp_sec_key);
	/* the hashes on enough pages (each page once), sorted */
	size_t nchrome = 0;
	unsigned long long *chrome = malloc((x.n ? x.n : 1) * sizeof(*chrome));
	if (!chrome) {
		free(x.k);
		return;
	}
	for (size_t j = 0; j < x.n;) {
		size_t e = j;
		int files = 0;
		for (; e < x.n && x.k[e].hash == x.k[j].hash; e++)
			files += e == j || x.k[e].file != x.k[e - 1].file;
		if (files >= BOILERPLATE_MIN_PAGES && files >= BOILERPLATE_SHARE * pages &&
		    e - j <= BOILERPLATE_PER_PAGE * (size_t)files)
			chrome[nchrome++] = x.k[j].hash;
		j = e;
	}
	for (int i = 0; i < s->nfiles && nchrome; i++) {
		site_file *f = &s->files[i];
		if (is_page_file(f) && f->hp.text && strip_chrome(&f->hp, chrome, nchrome))
			s->c->chrome_pages++;
	}
	s->c->chrome_lines = (int)nchrome;
	free(chrome);
	free(x.k);
}

void find_repeats(site *s)
{
	sections_index x;
	if (sections_index_build(&x, s) == 0) {
		find_compilations(s, &x);
		sections_index_free(&x);
	}
	find_copies(s);
}

/**************************************************************************************************
** Headings that name what they explain.
*/

#define CODE_HEADING_PAGES_MAX 3

void find_code_definitions(site *s)
{
	strmap pages = STRMAP_INIT;
	atlas_arena keys = ATLAS_ARENA_INIT(16384);
	pages.arena = &keys;
	bool oom = false;
	/* the pages each heading is in (a page counted once for a heading it repeats) */
	for (int i = 0; i < s->nfiles && !oom; i++) {
		const html_page *hp = &s->files[i].hp;
		if (!is_page_file(&s->files[i]))
			continue;
		for (int k = 0; k < hp->ncode_heads && !oom; k++) {
			bool again = false;
			for (int j = 0; j < k && !again; j++)
				again = strcmp(hp->code_heads[j], hp->code_heads[k]) == 0;
			if (again)
				continue;
			int added = 0;
			int *n = strmap_put(&pages, hp->code_heads[k], strlen(hp->code_heads[k]), 0, &added);
			if (!n)
				oom = true;
			else
				(*n)++;
		}
	}
	for (int i = 0; i < s->nfiles; i++) {
		html_page *hp = &s->files[i].hp;
		for (int k = 0; k < hp->ncode_heads && !oom; k++) {
			const int *n = strmap_get(&pages, hp->code_heads[k]);
			if (n && *n < CODE_HEADING_PAGES_MAX && is_page_file(&s->files[i]) &&
			    add_string(&hp->defs, &hp->ndefs, hp->code_heads[k]))
				break; /* out of memory: the page's other headings stay headings */
		}
		for (int k = 0; k < hp->ncode_heads; k++)
			free(hp->code_heads[k]);
		free(hp->code_heads);
		hp->code_heads = NULL;
		hp->ncode_heads = 0;
	}
	strmap_free(&pages);
	atlas_arena_free(&keys);
}
