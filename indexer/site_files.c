/* site_files.c - the corpus's site-wide files: topics.json and synonyms.json (cJSON), and
 * sitemap.xml (expat). */
#include "corpus_internal.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <expat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_error(diag_list *d, const char *file, const char *data)
{
	const char *at = cJSON_GetErrorPtr();
	size_t off = at && at >= data ? (size_t)(at - data) : 0;
	if (off > strlen(data))
		off = 0;
	size_t ls = off;
	while (ls > 0 && data[ls - 1] != '\n')
		ls--;
	diag_add(d, file, diag_line_of_offset(data, off), DIAG_ERROR, "invalid JSON at column %zu",
		 off - ls + 1);
}

static int line_of_string(const char *data, const char *needle)
{
	char pat[512];
	snprintf(pat, sizeof(pat), "\"%s\"", needle);
	const char *p = strstr(data, pat);
	return p ? diag_line_of_offset(data, (size_t)(p - data)) : 1;
}

static void load_topic_nodes(corpus *c, cJSON *arr, const char *parent, const char *file,
			     const char *data, diag_list *d)
{
	cJSON *it;
	cJSON_ArrayForEach(it, arr) {
		cJSON *path = cJSON_GetObjectItemCaseSensitive(it, "path");
		cJSON *title = cJSON_GetObjectItemCaseSensitive(it, "title");
		cJSON *desc = cJSON_GetObjectItemCaseSensitive(it, "description");
		cJSON *kids = cJSON_GetObjectItemCaseSensitive(it, "children");
		if (!cJSON_IsString(path) || !cJSON_IsString(title) || !cJSON_IsString(desc)) {
			diag_add(d, file, cJSON_IsString(path) ? line_of_string(data, path->valuestring) : 1,
				 DIAG_ERROR, "topic needs string fields 'path', 'title' and 'description'");
			continue;
		}
		const char *pp = path->valuestring;
		int line = line_of_string(data, pp);
		size_t plen = parent ? strlen(parent) : 0;
		if (parent && (strncmp(pp, parent, plen) != 0 || pp[plen] != '/' || strchr(pp + plen + 1, '/'))) {
			diag_add(d, file, line, DIAG_ERROR, "topic '%s' is not a direct child of '%s'", pp, parent);
			continue;
		}
		if (!parent && strchr(pp, '/')) {
			diag_add(d, file, line, DIAG_ERROR, "top-level topic '%s' must not contain '/'", pp);
			continue;
		}
		int added = 0;
		int *idx = strmap_put(&c->topic_index, pp, strlen(pp), c->ntopics, &added);
		if (!idx)
			return;
		if (!added) {
			diag_add(d, file, line, DIAG_ERROR, "duplicate topic '%s'", pp);
			continue;
		}
		if (c->ntopics == c->captopics) {
			int cap = c->captopics ? c->captopics * 2 : 64;
			topic *t = realloc(c->topics, (size_t)cap * sizeof(*t));
			if (!t)
				return;
			c->topics = t;
			c->captopics = cap;
		}
		topic *t = &c->topics[c->ntopics++];
		t->path = strdup(pp);
		t->parent = parent ? strdup(parent) : NULL;
		t->title = strdup(title->valuestring);
		t->description = strdup(desc->valuestring);
		t->page = NULL;
		t->ord = c->ntopics;
		t->line = line;
		if (kids && !cJSON_IsArray(kids))
			diag_add(d, file, line, DIAG_ERROR, "topic '%s': 'children' must be a list", pp);
		else if (kids)
			load_topic_nodes(c, kids, t->path, file, data, d);
	}
}

/* Reads DIR/name as JSON text holding an object with a list under key: digests it, checks its
 * UTF-8, parses it. On success returns the list, with *root (cJSON_Delete it) and *data (free it)
 * set; otherwise reports the problem (a missing file only when required) and returns NULL. */
static cJSON *read_json_list(corpus *c, diag_list *d, const char *name, const char *key,
			     bool required, char *file, size_t fcap, char **data, cJSON **root)
{
	size_t n;
	*root = NULL;
	snprintf(file, fcap, "%s/%s", c->dir, name);
	if (corpus_read_file(file, -1, data, &n)) {
		if (required || errno != ENOENT)
			diag_add(d, file, 0, DIAG_ERROR, "cannot read file: %s", strerror(errno));
		return NULL;
	}
	corpus_digest_bytes(c, *data, n);
	long bad = atlas_utf8_invalid_at(*data, n);
	if (bad >= 0) {
		diag_add(d, file, diag_line_of_offset(*data, (size_t)bad), DIAG_ERROR,
			 "invalid UTF-8 at byte offset %ld", bad);
		return NULL;
	}
	*root = cJSON_ParseWithLength(*data, n);
	cJSON *list = *root ? cJSON_GetObjectItemCaseSensitive(*root, key) : NULL;
	if (!*root)
		json_error(d, file, *data);
	else if (!cJSON_IsArray(list))
		diag_add(d, file, 1, DIAG_ERROR, "expected an object with a '%s' list", key);
	return cJSON_IsArray(list) ? list : NULL;
}

void corpus_load_topics(corpus *c, diag_list *d)
{
	char file[4096];
	char *data = NULL;
	cJSON *root = NULL;
	cJSON *arr = read_json_list(c, d, "topics.json", "topics", true, file, sizeof(file), &data, &root);
	if (arr)
		load_topic_nodes(c, arr, NULL, file, data, d);
	cJSON_Delete(root);
	free(data);
}

void corpus_load_synonyms(corpus *c, diag_list *d)
{
	char file[4096];
	char *data = NULL;
	cJSON *root = NULL;
	cJSON *groups = read_json_list(c, d, "synonyms.json", "groups", false, file, sizeof(file), &data,
				       &root);
	if (groups) {
		int ng = cJSON_GetArraySize(groups);
		c->syn_groups = calloc((size_t)ng + 1, sizeof(char **));
		cJSON *g;
		int gi = 0;
		cJSON_ArrayForEach(g, groups) {
			gi++;
			cJSON *terms = cJSON_GetObjectItemCaseSensitive(g, "terms");
			int nt = cJSON_IsArray(terms) ? cJSON_GetArraySize(terms) : 0;
			if (nt < 2) {
				diag_add(d, file, diag_line_of_nth(data, NULL, "{", gi + 1, 1), DIAG_ERROR,
					 "synonym group %d needs a 'terms' list of two or more", gi);
				continue;
			}
			char **out = calloc((size_t)nt + 1, sizeof(char *));
			if (!out || !c->syn_groups)
				break;
			int k = 0;
			cJSON *t;
			cJSON_ArrayForEach(t, terms) {
				if (!cJSON_IsString(t) || !t->valuestring[0]) {
					diag_add(d, file, diag_line_of_nth(data, NULL, "{", gi + 1, 1), DIAG_ERROR,
						 "synonym group %d: terms must be non-empty strings", gi);
					continue;
				}
				char *s = strdup(t->valuestring);
				for (char *q = s; q && *q; q++)
					if (*q >= 'A' && *q <= 'Z')
						*q = (char)(*q + 32);
				out[k++] = s;
			}
			c->syn_groups[c->nsyn++] = out;
		}
	}
	cJSON_Delete(root);
	free(data);
}

/* Sitemap: <url><loc/><lastmod/><priority/><image:image><image:loc/></image:image></url> */
typedef struct sm_state {
	corpus *c;
	XML_Parser parser;
	strbuf text;
	sitemap_entry cur;
	int in_url;
} sm_state;

static const char *local_name(const char *n)
{
	const char *sep = strrchr(n, '|');
	return sep ? sep + 1 : n;
}

static void XMLCALL sm_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	sm_state *st = ud;
	(void)attrs;
	strbuf_reset(&st->text);
	if (strcmp(local_name(name), "url") == 0) {
		memset(&st->cur, 0, sizeof(st->cur));
		st->cur.line = (int)XML_GetCurrentLineNumber(st->parser);
		st->in_url = 1;
	}
}

static void XMLCALL sm_end(void *ud, const XML_Char *name)
{
	sm_state *st = ud;
	const char *ln = local_name(name);
	int image = strstr(name, "image") != NULL && strcmp(ln, "loc") == 0;
	char **slot = NULL;
	if (!st->in_url)
		return;
	if (image)
		slot = &st->cur.image;
	else if (strcmp(ln, "loc") == 0)
		slot = &st->cur.loc;
	else if (strcmp(ln, "lastmod") == 0)
		slot = &st->cur.lastmod;
	else if (strcmp(ln, "priority") == 0)
		slot = &st->cur.priority;
	if (slot && !*slot)
		*slot = strdup(strbuf_str(&st->text));
	if (strcmp(ln, "url") == 0) {
		corpus *c = st->c;
		st->in_url = 0;
		if (c->nsitemap == c->capsitemap) {
			int cap = c->capsitemap ? c->capsitemap * 2 : 256;
			sitemap_entry *e = realloc(c->sitemap, (size_t)cap * sizeof(*e));
			if (!e)
				return;
			c->sitemap = e;
			c->capsitemap = cap;
		}
		c->sitemap[c->nsitemap++] = st->cur;
		memset(&st->cur, 0, sizeof(st->cur));
	}
	strbuf_reset(&st->text);
}

static void XMLCALL sm_text(void *ud, const XML_Char *s, int len)
{
	sm_state *st = ud;
	strbuf_append(&st->text, s, (size_t)len);
}

void corpus_read_sitemap(corpus *c, diag_list *d, bool strict)
{
	char file[4096];
	snprintf(file, sizeof(file), "%s/sitemap.xml", c->dir);
	char *data;
	size_t n;
	if (corpus_read_file(file, -1, &data, &n)) {
		diag_add(d, file, 0, strict ? DIAG_ERROR : DIAG_WARNING, "cannot read sitemap: %s",
			 strerror(errno));
		return;
	}
	corpus_digest_bytes(c, data, n); /* the site URL, and some pages' dates and priorities, come from it */
	sm_state st;
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.parser = XML_ParserCreateNS(NULL, '|');
	if (!st.parser) {
		free(data);
		return;
	}
	XML_SetUserData(st.parser, &st);
	XML_SetElementHandler(st.parser, sm_start, sm_end);
	XML_SetCharacterDataHandler(st.parser, sm_text);
	if (XML_Parse(st.parser, data, (int)n, 1) == XML_STATUS_ERROR)
		diag_add(d, file, (int)XML_GetCurrentLineNumber(st.parser), DIAG_ERROR, "invalid XML: %s",
			 XML_ErrorString(XML_GetErrorCode(st.parser)));
	else
		c->have_sitemap = true;
	XML_ParserFree(st.parser);
	strbuf_free(&st.text);
	free(st.cur.loc);
	free(st.cur.lastmod);
	free(st.cur.priority);
	free(st.cur.image);
	free(data);
	for (int i = 0; i < c->nsitemap; i++) {
		sitemap_entry *e = &c->sitemap[i];
		const char *loc = e->loc ? e->loc : "";
		const char *p = strstr(loc, "://");
		p = p ? strchr(p + 3, '/') : NULL;
		if (!e->loc || !p) {
			diag_add(d, file, e->line, DIAG_ERROR, "<url> without an absolute <loc>");
			continue;
		}
		e->path = strdup(p);
		if (!c->site_url)
			c->site_url = corpus_strndup(loc, (size_t)(p - loc));
	}
}

/* Frees the sitemap's entries, checked against the pages and used by nothing after. */
void corpus_free_sitemap(corpus *c)
{
	for (int i = 0; i < c->nsitemap; i++) {
		free(c->sitemap[i].path);
		free(c->sitemap[i].loc);
		free(c->sitemap[i].lastmod);
		free(c->sitemap[i].priority);
		free(c->sitemap[i].image);
	}
	free(c->sitemap);
	c->sitemap = NULL;
	c->nsitemap = c->capsitemap = 0;
}

