/* site_pages.c - a built site's pages: the title affix every page repeats, each HTML file made a
 * page, its links resolved to pages. */
#include "site_internal.h"
#include "error.h"
#include "anchor.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/**************************************************************************************************
** Titles.
*/

static const char *const title_seps[] = { " — ", " – ", " - ", " | ", " · ", " :: ", " » ", " : ", ": " };
#define NSEPS (int)(sizeof(title_seps) / sizeof(title_seps[0]))

/* Where the parenthesized group that ends title t begins, the space before its '(' included
 * (parentheses nested within it matched); NULL when t does not end with one after other text. */
static const char *paren_tail(const char *t)
{
	size_t n = strlen(t);
	if (n < 4 || t[n - 1] != ')')
		return NULL;
	int depth = 0;
	for (size_t i = n; i-- > 0;) {
		if (t[i] == ')')
			depth++;
		else if (t[i] == '(' && --depth == 0)
			return i >= 2 && t[i - 1] == ' ' ? t + i - 1 : NULL;
	}
	return NULL;
}

/* Finds the part of the title most pages repeat, after (suffix) or before (prefix) a separator,
 * or in parentheses at its end: " — Sphinx documentation", "MkDocs - ", "SDL: ", " (GNU Octave)". Kept
 * only when at least half of the titled pages (and two of them) carry it. */
void find_title_affix(site *s)
{
	strmap counts = STRMAP_INIT;
	int titled = 0;
	for (int i = 0; i < s->nfiles; i++) {
		const site_file *f = &s->files[i];
		const char *t = f->ok && f->redirect_to == -2 ? f->hp.title : NULL;
		if (!t)
			continue;
		titled++;
		for (int k = 0; k < NSEPS; k++) {
			const char *sep = title_seps[k];
			size_t sl = strlen(sep);
			/* every separator: the last for suffixes, the first for prefixes */
			const char *last = NULL, *first = strstr(t, sep);
			for (const char *p = first; p; p = strstr(p + 1, sep))
				last = p;
			char key[600];
			if (last && last > t) {
				snprintf(key, sizeof(key), "S%s", last);
				int *v = strmap_put(&counts, key, strlen(key), 0, NULL);
				if (v)
					(*v)++;
			}
			if (first && first[sl]) {
				snprintf(key, sizeof(key), "P%.*s", (int)(first - t + (long)sl), t);
				int *v = strmap_put(&counts, key, strlen(key), 0, NULL);
				if (v)
					(*v)++;
			}
		}
		/* the manual's name in parentheses after the page's, as Texinfo writes every title:
		 * "The while Statement (GNU Octave (version 7.3.0))" */
		const char *open = paren_tail(t);
		if (open) {
			char key[600];
			snprintf(key, sizeof(key), "S%s", open);
			int *v = strmap_put(&counts, key, strlen(key), 0, NULL);
			if (v)
				(*v)++;
		}
	}
	const char *best = NULL;
	int bestn = 0;
	for (size_t i = 0; i < counts.cap; i++) {
		const strmap_entry *e = &counts.slots[i];
		if (e->key && (e->value > bestn || (e->value == bestn && best && strcmp(e->key, best) < 0))) {
			best = e->key;
			bestn = e->value;
		}
	}
	if (best && bestn >= 2 && bestn * 2 >= titled) {
		if (best[0] == 'S')
			s->suffix = strdup(best + 1);
		else
			s->prefix = strdup(best + 1);
	}
	strmap_free(&counts);
}

/* The page's title with the site's repeated part taken off (malloc'd), else the og:title, else the
 * first h1; NULL when it has none. */
/* t without the part most of the site's titles repeat (s->suffix, s->prefix) and the
 * spaces before its end; t itself when that would leave nothing. Returns a malloc'd string, or
 * NULL when out of memory. */
static char *without_affix(const site *s, const char *t)
{
	const char *whole = t;
	size_t n = strlen(t);
	if (s->suffix) {
		size_t sl = strlen(s->suffix);
		if (n > sl && strcmp(t + n - sl, s->suffix) == 0)
			n -= sl;
	}
	if (s->prefix) {
		size_t pl = strlen(s->prefix);
		if (n > pl && strncmp(t, s->prefix, pl) == 0) {
			t += pl;
			n -= pl;
		}
	}
	while (n && t[n - 1] == ' ')
		n--;
	if (!n)
		return strdup(whole);
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, t, n);
		r[n] = '\0';
	}
	return r;
}

static char *clean_title(const site *s, const html_page *hp)
{
	if (hp->title && *hp->title)
		return without_affix(s, hp->title);
	if (hp->og_title)
		return strdup(hp->og_title);
	/* no title named: the one the page shows, its first h1, element of class "title" (Doxygen's
	 * div.title), or heading of another level */
	const char *shown[] = { hp->h1, hp->titled, hp->heading };
	for (size_t k = 0; k < sizeof(shown) / sizeof(*shown); k++)
		if (shown[k] && *shown[k])
			return strdup(shown[k]);
	return NULL;
}

/* The first paragraph cut at a word before DESCRIPTION_MAX bytes (malloc'd), or "". */
static char *short_description(const char *para)
{
	if (!para)
		return strdup("");
	size_t n = strlen(para);
	if (n <= DESCRIPTION_MAX)
		return strdup(para);
	size_t cut = DESCRIPTION_MAX;
	while (cut > 0 && para[cut] != ' ')
		cut--;
	if (!cut)
		cut = DESCRIPTION_MAX;
	while (cut > 0 && ((unsigned char)para[cut] & 0xc0) == 0x80)
		cut--;
	char *r = malloc(cut + 4);
	if (r) {
		memcpy(r, para, cut);
		memcpy(r + cut, "…", 4);
	}
	return r;
}

/**************************************************************************************************
** Pages.
*/

/* Splits the comma-separated keywords into *out. */
static void split_keywords(const char *kw, char ***out, int *n)
{
	*out = NULL;
	*n = 0;
	if (!kw)
		return;
	int cap = 1;
	for (const char *p = kw; *p; p++)
		cap += *p == ',';
	*out = calloc((size_t)cap, sizeof(char *));
	if (!*out)
		return;
	const char *p = kw;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *b = p;
		while (*p && *p != ',')
			p++;
		const char *e = p;
		while (e > b && e[-1] == ' ')
			e--;
		if (e > b && *n < cap) {
			char *k = malloc((size_t)(e - b) + 1);
			if (k) {
				memcpy(k, b, (size_t)(e - b));
				k[e - b] = '\0';
				(*out)[(*n)++] = k;
			}
		}
	}
}

/* Makes the corpus page of file fi (its path set, its HTML read): the lead (description, then
 * the text before the first heading), one section a heading with the page's own anchor. Returns
 * 0 or ATLAS_ENOMEM when out of memory. */
int make_page(site *s, int fi, page *p)
{
	site_file *f = &s->files[fi];
	html_page *hp = &f->hp;
	memset(p, 0, sizeof(*p));
	p->file = strdup(f->file);
	p->path = f->path;
	f->path = NULL;
	p->type = ATLAS_TYPE_EXPLAINER;
	p->title = clean_title(s, hp);
	if (!p->title) {
		diag_add(s->d, f->file, hp->title_line ? hp->title_line : 1, warn_sev(s), "page has no title");
		const char *base = strrchr(f->rel, '/');
		p->title = strdup(base ? base + 1 : f->rel);
	}
	/* a description that repeats the site's name as the titles do (Texinfo's "Start Conditions
	 * (Lexical Analysis With Flex, for Flex 2.6.4)") without it */
	p->description = hp->description ? without_affix(s, hp->description) : short_description(hp->first_para);
	p->lastmod = strdup(f->lastmod ? f->lastmod : hp->modified ? hp->modified : "");
	if (p->lastmod && strlen(p->lastmod) > 10 && p->lastmod[4] == '-' && p->lastmod[10] == 'T')
		p->lastmod[10] = '\0'; /* the date of a timestamp */
	p->image = strdup(f->image ? f->image : hp->image ? hp->image : "");
	p->priority = f->priority ? atof(f->priority) : 0.5;
	split_keywords(hp->keywords, &p->keywords, &p->nkeywords);
	p->defs = hp->defs;
	p->ndefs = hp->ndefs;
	hp->defs = NULL;
	hp->ndefs = 0;
	if (!p->file || !p->title || !p->description || !p->lastmod || !p->image)
		return ATLAS_ENOMEM;
	/* the text: the description and a newline before the lead's own body */
	size_t dl = strlen(p->description);
	p->text_len = dl + 1 + hp->text_len;
	p->text = malloc(p->text_len + 1);
	p->secs = calloc((size_t)hp->nsecs, sizeof(section));
	if (!p->text || !p->secs)
		return ATLAS_ENOMEM;
	memcpy(p->text, p->description, dl);
	p->text[dl] = '\n';
	memcpy(p->text + dl + 1, hp->text, hp->text_len + 1);
	if (!hp->description && hp->first_para && strcmp(p->description, hp->first_para) == 0) {
		/* the description is the lead's first paragraph: not kept twice */
		char *lead = p->text + dl + 1, *at = strstr(lead, hp->first_para);
		size_t fl = strlen(hp->first_para);
		if (at) {
			if (at[fl] == '\n')
				fl++;
			memmove(at, at + fl, p->text_len + 1 - (size_t)(at + fl - p->text));
			p->text_len -= fl;
			for (int i = 1; i < hp->nsecs; i++)
				hp->secs[i].body_off -= fl;
		}
	}
	p->lead_len = dl + 1;
	size_t len = p->text_len;
	strmap anchors = STRMAP_INIT;
	p->nsecs = hp->nsecs;
	for (int i = 0; i < hp->nsecs; i++) {
		const html_sec *h = &hp->secs[i];
		section *x = &p->secs[i];
		x->level = i ? h->level : 0;
		x->heading = strdup(i ? h->heading : p->title);
		x->body_off = i ? dl + 1 + h->body_off : 0;
		if (!i)
			x->anchor = strdup("");
		else if (h->anchor) {
			x->anchor = strdup(h->anchor);
		} else {
			strbuf a = STRBUF_INIT;
			anchor_of(&a, h->heading);
			int added = 0;
			int *cnt = strmap_put(&anchors, strbuf_str(&a), a.len, 0, &added);
			if (cnt && !added)
				strbuf_printf(&a, "-%d", ++*cnt);
			x->anchor = strbuf_detach(&a);
			if (!x->anchor)
				x->anchor = strdup("");
		}
		if (!x->heading || !x->anchor) {
			strmap_free(&anchors);
			return ATLAS_ENOMEM;
		}
	}
	strmap_free(&anchors);
	for (int i = p->nsecs - 1; i >= 0; i--) {
		section *x = &p->secs[i];
		x->body = p->text + x->body_off;
		x->body_len = len - x->body_off;
		len = x->body_off ? x->body_off - 1 : 0;
	}
	p->words = hp->words;
	free(hp->text);
	hp->text = NULL;
	return 0;
}

/* Adds a link of page p to target (a page's path). A page may link to another more than once, as
 * a corpus page may: the index keeps one edge. */
static void add_link(page *p, const char *target, const char *anchor, const char *text, int line, bool listed)
{
	page_link *l = p->links;
	/* grown by doubling: the capacity is the power of two at or above nlinks */
	if ((p->nlinks & (p->nlinks - 1)) == 0 &&
	    !(l = realloc(p->links, (size_t)(p->nlinks ? p->nlinks * 2 : 1) * sizeof(*l))))
		return;
	p->links = l;
	l[p->nlinks].target = strdup(target);
	l[p->nlinks].text = strdup(text ? text : "");
	l[p->nlinks].anchor = strdup(anchor);
	l[p->nlinks].line = line;
	l[p->nlinks].listed = listed;
	if (l[p->nlinks].target && l[p->nlinks].text && l[p->nlinks].anchor)
		p->nlinks++;
	else {
		free(l[p->nlinks].target);
		free(l[p->nlinks].text);
		free(l[p->nlinks].anchor);
	}
}

/* Makes each page's link edges (fragments kept) from its links; a link to a missing page, or to an
 * anchor its target does not have, is a warning naming the file and line. */
void resolve_links(site *s)
{
	corpus *c = s->c;
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		page *p = &c->pages[f->page];
		for (int k = 0; k < f->hp.nlinks; k++) {
			const html_ref *r = &f->hp.links[k];
			bool exists;
			char frag[1024];
			int t = target_of(s, fi, r->href, &exists, frag, sizeof(frag));
			if (t >= 0) {
				if (!html_has_anchor(&s->files[t].hp, frag))
					diag_add(s->d, f->file, r->line, warn_sev(s), "link to missing anchor #%s of %s", frag,
						 c->pages[s->files[t].page].path);
				if (t != fi)
					add_link(p, c->pages[s->files[t].page].path, frag, r->text, r->line, r->listed);
			} else if (!exists) {
				diag_add(s->d, f->file, r->line, warn_sev(s), "link to missing page %s", r->href);
			}
		}
		for (int k = 0; k < f->hp.nbad_frags; k++)
			diag_add(s->d, f->file, f->hp.bad_frags[k].line, warn_sev(s), "link to missing anchor %s of %s",
				 f->hp.bad_frags[k].href, p->path);
	}
}

