/* corpus_checks.c - the checks across the corpus's files (topics, prerequisites, guide steps and
 * links that name pages; the sitemap against the pages), and the topic pages made from topics.json. */
#include "corpus_internal.h"
#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_page(const corpus *c, const char *path)
{
	int *i = strmap_get(&c->page_index, path);
	return i ? *i : -1;
}

/* Line of a guide step: its quoted slug inside the "sections" list. */
static int step_line(const char *fm, const char *slug)
{
	char pat[600];
	snprintf(pat, sizeof(pat), "\"%s\"", slug);
	return diag_line_of_nth(fm, "\"sections\"", pat, 1, 1);
}

void corpus_check_references(corpus *c, bool strict, diag_list *d)
{
	char path[1024];
	for (int i = 0; i < c->npages; i++) {
		page *p = &c->pages[i];
		for (int k = 0; k < p->ntopics; k++) {
			int *t = strmap_get(&c->topic_index, p->topics[k]);
			if (!t)
				diag_add(d, p->file, p->topics_line, DIAG_ERROR, "unknown topic '%s'",
					 p->topics[k]);
		}
		for (int k = 0; k < p->nprereqs; k++) {
			snprintf(path, sizeof(path), "/%s", p->prereqs[k]);
			if (find_page(c, path) < 0)
				diag_add(d, p->file, p->prereqs_line, DIAG_ERROR,
					 "prerequisite '%s' is not a page", p->prereqs[k]);
		}
		for (int g = 0; g < p->ngsecs; g++)
			for (int k = 0; k < p->gsecs[g].nsteps; k++) {
				snprintf(path, sizeof(path), "/%s", p->gsecs[g].steps[k]);
				if (find_page(c, path) < 0)
					diag_add(d, p->file, step_line(p->fm_text, p->gsecs[g].steps[k]),
						 DIAG_ERROR, "guide step '%s' is not a page", p->gsecs[g].steps[k]);
			}
		for (int k = 0; k < p->nlinks; k++) {
			const char *t = p->links[k].target;
			if (find_page(c, t) < 0 && !(strncmp(t, "/t/", 3) == 0 && strmap_get(&c->topic_index, t + 3)))
				diag_add(d, p->file, p->links[k].line, strict ? DIAG_ERROR : DIAG_WARNING,
					 "link to missing page %s", t);
		}
	}
}

void corpus_check_sitemap(corpus *c, bool strict, diag_list *d)
{
	if (!c->have_sitemap)
		return;
	char file[4096];
	snprintf(file, sizeof(file), "%s/sitemap.xml", c->dir);
	enum diag_severity sev = strict ? DIAG_ERROR : DIAG_WARNING;
	strmap seen = STRMAP_INIT;
	for (int i = 0; i < c->nsitemap; i++) {
		const sitemap_entry *e = &c->sitemap[i];
		if (!e->path)
			continue;
		strmap_put(&seen, e->path, strlen(e->path), i, NULL);
		int pi = find_page(c, e->path);
		if (pi < 0) {
			diag_add(d, file, e->line, sev, "sitemap lists %s but the corpus has no such page",
				 e->path);
			continue;
		}
		const page *p = &c->pages[pi];
		if (e->lastmod && p->lastmod && strcmp(e->lastmod, p->lastmod) != 0)
			diag_add(d, p->file, p->lastmod_line, sev,
				 "lastmod %s differs from the sitemap's %s", p->lastmod, e->lastmod);
	}
	for (int i = 0; i < c->npages; i++)
		if (!strmap_get(&seen, c->pages[i].path))
			diag_add(d, c->pages[i].file, c->pages[i].type == ATLAS_TYPE_TOPIC ? c->pages[i].nsecs : 1,
				 sev, "page %s is not in sitemap.xml", c->pages[i].path);
	strmap_free(&seen);
}

/* Topic pages (/t/<path>) are pages too: their text is the topic's title, description, subtopics
 * and member explainers, and they link to those members. */
/* The explainers of every topic, in page order, and the sitemap entry of every topic page. */
typedef struct topic_members {
	int *start;   /* topic ti's members are pages[start[ti] .. start[ti + 1]) */
	int *pages;   /* page indexes */
	int *entry;   /* topic -> index of the sitemap entry of its page (the last one), or -1 */
} topic_members;

static void topic_members_free(topic_members *m)
{
	free(m->start);
	free(m->pages);
	free(m->entry);
}

/* Calls fn(c, ti, pi, arg) once for each topic ti that explainer pi is in: a topic of the page,
 * and each topic whose path is a parent path of one ("systems" of "systems/caching"). */
static void each_membership(const corpus *c, void (*fn)(int ti, int pi, void *arg), void *arg)
{
	int *last = malloc((size_t)(c->ntopics ? c->ntopics : 1) * sizeof(int));
	if (!last)
		return;
	for (int ti = 0; ti < c->ntopics; ti++)
		last[ti] = -1;
	for (int pi = 0; pi < c->npages; pi++) {
		const page *p = &c->pages[pi];
		if (p->type != ATLAS_TYPE_EXPLAINER)
			continue;
		for (int k = 0; k < p->ntopics; k++)
			for (size_t n = 1; p->topics[k][n - 1]; n++) {
				if (p->topics[k][n] != '\0' && p->topics[k][n] != '/')
					continue;
				int *ti = strmap_getn(&c->topic_index, p->topics[k], n);
				if (ti && last[*ti] != pi) {
					last[*ti] = pi; /* once however many of its topics are below it */
					fn(*ti, pi, arg);
				}
			}
	}
	free(last);
}

static void count_member(int ti, int pi, void *arg)
{
	(void)pi;
	((topic_members *)arg)->start[ti + 1]++;
}

static void place_member(int ti, int pi, void *arg)
{
	topic_members *m = arg;
	m->pages[m->entry[ti]++] = pi; /* entry is the fill cursor until the sitemap is read */
}

/* Finds every topic's explainers in one pass over the pages (a pass over every page for each
 * topic read every page's record 48 times), and each topic page's sitemap entry. Returns 0, or
 * ATLAS_ENOMEM when out of memory (m then empty). */
static int topic_members_find(topic_members *m, const corpus *c)
{
	int nt = c->ntopics;
	m->start = calloc((size_t)nt + 2, sizeof(int));
	m->entry = malloc(((size_t)nt + 1) * sizeof(int));
	m->pages = NULL;
	if (!m->start || !m->entry)
		goto fail;
	each_membership(c, count_member, m);
	for (int ti = 0; ti < nt; ti++)
		m->start[ti + 1] += m->start[ti];
	m->pages = malloc(((size_t)m->start[nt] + 1) * sizeof(int));
	if (!m->pages)
		goto fail;
	for (int ti = 0; ti < nt; ti++)
		m->entry[ti] = m->start[ti];
	each_membership(c, place_member, m);
	for (int ti = 0; ti < nt; ti++)
		m->entry[ti] = -1;
	for (int i = 0; i < c->nsitemap; i++) {
		const char *path = c->sitemap[i].path;
		int *ti = path && strncmp(path, "/t/", 3) == 0 ? strmap_get(&c->topic_index, path + 3) : NULL;
		if (ti)
			m->entry[*ti] = i;
	}
	return 0;
fail:
	topic_members_free(m);
	memset(m, 0, sizeof(*m));
	return ATLAS_ENOMEM;
}

void corpus_add_topic_pages(corpus *c, diag_list *d)
{
	char tfile[4096];
	snprintf(tfile, sizeof(tfile), "%s/topics.json", c->dir);
	topic_members m;
	if (topic_members_find(&m, c)) {
		diag_add(d, tfile, 0, DIAG_ERROR, "out of memory");
		return;
	}
	for (int ti = 0; ti < c->ntopics; ti++) {
		const topic *t = &c->topics[ti];
		page *p = corpus_add_page(c);
		if (!p)
			return;
		memset(p, 0, sizeof(*p));
		p->type = ATLAS_TYPE_TOPIC;
		p->file = strdup(tfile);
		strbuf s = STRBUF_INIT;
		strbuf_printf(&s, "/t/%s", t->path);
		p->path = strbuf_detach(&s);
		/* title: the chain of titles from the top ("Systems ▸ Caching") */
		const topic *chain[16];
		int depth = 0;
		for (const topic *u = t; u && depth < 16;) {
			chain[depth++] = u;
			int *pi = u->parent ? strmap_get(&c->topic_index, u->parent) : NULL;
			u = pi ? &c->topics[*pi] : NULL;
		}
		for (int k = depth - 1; k >= 0; k--)
			strbuf_printf(&s, "%s%s", chain[k]->title, k ? " ▸ " : "");
		p->title = strbuf_detach(&s);
		p->description = strdup(t->description);
		p->lastmod = NULL;
		p->priority = 0.5;
		if (m.entry[ti] >= 0) {
			const sitemap_entry *e = &c->sitemap[m.entry[ti]];
			p->lastmod = e->lastmod ? strdup(e->lastmod) : NULL;
			p->image = e->image ? strdup(e->image) : NULL;
			p->priority = e->priority ? atof(e->priority) : 0.5;
		}
		if (!p->lastmod)
			p->lastmod = strdup("");
		p->keywords = calloc(1, sizeof(char *));
		if (p->keywords) {
			p->keywords[0] = strdup(t->title);
			p->nkeywords = 1;
		}
		p->topics = calloc(1, sizeof(char *));
		if (p->topics) {
			p->topics[0] = strdup(t->path);
			p->ntopics = 1;
		}
		/* body: subtopics, then member explainers, as Markdown so links become edges */
		strbuf md = STRBUF_INIT;
		int nsub = 0;
		for (int k = 0; k < c->ntopics; k++)
			if (c->topics[k].parent && strcmp(c->topics[k].parent, t->path) == 0)
				strbuf_printf(&md, "%s- [%s](/t/%s): %s\n", nsub++ ? "" : "## Topics\n\n",
					      c->topics[k].title, c->topics[k].path, c->topics[k].description);
		for (int k = m.start[ti]; k < m.start[ti + 1]; k++) {
			const page *mp = &c->pages[m.pages[k]];
			strbuf_printf(&md, "%s- [%s](%s)\n", k == m.start[ti] ? "\n## Explainers\n\n" : "", mp->title,
				      mp->path);
		}
		char *md_text = strbuf_detach(&md);
		if (!md_text || corpus_parse_body(p, md_text, strlen(md_text), t->line))
			diag_add(d, tfile, t->line, DIAG_ERROR, "cannot build the topic page %s", p->path);
		free(md_text);
		int added = 0;
		int *idx = strmap_put(&c->page_index, p->path, strlen(p->path), c->npages, &added);
		if (idx && added)
			c->npages++;
		else
			page_free(p);
	}
	topic_members_free(&m);
}

