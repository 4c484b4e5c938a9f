/* lint.c - the authoring rules of corpus/README.md that atlas-index --check enforces beyond what
 * a build needs: front-matter fields, body conventions, titles, guides, topics, synonyms, copied
 * text, and the numeric rules a corpus states in its lint.json. */
#include "lint.h"
#include "error.h"

#include <expat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define SHINGLE_DEFAULT 0     /* no shared-text rule unless lint.json sets shared_run */
#define FIELD_GUESS_MAX 3     /* edits at most for "did you mean" */
#define SITEMAP_MAX (64 << 20)

/* The numeric rules of one page type; a bound of -1 is not checked. */
typedef struct type_rules {
	int words[2], sections[2], links_min, description[2], keywords[2], topics[2], prereqs[2];
	int steps_min;
} type_rules;

typedef struct lint_rules {
	type_rules t[4];              /* by page_type */
	int shared_run;               /* words; 0: not checked */
	bool leaf_topics_filled;      /* every leaf topic holds an explainer */
	bool titles;                  /* titles are checked against the sitemap's */
	char **suffixes;              /* sitemap title suffixes the front-matter title leaves out */
	int nsuffixes;
} lint_rules;

static const char *const known_fields[4][9] = {
	[ATLAS_TYPE_EXPLAINER] = { "title", "description", "lastmod", "priority", "image", "topics", "keywords",
			     "prerequisites", NULL },
	[ATLAS_TYPE_GUIDE] = { "title", "description", "lastmod", "priority", "image", "keywords", "sections", NULL },
	[ATLAS_TYPE_TOPIC] = { NULL },
	[ATLAS_TYPE_PAGE] = { "path", "title", "description", "lastmod", "priority", "image", "keywords", NULL },
};

/* Returns the edit distance of a and b, capped at cap + 1. */
int lint_distance(const char *a, const char *b, int cap)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return cap + 1;
	int row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int prev = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int best = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			prev = up;
		}
	}
	return row[lb] > cap ? cap + 1 : row[lb];
}

/* Reads a [lo, hi] pair (or a single minimum into lo) from o[key] into out. */
static void read_range(const cJSON *o, const char *key, int out[2])
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2) {
		out[0] = cJSON_GetArrayItem(v, 0)->valueint;
		out[1] = cJSON_GetArrayItem(v, 1)->valueint;
	}
}

/* Reads dir/lint.json into *r (defaults: nothing numeric checked). Returns 0, or ATLAS_EINVAL with
 * the problem in d when the file is there but not a rules object. */
static int read_rules(lint_rules *r, const char *dir, diag_list *d)
{
	memset(r, 0, sizeof(*r));
	for (int t = 0; t < 4; t++) {
		type_rules *tr = &r->t[t];
		int *all[] = { tr->words, tr->sections, tr->description, tr->keywords, tr->topics, tr->prereqs };
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			all[i][0] = all[i][1] = -1;
		tr->links_min = tr->steps_min = -1;
	}
	r->shared_run = SHINGLE_DEFAULT;
	char path[4096];
	snprintf(path, sizeof(path), "%s/lint.json", dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	cJSON *o = cJSON_Parse(buf);
	if (!cJSON_IsObject(o)) {
		diag_add(d, path, 1, DIAG_ERROR, "not a JSON object of rules");
		cJSON_Delete(o);
		return ATLAS_EINVAL;
	}
	for (int t = 0; t < 4; t++) {
		const cJSON *to = cJSON_GetObjectItemCaseSensitive(o, atlas_page_type_names[t]);
		type_rules *tr = &r->t[t];
		read_range(to, "words", tr->words);
		read_range(to, "sections", tr->sections);
		read_range(to, "description", tr->description);
		read_range(to, "keywords", tr->keywords);
		read_range(to, "topics", tr->topics);
		read_range(to, "prerequisites", tr->prereqs);
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(to, "links_min");
		tr->links_min = cJSON_IsNumber(v) ? v->valueint : -1;
		v = cJSON_GetObjectItemCaseSensitive(to, "steps_min");
		tr->steps_min = cJSON_IsNumber(v) ? v->valueint : -1;
	}
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "shared_run");
	r->shared_run = cJSON_IsNumber(v) ? v->valueint : 0;
	r->leaf_topics_filled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "leaf_topics_hold_explainers"));
	const cJSON *sx = cJSON_GetObjectItemCaseSensitive(o, "title_suffixes"), *it;
	r->titles = cJSON_IsArray(sx);
	r->suffixes = calloc((size_t)cJSON_GetArraySize(sx) + 1, sizeof(char *));
	cJSON_ArrayForEach(it, sx)
		if (cJSON_IsString(it) && r->suffixes)
			r->suffixes[r->nsuffixes++] = strdup(it->valuestring);
	cJSON_Delete(o);
	return 0;
}

/* Returns the 1-based line of the first occurrence of "key": in text, or 1. */
static int key_line(const char *text, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *at = strstr(text, pat);
	int line = 1;
	for (const char *p = text; at && p < at; p++)
		line += *p == '\n';
	return line;
}

/* Checks one Markdown page file's raw text: unknown front-matter fields (with the closest known
 * one), and a '#' heading or raw HTML in the body outside code. Returns the problems added. */
static int check_source(const page *p, const char *text, diag_list *d)
{
	int added = 0;
	const char *end = strstr(text, "\n}\n");
	if (!end && (end = strstr(text, "\n}")) && end[2])
		end = NULL;
	if (!end)
		return 0;
	cJSON *fm = cJSON_ParseWithLength(text, (size_t)(end - text) + 2);
	const cJSON *it;
	cJSON_ArrayForEach(it, fm) {
		const char *const *known = known_fields[p->type];
		bool ok = false;
		const char *best = NULL;
		int bestd = FIELD_GUESS_MAX + 1;
		for (int i = 0; known[i]; i++) {
			if (strcmp(known[i], it->string) == 0)
				ok = true;
			int dist = lint_distance(it->string, known[i], FIELD_GUESS_MAX);
			if (dist < bestd) {
				bestd = dist;
				best = known[i];
			}
		}
		if (ok)
			continue;
		if (best && bestd <= FIELD_GUESS_MAX)
			diag_add(d, p->file, key_line(text, it->string), DIAG_ERROR,
				 "unknown field '%s' (did you mean '%s'?)", it->string, best);
		else
			diag_add(d, p->file, key_line(text, it->string), DIAG_ERROR, "unknown field '%s'",
				 it->string);
		added++;
	}
	cJSON_Delete(fm);
	int line = 1;
	for (const char *q = text; q <= end; q++)
		line += *q == '\n';
	bool fence = false;
	for (const char *q = end + 2; *q; line++) {
		const char *nl = strchr(q, '\n');
		size_t len = nl ? (size_t)(nl - q) : strlen(q);
		if (len >= 3 && (strncmp(q, "```", 3) == 0 || strncmp(q, "~~~", 3) == 0))
			fence = !fence;
		else if (!fence && len >= 2 && q[0] == '#' && q[1] == ' ') {
			diag_add(d, p->file, line, DIAG_ERROR,
				 "a '#' heading in the body: the title comes from the front matter; use '##'");
			added++;
		} else if (!fence) {
			bool code = false;
			for (size_t i = 0; i < len; i++) {
				if (q[i] == '`')
					code = !code;
				else if (q[i] == '\\' && i + 1 < len)
					i++; /* an escaped character, '\\<' included, is text */
				else if (!code && q[i] == '<' && i + 1 < len &&
					 ((q[i + 1] >= 'a' && q[i + 1] <= 'z') || q[i + 1] == '/' || q[i + 1] == '!') &&
					 memchr(q + i, '>', len - i)) {
					diag_add(d, p->file, line, DIAG_ERROR, "raw HTML in the body: write Markdown");
					added++;
					break;
				}
			}
		}
		q += len + (nl ? 1 : 0);
		if (!nl)
			break;
	}
	return added;
}

/* Reports value outside [range[0], range[1]] (bounds of -1 unchecked). Returns 1 if reported. */
static int check_range(const page *p, int line, const int range[2], int value, const char *what,
		       diag_list *d)
{
	if ((range[0] >= 0 && value < range[0]) || (range[1] >= 0 && value > range[1])) {
		diag_add(d, p->file, line, DIAG_ERROR, "%s: %d (want %d-%d)", what, value, range[0],
			 range[1] >= 0 ? range[1] : value);
		return 1;
	}
	return 0;
}

/* Returns the UTF-8 characters of s. */
static int utf8_chars(const char *s)
{
	int n = 0;
	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Checks page p's shape against its type's numeric rules and its guide steps. */
static int check_shape(const corpus *c, const page *p, const type_rules *tr, const char *text,
		       int body_line, diag_list *d)
{
	int added = 0;
	added += check_range(p, body_line, tr->words, p->words, "body words", d);
	int h2 = 0;
	for (int i = 0; i < p->nsecs; i++)
		h2 += p->secs[i].level == 2;
	added += check_range(p, body_line, tr->sections, h2, "'##' sections", d);
	if (tr->links_min >= 0) {
		int distinct = 0;
		for (int i = 0; i < p->nlinks; i++) {
			const char *t = p->links[i].target;
			bool seen = strncmp(t, "/t/", 3) == 0 || strcmp(t, p->path) == 0;
			for (int k = 0; !seen && k < i; k++)
				seen = strcmp(p->links[k].target, t) == 0;
			distinct += !seen;
		}
		if (distinct < tr->links_min) {
			diag_add(d, p->file, body_line, DIAG_ERROR, "links to %d other pages (want at least %d)",
				 distinct, tr->links_min);
			added++;
		}
	}
	added += check_range(p, key_line(text, "description"), tr->description, utf8_chars(p->description),
			     "description characters", d);
	added += check_range(p, key_line(text, "keywords"), tr->keywords, p->nkeywords, "keywords", d);
	added += check_range(p, key_line(text, "topics"), tr->topics, p->ntopics, "topics", d);
	added += check_range(p, key_line(text, "prerequisites"), tr->prereqs, p->nprereqs, "prerequisites", d);
	int steps = 0;
	for (int s = 0; s < p->ngsecs; s++) {
		for (int i = 0; i < p->gsecs[s].nsteps; i++) {
			const char *slug = p->gsecs[s].steps[i];
			steps++;
			bool dup = false;
			for (int t = 0; t <= s && !dup; t++)
				for (int j = 0; j < (t == s ? i : p->gsecs[t].nsteps) && !dup; j++)
					dup = strcmp(p->gsecs[t].steps[j], slug) == 0;
			if (dup) {
				diag_add(d, p->file, key_line(text, slug), DIAG_ERROR,
					 "guide step '%s' appears twice (once per guide)", slug);
				added++;
			}
		}
	}
	if (tr->steps_min >= 0 && steps < tr->steps_min) {
		diag_add(d, p->file, key_line(text, "sections"), DIAG_ERROR, "guide has %d steps (want at least %d)",
			 steps, tr->steps_min);
		added++;
	}
	for (int i = 0; i < p->ntopics; i++) {
		int *ti = strmap_get(&c->topic_index, p->topics[i]);
		if (ti && !c->topics[*ti].parent) {
			diag_add(d, p->file, key_line(text, "topics"), DIAG_ERROR,
				 "topic '%s' is a top-level section: use a topic below it", p->topics[i]);
			added++;
		}
	}
	return added;
}

/* The sitemap's titles by path, read with expat. */
typedef struct sm_titles {
	const char *origin;          /* the site URL the locs start with */
	char loc[2048], title[1024];
	char *text;                  /* the element being read: loc or title, else NULL */
	size_t len, cap;
	char **paths, **titles;
	int *lines;
	int n, alloc;
	XML_Parser parser;
} sm_titles;

/* Returns the local part of an XML name (after any prefix). */
static const char *local(const char *name)
{
	const char *c = strrchr(name, ':');
	return c ? c + 1 : name;
}

static void XMLCALL sm_open(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	(void)attrs;
	sm_titles *s = ud;
	const char *l = local(name);
	if (strcmp(l, "url") == 0)
		s->loc[0] = s->title[0] = '\0';
	s->text = strcmp(l, "loc") == 0 && strchr(name, ':') == NULL ? s->loc
		: strcmp(l, "title") == 0 ? s->title : NULL;
	s->len = 0;
	s->cap = s->text == s->loc ? sizeof(s->loc) : sizeof(s->title);
}

static void XMLCALL sm_close(void *ud, const XML_Char *name)
{
	sm_titles *s = ud;
	s->text = NULL;
	if (strcmp(local(name), "url") || !s->loc[0] || !s->title[0])
		return;
	size_t ol = strlen(s->origin);
	if (strncmp(s->loc, s->origin, ol) != 0)
		return;
	if (s->n == s->alloc) {
		int cap = s->alloc ? s->alloc * 2 : 256;
		char **np = realloc(s->paths, (size_t)cap * sizeof(char *));
		if (np)
			s->paths = np;
		char **nt = np ? realloc(s->titles, (size_t)cap * sizeof(char *)) : NULL;
		if (nt)
			s->titles = nt;
		int *nl = nt ? realloc(s->lines, (size_t)cap * sizeof(int)) : NULL;
		if (!nl)
			return;
		s->lines = nl;
		s->alloc = cap;
	}
	s->paths[s->n] = strdup(s->loc[ol] ? s->loc + ol : "/");
	s->titles[s->n] = strdup(s->title);
	s->lines[s->n++] = (int)XML_GetCurrentLineNumber(s->parser);
}

static void XMLCALL sm_chars(void *ud, const XML_Char *t, int n)
{
	sm_titles *s = ud;
	if (!s->text)
		return;
	for (int i = 0; i < n && s->len + 1 < s->cap; i++)
		if (s->len || (t[i] != ' ' && t[i] != '\n' && t[i] != '\t'))
			s->text[s->len++] = t[i];
	s->text[s->len] = '\0';
}

/* Reads dir/sitemap.xml's image titles into *s. Missing or broken: none (the loader reports). */
static void read_titles(sm_titles *s, const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/sitemap.xml", dir);
	FILE *f = fopen(path, "rb");
	if (!f)
		return;
	s->parser = XML_ParserCreate(NULL);
	XML_SetUserData(s->parser, s);
	XML_SetElementHandler(s->parser, sm_open, sm_close);
	XML_SetCharacterDataHandler(s->parser, sm_chars);
	char buf[65536];
	size_t n;
	long total = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && total < SITEMAP_MAX) {
		total += (long)n;
		if (XML_Parse(s->parser, buf, (int)n, 0) != XML_STATUS_OK)
			break;
	}
	XML_Parse(s->parser, "", 0, 1);
	XML_ParserFree(s->parser);
	fclose(f);
}

/* Frees the titles. */
static void free_titles(sm_titles *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->paths[i]);
		free(s->titles[i]);
	}
	free(s->paths);
	free(s->titles);
	free(s->lines);
}

/* Checks p's title against the sitemap's title of its path, less one of the rules' suffixes (or
 * whole). Returns 1 when reported. */
static int check_title(const page *p, const sm_titles *s, const lint_rules *r, const char *text, diag_list *d)
{
	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->paths[i], p->path))
			continue;
		const char *want = s->titles[i];
		size_t tl = strlen(p->title);
		if (strcmp(want, p->title) == 0)
			return 0;
		for (int k = 0; k < r->nsuffixes; k++)
			if (strncmp(want, p->title, tl) == 0 && strcmp(want + tl, r->suffixes[k]) == 0)
				return 0;
		char shown[1024];
		snprintf(shown, sizeof(shown), "%s", want);
		for (int k = 0; k < r->nsuffixes; k++) {
			size_t wl = strlen(want), sl = strlen(r->suffixes[k]);
			if (wl > sl && strcmp(want + wl - sl, r->suffixes[k]) == 0) {
				shown[wl - sl] = '\0';
				break;
			}
		}
		diag_add(d, p->file, key_line(text, "title"), DIAG_ERROR,
			 "title '%s' differs from the sitemap's '%s'", p->title, shown);
		return 1;
	}
	return 0;
}

/* Checks the synonyms: terms lowercase, each in one group. Returns the problems added. */
static int check_synonyms(const corpus *c, const char *dir, diag_list *d)
{
	char file[4096];
	snprintf(file, sizeof(file), "%s/synonyms.json", dir);
	int added = 0;
	for (int g = 0; g < c->nsyn; g++) {
		for (char **t = c->syn_groups[g]; *t; t++) {
			for (int h = 0; h <= g; h++)
				for (char **u = c->syn_groups[h]; *u && (h < g || u < t); u++)
					if (strcmp(*u, *t) == 0) {
						diag_add(d, file, 1, DIAG_ERROR, "term '%s' is in more than one group", *t);
						added++;
					}
		}
	}
	return added;
}

/* Checks that every leaf topic holds an explainer. Returns the problems added. */
static int check_leaves(const corpus *c, const char *dir, diag_list *d)
{
	char file[4096];
	snprintf(file, sizeof(file), "%s/topics.json", dir);
	int added = 0;
	for (int t = 0; t < c->ntopics; t++) {
		bool leaf = true, held = false;
		for (int u = 0; u < c->ntopics && leaf; u++)
			leaf = !(c->topics[u].parent && strcmp(c->topics[u].parent, c->topics[t].path) == 0);
		for (int i = 0; leaf && !held && i < c->npages; i++)
			for (int k = 0; c->pages[i].type == ATLAS_TYPE_EXPLAINER && k < c->pages[i].ntopics; k++)
				held |= strcmp(c->pages[i].topics[k], c->topics[t].path) == 0;
		if (leaf && !held) {
			diag_add(d, file, c->topics[t].line, DIAG_ERROR, "leaf topic '%s' holds no explainer",
				 c->topics[t].path);
			added++;
		}
	}
	return added;
}

/* One window of run words: its hash and the page it was first seen in. */
typedef struct shingle {
	uint64_t h;
	int page;
} shingle;

/* Lowercases the words of p's sections (letters, digits and what joins them) into a word-hash
 * array. Returns it (malloc'd, *n words) or NULL. */
static uint64_t *page_words(const page *p, int *n)
{
	int cap = 1024, k = 0;
	uint64_t *w = malloc((size_t)cap * sizeof(*w));
	for (int s = 0; w && s < p->nsecs; s++) {
		const char *t = p->secs[s].body;
		for (size_t i = 0; t && t[i];) {
			while (t[i] && !((unsigned char)t[i] >= 0x80 || (t[i] >= '0' && t[i] <= '9') ||
					 ((t[i] | 32) >= 'a' && (t[i] | 32) <= 'z')))
				i++;
			if (!t[i])
				break;
			uint64_t h = 1469598103934665603ULL;
			while (t[i] && t[i] != ' ' && t[i] != '\n' && t[i] != '\t') {
				unsigned char ch = (unsigned char)t[i++];
				h = (h ^ (ch >= 'A' && ch <= 'Z' ? ch | 32 : ch)) * 1099511628211ULL;
			}
			if (k == cap) {
				uint64_t *nw = realloc(w, (size_t)(cap *= 2) * sizeof(*w));
				if (!nw) {
					free(w);
					return NULL;
				}
				w = nw;
			}
			w[k++] = h;
		}
	}
	*n = k;
	return w;
}

/* Reports each page sharing a run of run words with an earlier page (once a page). */
static int check_shared(const corpus *c, int run, diag_list *d)
{
	size_t cap = 1 << 16;
	shingle *tab = calloc(cap, sizeof(*tab));
	size_t used = 0;
	int added = 0;
	for (int i = 0; tab && i < c->npages; i++) {
		const page *p = &c->pages[i];
		if (p->type == ATLAS_TYPE_TOPIC)
			continue;
		int n = 0;
		uint64_t *w = page_words(p, &n);
		for (int k = 0; w && k + run <= n; k++) {
			uint64_t h = 14695981039346656037ULL;
			for (int j = 0; j < run; j++)
				h = (h ^ w[k + j]) * 1099511628211ULL;
			h |= 1;
			if (used * 2 >= cap) {
				size_t ncap = cap * 2;
				shingle *nt = calloc(ncap, sizeof(*nt));
				if (!nt)
					break;
				for (size_t q = 0; q < cap; q++)
					if (tab[q].h) {
						size_t at = tab[q].h & (ncap - 1);
						while (nt[at].h)
							at = (at + 1) & (ncap - 1);
						nt[at] = tab[q];
					}
				free(tab);
				tab = nt;
				cap = ncap;
			}
			size_t at = h & (cap - 1);
			while (tab[at].h && tab[at].h != h)
				at = (at + 1) & (cap - 1);
			if (!tab[at].h) {
				tab[at] = (shingle){ h, i };
				used++;
			} else if (tab[at].page != i) {
				diag_add(d, p->file, 1, DIAG_ERROR, "shares a run of %d words with %s", run,
					 c->pages[tab[at].page].file);
				added++;
				break;
			}
		}
		free(w);
	}
	free(tab);
	return added;
}

/* Runs every rule over c. Returns the problems added. */
int lint_corpus(const corpus *c, const char *dir, diag_list *d)
{
	lint_rules r;
	if (read_rules(&r, dir, d))
		return 1;
	sm_titles s = { .origin = c->site_url ? c->site_url : "" };
	read_titles(&s, dir);
	int added = 0;
	for (int i = 0; i < c->npages; i++) {
		const page *p = &c->pages[i];
		if (p->type == ATLAS_TYPE_TOPIC || !p->file)
			continue;
		FILE *f = fopen(p->file, "rb");
		static char text[1 << 20];
		size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
		if (f)
			fclose(f);
		text[n] = '\0';
		const char *end = strstr(text, "\n}\n");
		int body_line = 2;
		for (const char *q = text; end && q <= end + 1; q++)
			body_line += *q == '\n';
		bool md = strlen(p->file) > 3 && strcmp(p->file + strlen(p->file) - 3, ".md") == 0;
		if (md)
			added += check_source(p, text, d);
		added += check_shape(c, p, &r.t[p->type], text, body_line, d);
		if (r.titles)
			added += check_title(p, &s, &r, text, d);
	}
	added += check_synonyms(c, dir, d);
	if (r.leaf_topics_filled)
		added += check_leaves(c, dir, d);
	if (r.shared_run > 0)
		added += check_shared(c, r.shared_run, d);
	free_titles(&s);
	for (int i = 0; i < r.nsuffixes; i++)
		free(r.suffixes[i]);
	free(r.suffixes);
	return added;
}
