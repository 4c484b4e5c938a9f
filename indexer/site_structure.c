/* site_structure.c - what only a built site's whole set of pages tells: parent pages, the
 * topics and guides they make, page types. */
#include "site_internal.h"
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
** Parents, topics, guides, types.
*/

static bool is_root(const site_file *f)
{
	return strcmp(f->rel, "index.html") == 0 || strcmp(f->rel, "index.htm") == 0;
}

/* The index page of the folder above file fi (its own folder's for a page that is not an index
 * page), or -1 when there is none (not an error code). */
static int folder_parent(const site *s, int fi)
{
	char d[4096];
	snprintf(d, sizeof(d), "%s", s->files[fi].rel);
	char *last = strrchr(d, '/');
	const char *name = last ? last + 1 : d;
	bool index = strncmp(name, "index.", 6) == 0;
	if (!last) {
		if (index)
			return -1;
		d[0] = '\0';
	} else
		last[1] = '\0';
	for (int guard = 0; guard < 64; guard++) {
		size_t n = strlen(d);
		if (index) {
			/* up one folder */
			if (!n)
				return -1;
			d[n - 1] = '\0';
			char *up = strrchr(d, '/');
			if (up)
				up[1] = '\0';
			else
				d[0] = '\0';
		}
		index = true;
		char t[4200];
		snprintf(t, sizeof(t), "%sindex.html", d);
		int *i = strmap_get(&s->by_rel, t);
		if (!i) {
			snprintf(t, sizeof(t), "%sindex.htm", d);
			i = strmap_get(&s->by_rel, t);
		}
		if (i && *i != fi && s->files[*i].page >= 0)
			return *i;
		if (!d[0])
			return -1;
	}
	return -1;
}

void find_parents(site *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		bool exists;
		int par = -1;
		if (f->hp.up)
			par = target_of(s, fi, f->hp.up, &exists, NULL, 0);
		for (int k = f->hp.ncrumbs - 1; (par < 0 || par == fi) && k >= 0; k--)
			par = target_of(s, fi, f->hp.crumbs[k].href, &exists, NULL, 0);
		if (par < 0 || par == fi)
			par = folder_parent(s, fi);
		f->parent = par == fi ? -1 : par;
		if (f->hp.next) {
			int nx = target_of(s, fi, f->hp.next, &exists, NULL, 0);
			f->next = nx == fi ? -1 : nx;
		}
	}
	/* a parent chain that comes back to itself is cut where it does */
	for (int fi = 0; fi < s->nfiles; fi++) {
		int at = s->files[fi].parent;
		for (int depth = 0; at >= 0; depth++) {
			if (at == fi || depth > 64) {
				s->files[fi].parent = -1;
				break;
			}
			at = s->files[at].parent;
		}
	}
}

/* The topic path of a page: its path below the site (below topic_root when it is there) without
 * index.html, .html and slashes ("usage/index.html" -> "usage"), written into out; "" for the
 * top. */
static void topic_path(const site *s, const site_file *f, char *out, size_t n)
{
	const char *root = s->cfg.topic_root ? s->cfg.topic_root : "";
	size_t rl = strlen(root);
	snprintf(out, n, "%s", strncmp(f->rel, root, rl) == 0 ? f->rel + rl : f->rel);
	size_t l = strlen(out);
	const char *tails[] = { "index.html", "index.htm", ".html", ".htm" };
	for (int k = 0; k < 4; k++) {
		size_t tl = strlen(tails[k]);
		/* "index.html" only as a whole file name: genindex.html is the topic "genindex" */
		bool whole = k >= 2 || l == tl || (l > tl && out[l - tl - 1] == '/');
		if (l >= tl && whole && strcasecmp(out + l - tl, tails[k]) == 0) {
			l -= tl;
			out[l] = '\0';
			break;
		}
	}
	while (l && out[l - 1] == '/')
		out[--l] = '\0';
}

/* The topic whose page is file fi (made, with its parents, when it is new), or -1 for the site's
 * top page and pages whose topic cannot be made (out of memory included): a topic index, not an
 * error code; such a page is left without that topic. */
static int topic_of(site *s, int fi, int depth)
{
	site_file *f = &s->files[fi];
	if (f->topic >= 0 || depth > 64)
		return f->topic;
	if (is_root(f) || f->page < 0)
		return -1;
	char tp[4096];
	topic_path(s, f, tp, sizeof(tp));
	if (!*tp)
		return -1;
	int parent = f->parent >= 0 ? topic_of(s, f->parent, depth + 1) : -1;
	corpus *c = s->c;
	int added = 0;
	int *idx = strmap_put(&c->topic_index, tp, strlen(tp), c->ntopics, &added);
	if (!idx)
		return -1;
	if (!added) {
		f->topic = *idx;
		return *idx;
	}
	if (c->ntopics == c->captopics) {
		int cap = c->captopics ? c->captopics * 2 : 64;
		topic *t = realloc(c->topics, (size_t)cap * sizeof(*t));
		if (!t)
			return -1;
		c->topics = t;
		c->captopics = cap;
	}
	const page *p = &c->pages[f->page];
	topic *t = &c->topics[c->ntopics];
	memset(t, 0, sizeof(*t));
	t->path = strdup(tp);
	t->parent = parent >= 0 ? strdup(c->topics[parent].path) : NULL;
	/* named as the breadcrumbs name it ("Caching"), else by its page's title */
	t->title = strdup(f->crumb_text ? f->crumb_text : p->title);
	t->description = strdup(p->description);
	t->page = strdup(p->path);
	t->ord = c->ntopics;
	t->line = 0;
	f->topic = c->ntopics++;
	return f->topic;
}

/* Adds topic t to page p unless it has it. */
static void add_topic(corpus *c, page *p, int t)
{
	for (int k = 0; k < p->ntopics; k++)
		if (strcmp(p->topics[k], c->topics[t].path) == 0)
			return;
	char **v = realloc(p->topics, (size_t)(p->ntopics + 1) * sizeof(char *));
	if (!v)
		return;
	p->topics = v;
	if ((v[p->ntopics] = strdup(c->topics[t].path)))
		p->ntopics++;
}

/* Each page's topics: the pages its breadcrumb trails end at (itself, for a page that ends its
 * own trail: a topic's page), else its parent page's. */
void make_topics(site *s)
{
	corpus *c = s->c;
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		for (int k = 0; f->page >= 0 && k < f->hp.ncrumbs + f->hp.ntrail_ends; k++) {
			const html_ref *r = k < f->hp.ncrumbs ? &f->hp.crumbs[k] : &f->hp.trail_ends[k - f->hp.ncrumbs];
			bool exists;
			int t = r->text ? target_of(s, fi, r->href, &exists, NULL, 0) : -1;
			if (t >= 0 && !s->files[t].crumb_text)
				s->files[t].crumb_text = r->text;
		}
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		page *p = &c->pages[f->page];
		bool any = false;
		for (int k = 0; k < f->hp.ntrail_ends; k++) {
			bool exists;
			int at = target_of(s, fi, f->hp.trail_ends[k].href, &exists, NULL, 0);
			int t = at >= 0 ? topic_of(s, at, 0) : -1;
			if (t >= 0) {
				add_topic(c, p, t);
				any = true;
			}
		}
		if (!any && f->parent >= 0) {
			int t = topic_of(s, f->parent, 0);
			if (t >= 0)
				add_topic(c, p, t);
		}
	}
}

/* Whether file a lies below file anc in the parent tree. */
static bool below(const site *s, int a, int anc)
{
	for (int depth = 0; a >= 0 && depth < 64; depth++) {
		a = s->files[a].parent;
		if (a == anc)
			return true;
	}
	return false;
}

static char *slug_of(const char *path)
{
	return strdup(path[0] == '/' ? path + 1 : path);
}

/* Guides: a page's lists marked data-atlas-guide, in their order; else the rel=next chain
 * through the pages whose parent it is (skipping their own children), when it has two steps or
 * more. The site's top page is a guide only when none of its chain's steps has pages of its own
 * (a flat book: mdBook's chapters); a deeper site's chain of parts is not a route. */
void make_guides(site *s)
{
	corpus *c = s->c;
	int *first_child = malloc((size_t)(s->nfiles ? s->nfiles : 1) * sizeof(int));
	bool *has_prev = calloc((size_t)(s->nfiles ? s->nfiles : 1), sizeof(bool));
	if (!first_child || !has_prev) {
		free(first_child);
		free(has_prev);
		return;
	}
	for (int fi = 0; fi < s->nfiles; fi++)
		first_child[fi] = -1;
	/* a child is where its parent's chain starts when no sibling's next leads to it */
	for (int fi = 0; fi < s->nfiles; fi++) {
		int nx = s->files[fi].next;
		if (nx >= 0 && s->files[nx].parent == s->files[fi].parent)
			has_prev[nx] = true;
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		int par = s->files[fi].parent;
		if (par >= 0 && s->files[fi].page >= 0 && !has_prev[fi] && first_child[par] < 0)
			first_child[par] = fi;
	}
	for (int gi = 0; gi < s->nfiles; gi++) {
		site_file *g = &s->files[gi];
		if (g->page < 0)
			continue;
		page *p = &c->pages[g->page];
		if (g->hp.nguides) {
			p->gsecs = calloc((size_t)g->hp.nguides, sizeof(guide_section));
			if (!p->gsecs)
				continue;
			for (int k = 0; k < g->hp.nguides; k++) {
				const html_guide *hg = &g->hp.guides[k];
				guide_section *gs = &p->gsecs[p->ngsecs++];
				gs->title = strdup(hg->title ? hg->title : p->title);
				gs->steps = calloc((size_t)(hg->nsteps ? hg->nsteps : 1), sizeof(char *));
				for (int j = 0; gs->steps && j < hg->nsteps; j++) {
					bool exists;
					int t = target_of(s, gi, hg->steps[j].href, &exists, NULL, 0);
					if (t < 0) {
						diag_add(s->d, g->file, hg->steps[j].line, warn_sev(s),
							 "guide step %s is not a page of the site", hg->steps[j].href);
						continue;
					}
					gs->steps[gs->nsteps] = slug_of(c->pages[s->files[t].page].path);
					if (gs->steps[gs->nsteps])
						gs->nsteps++;
				}
			}
			p->type = ATLAS_TYPE_GUIDE;
			continue;
		}
		/* the chain starts where the page's own next leads, when that is one of its children;
		 * else at its first child (by file name) that no sibling leads to */
		int start = g->next >= 0 && s->files[g->next].parent == gi ? g->next : first_child[gi];
		if (start < 0)
			continue;
		char **steps = NULL;
		int n = 0, parents = 0;
		for (int at = start, guard = 0; at >= 0 && guard < s->nfiles; guard++) {
			if (s->files[at].parent == gi) {
				bool dup = false;
				for (int k = 0; k < n && !dup; k++)
					dup = strcmp(steps[k] + 0, c->pages[s->files[at].page].path + 1) == 0;
				if (dup)
					break;
				char **v = realloc(steps, (size_t)(n + 1) * sizeof(char *));
				if (!v)
					break;
				steps = v;
				if (!(steps[n] = slug_of(c->pages[s->files[at].page].path)))
					break;
				n++;
				parents += first_child[at] >= 0;
			} else if (!below(s, at, gi))
				break;
			at = s->files[at].next;
		}
		/* the top page's chain is a route when its steps are the site's pages, none with pages
		 * of its own (a book whose chapters are all the top's: mdBook's); a chain of a deeper
		 * site's parts or chapters is not */
		if (n >= 2 && (!is_root(g) || parents == 0)) {
			p->gsecs = calloc(1, sizeof(guide_section));
			if (p->gsecs) {
				p->gsecs[0].title = strdup(p->title);
				p->gsecs[0].steps = steps;
				p->gsecs[0].nsteps = n;
				p->ngsecs = 1;
				p->type = ATLAS_TYPE_GUIDE;
				steps = NULL;
				n = 0;
			}
		}
		for (int k = 0; k < n; k++)
			free(steps[k]);
		free(steps);
	}
	free(first_child);
	free(has_prev);
}

/* Each page's next page as the site names it (rel=next, or a link marked next) into c->page_next,
 * left NULL when no page names one (or out of memory: the site's order is then not a signal). */
void record_next_pages(site *s)
{
	corpus *c = s->c;
	int *next = NULL;
	for (int fi = 0; fi < s->nfiles; fi++) {
		const site_file *f = &s->files[fi];
		if (f->page < 0 || f->next < 0 || s->files[f->next].page < 0 || s->files[f->next].page == f->page)
			continue;
		if (!next) {
			if (!(next = malloc((size_t)(c->npages ? c->npages : 1) * sizeof(int))))
				return;
			for (int i = 0; i < c->npages; i++)
				next[i] = -1;
		}
		next[f->page] = s->files[f->next].page;
	}
	c->page_next = next;
}

/* Page types: the configuration's rules first; else the site's top page and the pages its pages
 * name as index or search pages are site pages, guides stay guides, the rest explainers. */
void assign_types(site *s)
{
	corpus *c = s->c;
	bool *index_page = calloc((size_t)(s->nfiles ? s->nfiles : 1), sizeof(bool));
	bool *led_to = calloc((size_t)(s->nfiles ? s->nfiles : 1), sizeof(bool));
	for (int fi = 0; led_to && fi < s->nfiles; fi++)
		if (s->files[fi].next >= 0)
			led_to[s->files[fi].next] = true;
	for (int fi = 0; index_page && fi < s->nfiles; fi++)
		for (int k = 0; s->files[fi].page >= 0 && k < s->files[fi].hp.nindex_refs; k++) {
			bool exists;
			int t = target_of(s, fi, s->files[fi].hp.index_refs[k], &exists, NULL, 0);
			if (t >= 0)
				index_page[t] = true;
		}
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		page *p = &c->pages[f->page];
		int rule = -1;
		for (int k = 0; k < s->cfg.ntypes && rule < 0; k++)
			if (site_glob_match(s->cfg.types[k].glob, f->rel))
				rule = k;
		/* a long list of links and little else: a book index, a list of every name */
		bool listing = f->hp.nlinks >= LISTING_LINKS && f->hp.link_text * 2 >= f->hp.text_len;
		/* a program's source shown whole, outside the site's reading order (an example program
		 * that a chapter's pages lead to stays a page to read) */
		bool source = f->hp.text_len >= SOURCE_MIN_BYTES &&
			      (double)f->hp.code_text >= SOURCE_CODE_SHARE * (double)f->hp.text_len &&
			      f->next < 0 && led_to && !led_to[fi];
		if (rule >= 0)
			p->type = s->cfg.types[rule].type;
		else if ((is_root(f) && p->type != ATLAS_TYPE_GUIDE) || (index_page && index_page[fi]) ||
			 ((listing || source) && p->type != ATLAS_TYPE_GUIDE))
			p->type = ATLAS_TYPE_PAGE;
		p->source = source;
		if (listing && p->type != ATLAS_TYPE_GUIDE) {
			for (int k = 0; k < p->ndefs; k++)
				free(p->defs[k]);
			free(p->defs);
			p->defs = NULL;
			p->ndefs = 0;
		}
	}
	free(index_page);
	free(led_to);
}

