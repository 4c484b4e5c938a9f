/* html.c - one built HTML page read with gumbo (an HTML5 parser: malformed pages are read as
 * browsers read them): metadata, navigation, the content root's sections, links and definitions. */
#include "html.h"
#include "strbuf.h"
#include "strmap.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <gumbo.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/**************************************************************************************************
** Selectors.
*/

typedef struct sel_attr {
	char *name, *value; /* value NULL: the attribute present */
} sel_attr;

typedef struct sel_one {
	char *tag;          /* lowercase, or NULL for any */
	char *id;
	char **classes;
	int nclasses;
	sel_attr *attrs;
	int nattrs;
} sel_one;

struct html_sel {
	sel_one *items;
	int n;
};

void html_sel_free(html_sel *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		sel_one *o = &s->items[i];
		free(o->tag);
		free(o->id);
		for (int k = 0; k < o->nclasses; k++)
			free(o->classes[k]);
		free(o->classes);
		for (int k = 0; k < o->nattrs; k++) {
			free(o->attrs[k].name);
			free(o->attrs[k].value);
		}
		free(o->attrs);
	}
	free(s->items);
	free(s);
}

static int name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == ':' || (unsigned char)c >= 0x80;
}

static char *dup_n(const char *s, size_t n)
{
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\0';
	}
	return r;
}

html_sel *html_sel_parse(const char *list, char *err, size_t errlen)
{
	html_sel *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	const char *p = list;
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		sel_one *items = realloc(s->items, (size_t)(s->n + 1) * sizeof(*items));
		if (!items)
			goto oom;
		s->items = items;
		sel_one *o = &s->items[s->n++];
		memset(o, 0, sizeof(*o));
		const char *start = p;
		if (*p == '*')
			p++;
		else if (name_char(*p)) {
			const char *b = p;
			while (name_char(*p))
				p++;
			if (!(o->tag = dup_n(b, (size_t)(p - b))))
				goto oom;
			for (char *q = o->tag; *q; q++)
				*q = (char)tolower((unsigned char)*q);
		}
		while (*p == '.' || *p == '#' || *p == '[') {
			char kind = *p++;
			if (kind == '[') {
				const char *b = p;
				while (name_char(*p))
					p++;
				if (p == b)
					goto bad;
				sel_attr a = { dup_n(b, (size_t)(p - b)), NULL };
				if (*p == '=') {
					p++;
					char q = (*p == '"' || *p == '\'') ? *p++ : 0;
					const char *v = p;
					while (*p && (q ? *p != q : *p != ']'))
						p++;
					a.value = dup_n(v, (size_t)(p - v));
					if (q && *p == q)
						p++;
				}
				if (*p != ']') {
					free(a.name);
					free(a.value);
					goto bad;
				}
				p++;
				sel_attr *at = realloc(o->attrs, (size_t)(o->nattrs + 1) * sizeof(*at));
				if (!at || !a.name) {
					free(a.name);
					free(a.value);
					goto oom;
				}
				o->attrs = at;
				o->attrs[o->nattrs++] = a;
				continue;
			}
			const char *b = p;
			while (name_char(*p))
				p++;
			if (p == b)
				goto bad;
			char *v = dup_n(b, (size_t)(p - b));
			if (!v)
				goto oom;
			if (kind == '#') {
				free(o->id);
				o->id = v;
			} else {
				char **cl = realloc(o->classes, (size_t)(o->nclasses + 1) * sizeof(*cl));
				if (!cl) {
					free(v);
					goto oom;
				}
				o->classes = cl;
				o->classes[o->nclasses++] = v;
			}
		}
		if (p == start)
			goto bad;
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	return s;
bad:
	snprintf(err, errlen, "cannot read the selector at \"%.40s\" (tag, .class, #id and [attr=value] only)", p);
	html_sel_free(s);
	return NULL;
oom:
	snprintf(err, errlen, "out of memory");
	html_sel_free(s);
	return NULL;
}

static const char *attr(const GumboElement *el, const char *name)
{
	GumboAttribute *a = gumbo_get_attribute(&el->attributes, name);
	return a ? a->value : NULL;
}

/* Whether the whitespace-separated list holds word (ASCII case ignored). */
static bool has_token(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; p && *p;) {
		while (isspace((unsigned char)*p))
			p++;
		const char *b = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if ((size_t)(p - b) == n && strncasecmp(b, word, n) == 0)
			return true;
	}
	return false;
}

static const char *tag_name(const GumboElement *el)
{
	return el->tag == GUMBO_TAG_UNKNOWN ? "" : gumbo_normalized_tagname(el->tag);
}

static bool sel_one_match(const sel_one *o, const GumboElement *el)
{
	if (o->tag && strcmp(o->tag, tag_name(el)) != 0)
		return false;
	if (o->id) {
		const char *id = attr(el, "id");
		if (!id || strcmp(id, o->id) != 0)
			return false;
	}
	for (int i = 0; i < o->nclasses; i++)
		if (!has_token(attr(el, "class"), o->classes[i]))
			return false;
	for (int i = 0; i < o->nattrs; i++) {
		const char *v = attr(el, o->attrs[i].name);
		if (!v || (o->attrs[i].value && strcasecmp(v, o->attrs[i].value) != 0))
			return false;
	}
	return true;
}

static bool sel_match(const html_sel *s, const GumboElement *el)
{
	for (int i = 0; s && i < s->n; i++)
		if (sel_one_match(&s->items[i], el))
			return true;
	return false;
}

/**************************************************************************************************
** Text.
*/

/* Appends the text under node to sb, whitespace collapsed; links to a place of the page with no
 * letter or digit in their text (permalink marks such as "¶" or "#") are left out. */
static void gather_text(strbuf *sb, const GumboNode *node);

static bool is_permalink(const GumboElement *el)
{
	if (el->tag != GUMBO_TAG_A)
		return false;
	const char *href = attr(el, "href");
	if (!href || href[0] != '#')
		return false;
	strbuf t = STRBUF_INIT;
	for (unsigned i = 0; i < el->children.length; i++)
		gather_text(&t, el->children.data[i]);
	bool alnum = false;
	const unsigned char *p = (const unsigned char *)strbuf_str(&t);
	size_t n = t.len;
	while (n && !alnum) {
		size_t l = atlas_utf8_len(p, n);
		if (!l)
			l = 1;
		unsigned cp = *p;
		if (l == 2)
			cp = (p[0] & 0x1fu) << 6 | (p[1] & 0x3fu);
		else if (l == 3)
			cp = (p[0] & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
		else if (l == 4)
			cp = 0x10000;
		/* letters of any script, but not punctuation, symbols, icons of a private font
		 * (U+E000-U+F8FF) or emoji */
		alnum = cp < 0x80 ? isalnum((int)cp) != 0
				  : cp >= 0xc0 && !(cp >= 0x2000 && cp < 0x2c00) && !(cp >= 0xe000 && cp < 0xf900) &&
					    cp < 0x10000;
		p += l;
		n -= l;
	}
	strbuf_free(&t);
	return !alnum;
}

static void put_collapsed(strbuf *sb, const char *s, bool pre)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == 0xc2 && (unsigned char)s[1] == 0xa0) { /* no-break space: a space */
			s++;
			c = ' ';
		}
		if (!pre && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f')) {
			if (sb->len && sb->buf[sb->len - 1] != ' ' && sb->buf[sb->len - 1] != '\n')
				strbuf_putc(sb, ' ');
			continue;
		}
		if (c == '\r')
			continue;
		strbuf_putc(sb, (char)c);
	}
}

static void gather_text(strbuf *sb, const GumboNode *node)
{
	if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE ||
	    node->type == GUMBO_NODE_CDATA) {
		put_collapsed(sb, node->v.text.text, false);
		return;
	}
	if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE)
		return;
	const GumboElement *el = &node->v.element;
	if (el->tag == GUMBO_TAG_SCRIPT || el->tag == GUMBO_TAG_STYLE || el->tag == GUMBO_TAG_TEMPLATE ||
	    is_permalink(el))
		return;
	for (unsigned i = 0; i < el->children.length; i++)
		gather_text(sb, el->children.data[i]);
}

/* The text under node, whitespace collapsed and trimmed (malloc'd), or NULL when empty. */
static char *text_of(const GumboNode *node)
{
	strbuf sb = STRBUF_INIT;
	gather_text(&sb, node);
	size_t b = 0, e = sb.len;
	while (b < e && sb.buf[b] == ' ')
		b++;
	while (e > b && sb.buf[e - 1] == ' ')
		e--;
	char *r = e > b ? dup_n(sb.buf + b, e - b) : NULL;
	strbuf_free(&sb);
	return r;
}

static char *trimmed_dup(const char *s)
{
	if (!s)
		return NULL;
	strbuf sb = STRBUF_INIT;
	put_collapsed(&sb, s, false);
	size_t b = 0, e = sb.len;
	while (b < e && sb.buf[b] == ' ')
		b++;
	while (e > b && sb.buf[e - 1] == ' ')
		e--;
	char *r = e > b ? dup_n(sb.buf + b, e - b) : NULL;
	strbuf_free(&sb);
	return r;
}

/**************************************************************************************************
** The whole document: metadata and navigation.
*/

typedef struct head_state {
	html_page *p;
	const html_opts *o;
	strmap frag_refs;           /* fragments of href="#..." anywhere in the page */
	int capids;
	const GumboNode *root_sel;  /* first match of the configured content selector */
	const GumboNode *marked, *main, *role_main, *article, *body;
	const GumboNode *crumb_box; /* the first breadcrumb container */
	bool html_crumbs;           /* p->crumbs are that container's */
	bool oom;
} head_state;

/* Room for one more element in an array of n grown by doubling: its capacity is the power of two
 * at or above n, so that a page of thousands of links is not copied at each one. */
static bool full(int n)
{
	return (n & (n - 1)) == 0;
}

static int add_ref(html_ref **v, int *n, const char *href, char *text, int line)
{
	html_ref *r = *v;
	if (full(*n) && !(r = realloc(*v, (size_t)(*n ? *n * 2 : 1) * sizeof(*r)))) {
		free(text);
		return -1;
	}
	*v = r;
	r[*n].href = strdup(href);
	r[*n].text = text;
	r[*n].line = line;
	if (!r[*n].href) {
		free(text);
		return -1;
	}
	(*n)++;
	return 0;
}

static int add_string(char ***v, int *n, const char *s)
{
	char **r = *v;
	if (full(*n) && !(r = realloc(*v, (size_t)(*n ? *n * 2 : 1) * sizeof(*r))))
		return -1;
	*v = r;
	if (!(r[*n] = strdup(s)))
		return -1;
	(*n)++;
	return 0;
}

uint64_t html_id_hash(const char *id, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)id[i]) * 1099511628211ULL;
	return h;
}

/* Adds the anchor name id (an id or a[name]) to the page's list; sets st->oom when out of memory. */
static void add_id(head_state *st, const char *id)
{
	html_page *p = st->p;
	if (!id || !*id)
		return;
	if (p->nids == st->capids) {
		int cap = st->capids ? st->capids * 2 : 16;
		uint64_t *v = realloc(p->ids, (size_t)cap * sizeof(*v));
		if (!v) {
			st->oom = true;
			return;
		}
		p->ids = v;
		st->capids = cap;
	}
	p->ids[p->nids++] = html_id_hash(id, strlen(id));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts the page's anchor names and keeps each once. */
static void finish_ids(html_page *p)
{
	if (p->nids > 1)
		qsort(p->ids, (size_t)p->nids, sizeof(*p->ids), cmp_u64);
	int n = 0;
	for (int i = 0; i < p->nids; i++)
		if (!n || p->ids[n - 1] != p->ids[i])
			p->ids[n++] = p->ids[i];
	p->nids = n;
}

static bool has_id(const html_page *p, const char *id, size_t n)
{
	uint64_t h = html_id_hash(id, n);
	return p->nids && bsearch(&h, p->ids, (size_t)p->nids, sizeof(h), cmp_u64);
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

bool html_has_anchor(const html_page *p, const char *frag)
{
	size_t n = strlen(frag);
	if (!n || strcasecmp(frag, "top") == 0 || strncmp(frag, ":~:", 3) == 0 || has_id(p, frag, n))
		return true;
	char dec[1024];
	size_t o = 0;
	for (const char *c = frag; *c && o + 1 < sizeof(dec); c++) {
		int a, b;
		if (*c == '%' && (a = hex_digit(c[1])) >= 0 && (b = hex_digit(c[2])) >= 0) {
			dec[o++] = (char)(a * 16 + b);
			c += 2;
		} else
			dec[o++] = *c;
	}
	return o != n && has_id(p, dec, o);
}

static void set_once(char **slot, const char *v, bool *oom)
{
	if (*slot || !v)
		return;
	*slot = trimmed_dup(v);
	if (!*slot && *v && !oom)
		*oom = true;
}

static bool is_crumb_box(const GumboElement *el)
{
	const char *label = attr(el, "aria-label");
	if (label && strcasestr(label, "breadcrumb"))
		return true;
	const char *cls = attr(el, "class");
	if (cls && (strcasestr(cls, "breadcrumb") != NULL))
		return el->tag == GUMBO_TAG_NAV || el->tag == GUMBO_TAG_OL || el->tag == GUMBO_TAG_UL ||
		       el->tag == GUMBO_TAG_DIV;
	/* Sphinx's "related" bar: the chain of parent pages above the page */
	return el->tag == GUMBO_TAG_DIV && has_token(cls, "related");
}

/* Ends a breadcrumb trail read into trail[0..n): its last entry is one of the page's trail ends
 * (the page itself, or the page it is filed under); the first trail found, or the first trail of
 * links in the page's HTML, becomes p->crumbs. Takes the trail. */
static void end_trail(head_state *st, html_ref *trail, int n, bool html)
{
	html_page *p = st->p;
	if (n && add_ref(&p->trail_ends, &p->ntrail_ends, trail[n - 1].href,
			 trail[n - 1].text ? strdup(trail[n - 1].text) : NULL, trail[n - 1].line))
		st->oom = true;
	if (n && (!p->ncrumbs || (html && !st->html_crumbs))) {
		for (int i = 0; i < p->ncrumbs; i++) {
			free(p->crumbs[i].href);
			free(p->crumbs[i].text);
		}
		free(p->crumbs);
		p->crumbs = trail;
		p->ncrumbs = n;
		st->html_crumbs = html;
		return;
	}
	for (int i = 0; i < n; i++) {
		free(trail[i].href);
		free(trail[i].text);
	}
	free(trail);
}

/* Reads one schema.org BreadcrumbList (its itemListElement, in order) as a trail. */
static void read_crumb_list(head_state *st, cJSON *list, int line)
{
	html_ref *trail = NULL;
	int n = 0;
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "itemListElement");
	cJSON *e;
	cJSON_ArrayForEach(e, items)
	{
		cJSON *item = cJSON_GetObjectItemCaseSensitive(e, "item");
		cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		const char *href = NULL;
		if (cJSON_IsString(item))
			href = item->valuestring;
		else if (item) {
			cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "@id");
			cJSON *url = cJSON_GetObjectItemCaseSensitive(item, "url");
			if (!name)
				name = cJSON_GetObjectItemCaseSensitive(item, "name");
			href = cJSON_IsString(id) ? id->valuestring : cJSON_IsString(url) ? url->valuestring : NULL;
		}
		if (href && add_ref(&trail, &n, href, cJSON_IsString(name) ? trimmed_dup(name->valuestring) : NULL, line))
			st->oom = true;
	}
	end_trail(st, trail, n, false);
}

/* Reads every BreadcrumbList of a JSON-LD block (the block itself, an array of objects, or an
 * @graph): a page filed in several places has one trail for each. */
static void read_json_ld(head_state *st, const GumboElement *el)
{
	if (el->children.length != 1)
		return;
	const GumboNode *t = el->children.data[0];
	if (t->type != GUMBO_NODE_TEXT && t->type != GUMBO_NODE_CDATA && t->type != GUMBO_NODE_WHITESPACE)
		return;
	cJSON *root = cJSON_Parse(t->v.text.text);
	if (!root)
		return;
	cJSON *graph = cJSON_GetObjectItemCaseSensitive(root, "@graph");
	cJSON *cands[2] = { root, graph };
	for (int c = 0; c < 2; c++) {
		cJSON *x = cands[c];
		if (!x)
			continue;
		for (cJSON *it = cJSON_IsArray(x) ? x->child : x; it; it = cJSON_IsArray(x) ? it->next : NULL) {
			cJSON *type = cJSON_GetObjectItemCaseSensitive(it, "@type");
			if (cJSON_IsString(type) && strcmp(type->valuestring, "BreadcrumbList") == 0)
				read_crumb_list(st, it, (int)el->start_pos.line);
		}
	}
	cJSON_Delete(root);
}

/* Appends the links under node (href and text, in order) to refs[0..*n). */
static void read_links(head_state *st, const GumboNode *node, html_ref **refs, int *n)
{
	if (node->type != GUMBO_NODE_ELEMENT)
		return;
	const GumboElement *el = &node->v.element;
	if (el->tag == GUMBO_TAG_A) {
		const char *href = attr(el, "href");
		if (href && *href && *href != '#' && add_ref(refs, n, href, text_of(node), (int)el->start_pos.line))
			st->oom = true;
		return;
	}
	for (unsigned i = 0; i < el->children.length; i++)
		read_links(st, el->children.data[i], refs, n);
}

/* A list marked data-atlas-guide, wherever it is in the page: a guide section of its links. */
static void read_guide_list(head_state *st, const GumboNode *node, const char *mark)
{
	html_page *p = st->p;
	html_guide *g = realloc(p->guides, (size_t)(p->nguides + 1) * sizeof(*g));
	if (!g) {
		st->oom = true;
		return;
	}
	p->guides = g;
	g = &g[p->nguides++];
	memset(g, 0, sizeof(*g));
	g->title = *mark ? trimmed_dup(mark) : NULL;
	g->line = (int)node->v.element.start_pos.line;
	read_links(st, node, &g->steps, &g->nsteps);
}

static void read_head(head_state *st, const GumboNode *node)
{
	if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE)
		return;
	const GumboElement *el = &node->v.element;
	html_page *p = st->p;
	add_id(st, attr(el, "id"));
	if (el->tag == GUMBO_TAG_A)
		add_id(st, attr(el, "name"));
	switch (el->tag) {
	case GUMBO_TAG_HTML:
	case GUMBO_TAG_BODY:
		if (attr(el, "data-atlas-ignore"))
			p->skip = true;
		if (el->tag == GUMBO_TAG_BODY)
			st->body = node;
		break;
	case GUMBO_TAG_TITLE:
		if (!p->title) {
			p->title = text_of(node);
			p->title_line = (int)el->start_pos.line;
		}
		return;
	case GUMBO_TAG_META: {
		const char *name = attr(el, "name"), *prop = attr(el, "property"), *content = attr(el, "content");
		const char *key = name ? name : prop;
		if (!key || !content)
			break;
		if (strcasecmp(key, "robots") == 0 && strcasestr(content, "noindex"))
			p->skip = true;
		else if (strcasecmp(key, "description") == 0)
			set_once(&p->description, content, &st->oom);
		else if (strcasecmp(key, "og:description") == 0 && !p->description)
			set_once(&p->description, content, &st->oom);
		else if (strcasecmp(key, "og:title") == 0)
			set_once(&p->og_title, content, &st->oom);
		else if (strcasecmp(key, "og:url") == 0)
			set_once(&p->og_url, content, &st->oom);
		else if (strcasecmp(key, "og:image") == 0)
			set_once(&p->image, content, &st->oom);
		else if (strcasecmp(key, "keywords") == 0)
			set_once(&p->keywords, content, &st->oom);
		else if (strcasecmp(key, "article:modified_time") == 0)
			set_once(&p->modified, content, &st->oom);
		break;
	}
	case GUMBO_TAG_LINK:
	case GUMBO_TAG_A: {
		const char *rel = attr(el, "rel"), *href = attr(el, "href");
		if (!href)
			break;
		if (href[0] == '#' && href[1])
			strmap_put(&st->frag_refs, href + 1, strlen(href + 1), 0, NULL);
		if (has_token(rel, "next") && !p->next) {
			p->next = strdup(href);
			p->next_line = (int)el->start_pos.line;
		}
		if (has_token(rel, "up"))
			set_once(&p->up, href, &st->oom);
		if (has_token(rel, "canonical"))
			set_once(&p->canonical, href, &st->oom);
		if ((has_token(rel, "index") || has_token(rel, "search")) &&
		    add_string(&p->index_refs, &p->nindex_refs, href))
			st->oom = true;
		const char *key = attr(el, "accesskey");
		if (el->tag == GUMBO_TAG_A && key && strcasecmp(key, "u") == 0)
			set_once(&p->up, href, &st->oom);
		break;
	}
	case GUMBO_TAG_SCRIPT: {
		const char *type = attr(el, "type");
		if (type && strcasecmp(type, "application/ld+json") == 0)
			read_json_ld(st, el);
		return;
	}
	case GUMBO_TAG_MAIN:
		if (!st->main)
			st->main = node;
		break;
	case GUMBO_TAG_ARTICLE:
		if (!st->article)
			st->article = node;
		break;
	case GUMBO_TAG_H1:
		if (!p->h1)
			p->h1 = text_of(node);
		break;
	default:
		break;
	}
	if (!st->marked && attr(el, "data-atlas-body"))
		st->marked = node;
	if (!st->role_main) {
		const char *role = attr(el, "role");
		if (role && strcasecmp(role, "main") == 0)
			st->role_main = node;
	}
	if (st->o->content && !st->root_sel && sel_match(st->o->content, el))
		st->root_sel = node;
	if (!st->crumb_box && el->tag != GUMBO_TAG_BODY && el->tag != GUMBO_TAG_HTML && is_crumb_box(el)) {
		html_ref *trail = NULL;
		int n = 0;
		read_links(st, node, &trail, &n);
		if (n) /* a box without links: not the trail */
			st->crumb_box = node;
		end_trail(st, trail, n, true);
	}
	const char *mark = attr(el, "data-atlas-guide");
	if (mark)
		read_guide_list(st, node, mark);
	for (unsigned i = 0; i < el->children.length; i++)
		read_head(st, el->children.data[i]);
}

/**************************************************************************************************
** The content root: sections, links, definitions.
*/

typedef struct wrapper {
	const char *id;
	bool headed;        /* a heading was seen inside it */
} wrapper;

typedef struct body_state {
	html_page *p;
	const html_opts *o;
	const strmap *frag_refs;
	strbuf text;
	size_t sec_start;   /* where the current section's body starts in text */
	int cap_secs;
	bool seen_heading;  /* a heading was seen (the first may be the page's title) */
	int pre;            /* depth inside <pre> */
	wrapper *wrappers;
	int nwrappers, capwrappers;
	int title_level;    /* level of the page's title heading while no text has followed it, or 0 */
	bool oom;
} body_state;

static void body_node(body_state *st, const GumboNode *node);

static bool removed(const body_state *st, const GumboElement *el)
{
	switch (el->tag) {
	case GUMBO_TAG_NAV:
	case GUMBO_TAG_HEADER:
	case GUMBO_TAG_FOOTER:
	case GUMBO_TAG_ASIDE:
	case GUMBO_TAG_SCRIPT:
	case GUMBO_TAG_STYLE:
	case GUMBO_TAG_TEMPLATE:
	case GUMBO_TAG_NOSCRIPT:
	case GUMBO_TAG_HEAD:
		return true;
	default:
		break;
	}
	if (attr(el, "hidden") || attr(el, "data-atlas-ignore"))
		return true;
	return sel_match(st->o->ignore, el);
}

static bool is_block(GumboTag t)
{
	switch (t) {
	case GUMBO_TAG_P: case GUMBO_TAG_DIV: case GUMBO_TAG_LI: case GUMBO_TAG_UL: case GUMBO_TAG_OL:
	case GUMBO_TAG_DL: case GUMBO_TAG_DT: case GUMBO_TAG_DD: case GUMBO_TAG_TABLE: case GUMBO_TAG_TR:
	case GUMBO_TAG_PRE: case GUMBO_TAG_BLOCKQUOTE: case GUMBO_TAG_SECTION: case GUMBO_TAG_ARTICLE:
	case GUMBO_TAG_MAIN: case GUMBO_TAG_FIGURE: case GUMBO_TAG_FIGCAPTION: case GUMBO_TAG_H1:
	case GUMBO_TAG_H2: case GUMBO_TAG_H3: case GUMBO_TAG_H4: case GUMBO_TAG_H5: case GUMBO_TAG_H6:
	case GUMBO_TAG_BR: case GUMBO_TAG_HR: case GUMBO_TAG_CAPTION: case GUMBO_TAG_DETAILS:
	case GUMBO_TAG_SUMMARY: case GUMBO_TAG_ADDRESS: case GUMBO_TAG_FORM: case GUMBO_TAG_FIELDSET:
	case GUMBO_TAG_BODY:
		return true;
	default:
		return false;
	}
}

/* Ends the line of the current section's body, unless it is empty or already ended. */
static void break_line(body_state *st)
{
	strbuf *t = &st->text;
	while (t->len > st->sec_start && t->buf[t->len - 1] == ' ')
		t->buf[--t->len] = '\0';
	if (t->len > st->sec_start && t->buf[t->len - 1] != '\n')
		strbuf_putc(t, '\n');
}

static void body_text(body_state *st, const char *s)
{
	strbuf *t = &st->text;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\r')
			continue;
		if (c == 0xc2 && (unsigned char)s[1] == 0xa0) { /* no-break space: a space */
			s++;
			c = ' ';
		}
		if (!st->pre && (c == ' ' || c == '\t' || c == '\n' || c == '\f')) {
			if (t->len > st->sec_start && t->buf[t->len - 1] != ' ' && t->buf[t->len - 1] != '\n')
				strbuf_putc(t, ' ');
			continue;
		}
		strbuf_putc(t, (char)c);
		st->title_level = 0;
	}
}

/* Ends the current section's body: trimmed, NUL-terminated. */
static void close_section(body_state *st)
{
	break_line(st);
	strbuf *t = &st->text;
	while (t->len > st->sec_start && (t->buf[t->len - 1] == '\n' || t->buf[t->len - 1] == ' '))
		t->len--;
	strbuf_putc(t, '\0');
	st->sec_start = t->len;
}

/* Starts a section whose body follows in the text; takes heading and anchor (freed on failure). */
static void open_section(body_state *st, int level, char *heading, char *anchor, int line)
{
	html_page *p = st->p;
	if (p->nsecs == st->cap_secs) {
		int cap = st->cap_secs ? st->cap_secs * 2 : 16;
		html_sec *s = realloc(p->secs, (size_t)cap * sizeof(*s));
		if (!s) {
			st->oom = true;
			free(heading);
			free(anchor);
			return;
		}
		p->secs = s;
		st->cap_secs = cap;
	}
	st->sec_start = st->text.len;
	p->secs[p->nsecs++] = (html_sec){ level, heading, anchor, line, st->text.len };
}

static void new_section(body_state *st, int level, char *heading, char *anchor, int line)
{
	close_section(st);
	open_section(st, level, heading, anchor, line);
}

/* The first id among the heading's own, the innermost enclosing element's that holds no earlier
 * heading, and a named anchor or permalink inside it that the page links to; else the first of
 * them that exists; else NULL. */
static char *pick_anchor(body_state *st, const GumboElement *h)
{
	const char *cand[8];
	int n = 0;
	const char *own = attr(h, "id");
	if (own && *own)
		cand[n++] = own;
	for (int i = st->nwrappers - 1; i >= 0; i--)
		if (!st->wrappers[i].headed) {
			cand[n++] = st->wrappers[i].id;
			break;
		}
	/* named anchors and permalinks inside the heading (DocBook: <h2><a id="x"></a>Title</h2>) */
	const GumboVector *kids = &h->children;
	for (unsigned i = 0; i < kids->length && n < 8; i++) {
		const GumboNode *k = kids->data[i];
		if (k->type != GUMBO_NODE_ELEMENT || k->v.element.tag != GUMBO_TAG_A)
			continue;
		const char *id = attr(&k->v.element, "id");
		if (!id)
			id = attr(&k->v.element, "name");
		if (id && *id && n < 8)
			cand[n++] = id;
		const char *href = attr(&k->v.element, "href");
		if (href && href[0] == '#' && href[1] && n < 8)
			cand[n++] = href + 1;
	}
	for (int i = 0; i < st->nwrappers; i++)
		st->wrappers[i].headed = true;
	for (int i = 0; i < n; i++)
		if (strmap_get(st->frag_refs, cand[i]))
			return strdup(cand[i]);
	return n ? strdup(cand[0]) : NULL;
}

static int heading_level(GumboTag t)
{
	switch (t) {
	case GUMBO_TAG_H1: return 1;
	case GUMBO_TAG_H2: return 2;
	case GUMBO_TAG_H3: return 3;
	case GUMBO_TAG_H4: return 4;
	case GUMBO_TAG_H5: return 5;
	case GUMBO_TAG_H6: return 6;
	default: return 0;
	}
}

/* Whether heading text is the page's title: the same as the <title>, or its beginning (the rest
 * being the site's name). */
static bool is_title_text(const char *heading, const char *title)
{
	if (!heading || !title)
		return false;
	size_t n = strlen(heading);
	return strncasecmp(heading, title, n) == 0 &&
	       (title[n] == '\0' || !isalnum((unsigned char)title[n]));
}

/* Records the links inside a heading, which is read as a whole, not walked like the body. */
static void heading_links(body_state *st, const GumboNode *node)
{
	if (node->type != GUMBO_NODE_ELEMENT)
		return;
	const GumboElement *el = &node->v.element;
	const char *href = el->tag == GUMBO_TAG_A ? attr(el, "href") : NULL;
	if (href && *href && href[0] != '#' &&
	    add_ref(&st->p->links, &st->p->nlinks, href, text_of(node), (int)el->start_pos.line))
		st->oom = true;
	for (unsigned i = 0; i < el->children.length; i++)
		heading_links(st, el->children.data[i]);
}

/* Whether the heading is the title of an admonition (DocBook's <div class="note"><h3>Note</h3>):
 * the first element of an element classed note, warning, tip, caution, important, admonition or
 * sidebar. */
static bool admonition_title(const GumboNode *node)
{
	const GumboNode *par = node->parent;
	if (!par || par->type != GUMBO_NODE_ELEMENT)
		return false;
	const char *cls = attr(&par->v.element, "class");
	if (!cls || !(has_token(cls, "note") || has_token(cls, "warning") || has_token(cls, "tip") ||
		      has_token(cls, "caution") || has_token(cls, "important") || has_token(cls, "admonition") ||
		      has_token(cls, "sidebar")))
		return false;
	for (unsigned i = 0; i < node->index_within_parent; i++) {
		const GumboNode *k = par->v.element.children.data[i];
		if (k->type == GUMBO_NODE_ELEMENT || k->type == GUMBO_NODE_TEXT)
			return false;
	}
	return true;
}

static void body_heading(body_state *st, const GumboNode *node, int level)
{
	const GumboElement *el = &node->v.element;
	heading_links(st, node);
	char *heading = text_of(node);
	bool first = !st->seen_heading;
	st->seen_heading = true;
	if (first && st->p->nsecs == 1 && (level == 1 || is_title_text(heading, st->p->title))) {
		/* the page's own title heading: the title, not a section */
		for (int i = 0; i < st->nwrappers; i++)
			st->wrappers[i].headed = true;
		if (!st->p->h1)
			st->p->h1 = heading;
		else
			free(heading);
		st->title_level = level;
		return;
	}
	/* a heading right below the title that skips a level is a byline or subtitle (DocBook's
	 * corporate author h3 under the book's h1), not a section */
	bool subtitle = st->title_level && level > st->title_level + 1;
	if (level >= 5 || !heading || admonition_title(node) || subtitle) {
		/* minor headings and an admonition's title ("Note") stay lines of their section */
		break_line(st);
		if (heading)
			body_text(st, heading);
		break_line(st);
		free(heading);
		return;
	}
	st->title_level = 0;
	new_section(st, level == 1 ? 2 : level, heading, pick_anchor(st, el), (int)el->start_pos.line);
}

static void body_children(body_state *st, const GumboElement *el)
{
	for (unsigned i = 0; i < el->children.length; i++)
		body_node(st, el->children.data[i]);
}

static void body_link(body_state *st, const GumboNode *node)
{
	const GumboElement *el = &node->v.element;
	const char *href = attr(el, "href");
	size_t start = st->text.len;
	size_t sec = (size_t)st->p->nsecs;
	body_children(st, el);
	if (href && href[0] == '#' && !html_has_anchor(st->p, href + 1) &&
	    add_ref(&st->p->bad_frags, &st->p->nbad_frags, href, NULL, (int)el->start_pos.line))
		st->oom = true;
	if (!href || !*href || href[0] == '#')
		return;
	char *text = NULL;
	if ((size_t)st->p->nsecs == sec && st->text.len > start)
		text = trimmed_dup(st->text.buf + start);
	if (text)
		st->p->link_text += strlen(text);
	if (add_ref(&st->p->links, &st->p->nlinks, href, text, (int)el->start_pos.line))
		st->oom = true;
}

static void body_node(body_state *st, const GumboNode *node)
{
	if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE ||
	    node->type == GUMBO_NODE_CDATA) {
		body_text(st, node->v.text.text);
		return;
	}
	if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE)
		return;
	const GumboElement *el = &node->v.element;
	if (removed(st, el) || is_permalink(el))
		return;
	int level = heading_level(el->tag);
	if (level) {
		body_heading(st, node, level);
		return;
	}
	if (el->tag == GUMBO_TAG_A) {
		body_link(st, node);
		return;
	}
	if (el->tag == GUMBO_TAG_IMG) {
		const char *alt = attr(el, "alt");
		if (alt && *alt) {
			body_text(st, " ");
			body_text(st, alt);
			body_text(st, " ");
		}
		return;
	}
	bool block = is_block(el->tag);
	if (block)
		break_line(st);
	else if (el->tag == GUMBO_TAG_TD || el->tag == GUMBO_TAG_TH)
		body_text(st, " ");
	const char *id = attr(el, "id");
	bool pushed = false;
	if (id && *id) {
		if (st->nwrappers == st->capwrappers) {
			int cap = st->capwrappers ? st->capwrappers * 2 : 16;
			wrapper *w = realloc(st->wrappers, (size_t)cap * sizeof(*w));
			if (!w) {
				st->oom = true;
				return;
			}
			st->wrappers = w;
			st->capwrappers = cap;
		}
		st->wrappers[st->nwrappers++] = (wrapper){ id, false };
		pushed = true;
	}
	if (el->tag == GUMBO_TAG_DT && id && *id) {
		char *def = text_of(node);
		if (def && add_string(&st->p->defs, &st->p->ndefs, def))
			st->oom = true;
		free(def);
	}
	if (el->tag == GUMBO_TAG_P && !st->p->first_para) {
		char *t = text_of(node);
		if (t && strlen(t) >= 20 && strchr(t, ' '))
			st->p->first_para = t;
		else
			free(t);
	}
	if (el->tag == GUMBO_TAG_PRE)
		st->pre++;
	body_children(st, el);
	if (el->tag == GUMBO_TAG_PRE)
		st->pre--;
	if (pushed)
		st->nwrappers--;
	if (block || el->tag == GUMBO_TAG_BR)
		break_line(st);
}

static int count_words(const char *s)
{
	int n = 0, in = 0;
	for (; *s; s++) {
		int w = (unsigned char)*s > ' ';
		if (w && !in)
			n++;
		in = w;
	}
	return n;
}

/* The parse tree's memory: gumbo allocates for every node, attribute and piece of text, and
 * freeing them one by one was a fifth of reading a page. They come from chunks that are let go
 * together when the page is read; the first chunk is kept for the thread's next page. */
typedef struct tree_chunk {
	struct tree_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
} tree_chunk;

typedef struct tree_arena {
	tree_chunk *head;
	bool oom;
} tree_arena;

#define TREE_CHUNK (1u << 20)

static _Thread_local tree_arena thread_arena;

static void *tree_alloc(void *ud, size_t size)
{
	tree_arena *a = ud;
	size = (size + 15) & ~(size_t)15;
	tree_chunk *c = a->head;
	if (!c || c->used + size > c->size) {
		size_t cs = size > TREE_CHUNK / 4 ? size : TREE_CHUNK;
		tree_chunk *nc = malloc(sizeof(*nc) + cs);
		if (!nc) {
			/* gumbo does not check: nothing sensible is left to do */
			a->oom = true;
			abort();
		}
		nc->size = cs;
		nc->used = 0;
		if (c && cs != TREE_CHUNK) {
			/* a large block of its own, behind the chunk being filled */
			nc->next = c->next;
			c->next = nc;
			nc->used = size;
			return nc->data;
		}
		nc->next = c;
		a->head = nc;
		c = nc;
	}
	void *r = c->data + c->used;
	c->used += size;
	return r;
}

static void tree_free(void *ud, void *ptr)
{
	(void)ud;
	(void)ptr;
}

/* Lets go of every chunk but the last one (the oldest, of TREE_CHUNK bytes), emptied. */
static void tree_reset(tree_arena *a)
{
	tree_chunk *c = a->head;
	while (c && c->next) {
		tree_chunk *n = c->next;
		free(c);
		c = n;
	}
	if (c && c->size != TREE_CHUNK) {
		free(c);
		c = NULL;
	}
	if (c)
		c->used = 0;
	a->head = c;
}

void html_thread_done(void)
{
	tree_reset(&thread_arena);
	free(thread_arena.head);
	thread_arena.head = NULL;
}

int html_read(html_page *p, const char *data, size_t n, const html_opts *o)
{
	memset(p, 0, sizeof(*p));
	GumboOptions go = kGumboDefaultOptions;
	go.allocator = tree_alloc;
	go.deallocator = tree_free;
	go.userdata = &thread_arena;
	go.max_errors = 0;
	GumboOutput *out = gumbo_parse_with_options(&go, data, n);
	if (!out) {
		tree_reset(&thread_arena);
		return -1;
	}
	head_state hs;
	memset(&hs, 0, sizeof(hs));
	hs.p = p;
	hs.o = o;
	read_head(&hs, out->root);
	finish_ids(p);
	const GumboNode *root = hs.root_sel ? hs.root_sel : hs.marked ? hs.marked : hs.main ? hs.main
			      : hs.role_main ? hs.role_main : hs.article ? hs.article : hs.body ? hs.body : out->root;
	body_state bs;
	memset(&bs, 0, sizeof(bs));
	bs.p = p;
	bs.o = o;
	bs.frag_refs = &hs.frag_refs;
	p->body_line = (int)root->v.element.start_pos.line;
	open_section(&bs, 0, NULL, NULL, p->body_line);
	if (!p->skip)
		body_children(&bs, &root->v.element);
	close_section(&bs);
	free(bs.wrappers);
	strmap_free(&hs.frag_refs);
	tree_reset(&thread_arena); /* the whole tree at once, for gumbo_destroy_output */
	bool oom = hs.oom || bs.oom || bs.text.oom;
	p->text_len = bs.text.len ? bs.text.len - 1 : 0;
	p->text = strbuf_detach(&bs.text);
	if (!p->text)
		oom = true;
	if (oom) {
		html_page_free(p);
		return -1;
	}
	for (int i = 0; i < p->nsecs; i++)
		p->words += (p->secs[i].heading ? count_words(p->secs[i].heading) : 0) +
			    count_words(p->text + p->secs[i].body_off);
	return 0;
}

static void free_refs(html_ref *r, int n)
{
	for (int i = 0; i < n; i++) {
		free(r[i].href);
		free(r[i].text);
	}
	free(r);
}

void html_page_free(html_page *p)
{
	if (!p)
		return;
	free(p->title);
	free(p->og_title);
	free(p->h1);
	free(p->description);
	free(p->first_para);
	free(p->keywords);
	free(p->image);
	free(p->modified);
	free(p->canonical);
	free(p->og_url);
	free(p->next);
	free(p->up);
	free_refs(p->crumbs, p->ncrumbs);
	free_refs(p->trail_ends, p->ntrail_ends);
	for (int i = 0; i < p->nindex_refs; i++)
		free(p->index_refs[i]);
	free(p->index_refs);
	free_refs(p->links, p->nlinks);
	free(p->ids);
	free_refs(p->bad_frags, p->nbad_frags);
	for (int i = 0; i < p->ndefs; i++)
		free(p->defs[i]);
	free(p->defs);
	for (int i = 0; i < p->nsecs; i++) {
		free(p->secs[i].heading);
		free(p->secs[i].anchor);
	}
	free(p->secs);
	free(p->text);
	for (int i = 0; i < p->nguides; i++) {
		free(p->guides[i].title);
		free_refs(p->guides[i].steps, p->guides[i].nsteps);
	}
	free(p->guides);
	memset(p, 0, sizeof(*p));
}

/**************************************************************************************************
** Charsets.
*/

/* The charset named by a <meta charset> or <meta http-equiv content="...; charset=..."> in the
 * first 1024 bytes (the HTML standard's prescan, simplified), written into cs; false when none. */
static bool meta_charset(const char *data, size_t n, char *cs)
{
	size_t lim = n < 1024 ? n : 1024;
	for (size_t i = 0; i + 8 < lim; i++) {
		if (strncasecmp(data + i, "charset", 7) != 0)
			continue;
		size_t j = i + 7;
		while (j < lim && isspace((unsigned char)data[j]))
			j++;
		if (j >= lim || data[j] != '=')
			continue;
		j++;
		while (j < lim && (isspace((unsigned char)data[j]) || data[j] == '"' || data[j] == '\''))
			j++;
		size_t k = 0;
		while (j < lim && k < 63 && (isalnum((unsigned char)data[j]) || strchr("-_:.", data[j])))
			cs[k++] = data[j++];
		cs[k] = '\0';
		if (k)
			return true;
	}
	return false;
}

int html_decode(const char *data, size_t n, char **out, size_t *outn, long *replaced, char *charset)
{
	*out = NULL;
	*outn = 0;
	*replaced = 0;
	const unsigned char *u = (const unsigned char *)data;
	size_t skip = 0;
	if (n >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) {
		strcpy(charset, "UTF-8");
		skip = 3;
	} else if (n >= 2 && u[0] == 0xff && u[1] == 0xfe) {
		strcpy(charset, "UTF-16LE");
		skip = 2;
	} else if (n >= 2 && u[0] == 0xfe && u[1] == 0xff) {
		strcpy(charset, "UTF-16BE");
		skip = 2;
	} else if (!meta_charset(data, n, charset))
		strcpy(charset, "UTF-8");
	data += skip;
	n -= skip;
	static const char rep[] = "\xef\xbf\xbd";
	strbuf sb = STRBUF_INIT;
	bool utf8 = strcasecmp(charset, "utf-8") == 0 || strcasecmp(charset, "utf8") == 0;
	/* a page saying it is UTF-16 without a byte order mark was read as ASCII to find that: it
	 * is not UTF-16 (the standard reads it as UTF-8) */
	if (!skip && strncasecmp(charset, "utf-16", 6) == 0) {
		strcpy(charset, "UTF-8");
		utf8 = true;
	}
	if (utf8) {
		strcpy(charset, "UTF-8");
		if (strbuf_reserve(&sb, n + 1))
			return -2;
		size_t i = 0;
		while (i < n) {
			long bad = atlas_utf8_invalid_at(data + i, n - i);
			size_t good = bad < 0 ? n - i : (size_t)bad;
			strbuf_append(&sb, data + i, good);
			i += good;
			if (bad < 0)
				break;
			strbuf_append(&sb, rep, 3);
			(*replaced)++;
			i++;
		}
	} else {
		iconv_t cd = iconv_open("UTF-8", charset);
		if (cd == (iconv_t)-1)
			return -1;
		if (strbuf_reserve(&sb, n * 2 + 16)) {
			iconv_close(cd);
			return -2;
		}
		char *in = (char *)data;
		size_t inleft = n;
		while (inleft > 0) {
			if (strbuf_reserve(&sb, inleft * 2 + 16))
				break;
			char *o = sb.buf + sb.len;
			size_t oleft = sb.cap - sb.len - 1;
			size_t r = iconv(cd, &in, &inleft, &o, &oleft);
			sb.len = (size_t)(o - sb.buf);
			sb.buf[sb.len] = '\0';
			if (r != (size_t)-1)
				break;
			if (errno == E2BIG)
				continue;
			/* an invalid or cut-short sequence: one byte replaced, then on */
			strbuf_append(&sb, rep, 3);
			(*replaced)++;
			in++;
			inleft--;
		}
		iconv_close(cd);
	}
	if (sb.oom) {
		strbuf_free(&sb);
		return -2;
	}
	if (sb.buf)
		sb.buf[sb.len] = '\0'; /* an empty page: reserved, never appended to */
	*outn = sb.len;
	*out = strbuf_detach(&sb);
	if (!*out) {
		*out = strdup("");
		if (!*out)
			return -2;
	}
	return 0;
}
