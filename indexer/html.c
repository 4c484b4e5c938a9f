/* html.c - one built HTML page read with gumbo (an HTML5 parser: malformed pages are read as
 * browsers read them): its text, its metadata and navigation (selectors: html_select.c; the
 * content root: html_content.c; charsets: html_charset.c). */
#include "html_internal.h"
#include "error.h"
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
** Text.
*/

/* Appends the text under node to sb, whitespace collapsed; links to a place of the page with no
 * letter or digit in their text (permalink marks such as "¶" or "#") are left out. */
static void gather_text(strbuf *sb, const GumboNode *node);

bool is_permalink(const GumboElement *el)
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
char *text_of(const GumboNode *node)
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

char *trimmed_dup(const char *s)
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

/* Room for one more element in an array of n grown by doubling: its capacity is the power of two
 * at or above n, so that a page of thousands of links is not copied at each one. */
static bool full(int n)
{
	return (n & (n - 1)) == 0;
}

int add_ref(html_ref **v, int *n, const char *href, char *text, int line)
{
	html_ref *r = *v;
	if (full(*n) && !(r = realloc(*v, (size_t)(*n ? *n * 2 : 1) * sizeof(*r)))) {
		free(text);
		return ATLAS_ENOMEM;
	}
	*v = r;
	r[*n].href = strdup(href);
	r[*n].text = text;
	r[*n].line = line;
	r[*n].listed = false;
	if (!r[*n].href) {
		free(text);
		return ATLAS_ENOMEM;
	}
	(*n)++;
	return 0;
}

int add_string(char ***v, int *n, const char *s)
{
	char **r = *v;
	if (full(*n) && !(r = realloc(*v, (size_t)(*n ? *n * 2 : 1) * sizeof(*r))))
		return ATLAS_ENOMEM;
	*v = r;
	if (!(r[*n] = strdup(s)))
		return ATLAS_ENOMEM;
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
void finish_ids(html_page *p)
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

/* Whether frag is a range of lines, "160-173" or "L10-L20", whose first line is an id of p: a
 * source listing's lines, a range its script marks (rustdoc's, a forge's). */
static bool has_line_range(const html_page *p, const char *frag, size_t n)
{
	const char *dash = memchr(frag, '-', n);
	if (!dash || dash == frag)
		return false;
	for (const char *c = frag; c < dash; c++)
		if (!isdigit((unsigned char)*c) && !(c == frag && *c == 'L'))
			return false;
	for (const char *c = dash + 1; c < frag + n; c++)
		if (!isdigit((unsigned char)*c) && !(c == dash + 1 && *c == 'L'))
			return false;
	return has_id(p, frag, (size_t)(dash - frag));
}

bool html_has_anchor(const html_page *p, const char *frag)
{
	size_t n = strlen(frag);
	if (!n || strcasecmp(frag, "top") == 0 || strncmp(frag, ":~:", 3) == 0 || has_id(p, frag, n) ||
	    has_line_range(p, frag, n))
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
	if (!*slot && v[strspn(v, " \t\n\r\f")])
		*oom = true; /* v had text: trimmed_dup could not copy it */
}

/* The URL a <meta http-equiv="refresh"> content sends the reader to ("0; url=next.html",
 * "5;URL='next.html'", "0, next.html"), as the HTML standard's declarative refresh reads it: a
 * time, then ';' or ',', then the URL, "url=" and quotes around it optional. Returns a malloc'd
 * string, or NULL when the content names no URL (a page that reloads itself) or memory runs out
 * (*oom set). */
static char *refresh_url(const char *content, bool *oom)
{
	const char *c = content + strspn(content, " \t\n\r\f");
	if (!isdigit((unsigned char)*c) && *c != '.')
		return NULL;
	c += strspn(c, "0123456789.");
	c += strspn(c, " \t\n\r\f");
	if (*c != ';' && *c != ',')
		return NULL;
	c++;
	c += strspn(c, " \t\n\r\f");
	if (tolower((unsigned char)c[0]) == 'u' && tolower((unsigned char)c[1]) == 'r' &&
	    tolower((unsigned char)c[2]) == 'l') {
		const char *e = c + 3;
		while (*e == ' ' || *e == '\t' || *e == '\n' || *e == '\r' || *e == '\f')
			e++;
		if (*e == '=') {
			c = e + 1;
			c += strspn(c, " \t\n\r\f");
		}
	}
	size_t n = strlen(c);
	if (*c == '"' || *c == '\'') {
		const char *q = strchr(c + 1, *c);
		n = q ? (size_t)(q - c - 1) : n - 1;
		c++;
	}
	while (n && strchr(" \t\n\r\f", c[n - 1]))
		n--;
	if (!n)
		return NULL;
	char *r = strndup(c, n);
	if (!r)
		*oom = true;
	return r;
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

/* Reads a breadcrumb box's trail into refs[0..n) as read_links does, but for the entries of Sphinx's
 * "related" bar (related set) of class "right": those are the page's relations (the general index,
 * the module index, the next and previous pages), floated to the bar's right, not the pages above
 * it. */
static void read_trail(head_state *st, const GumboNode *node, bool related, html_ref **refs, int *n)
{
	if (node->type != GUMBO_NODE_ELEMENT)
		return;
	const GumboElement *el = &node->v.element;
	if (related && el->tag == GUMBO_TAG_LI && has_token(attr(el, "class"), "right"))
		return;
	if (el->tag == GUMBO_TAG_A) {
		read_links(st, node, refs, n);
		return;
	}
	for (unsigned i = 0; i < el->children.length; i++)
		read_trail(st, el->children.data[i], related, refs, n);
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

/* Whether anchor el is marked as the link to the next page without rel=next: accesskey n (DocBook's
 * and Sphinx's navigation bars), or a class token "next" or one ending in "-next" or "_next". */
static bool next_marked(const GumboElement *el)
{
	const char *key = attr(el, "accesskey"), *cls = attr(el, "class");
	if (key && strcasecmp(key, "n") == 0)
		return true;
	for (const char *t = cls; t && *t;) {
		while (*t == ' ' || *t == '\t' || *t == '\n')
			t++;
		size_t n = strcspn(t, " \t\n");
		if (n == 4 ? strncmp(t, "next", 4) == 0
			   : n > 5 && strncmp(t + n - 4, "next", 4) == 0 && (t[n - 5] == '-' || t[n - 5] == '_'))
			return true;
		t += n;
	}
	return false;
}

void read_head(head_state *st, const GumboNode *node)
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
		const char *key = name ? name : prop, *equiv = attr(el, "http-equiv");
		if (equiv && content && strcasecmp(equiv, "refresh") == 0 && !p->redirect &&
		    (p->redirect = refresh_url(content, &st->oom)))
			p->redirect_line = (int)el->start_pos.line;
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
		if (el->tag == GUMBO_TAG_A && st->nsequence < HTML_SEQUENCE_LINKS &&
		    (has_token(rel, "next") || has_token(rel, "prev") || has_token(rel, "previous") || has_token(rel, "up") ||
		     has_token(rel, "contents") || has_token(rel, "index")))
			st->sequence[st->nsequence++] = node;
		if (has_token(rel, "next") && !p->next) {
			p->next = strdup(href);
			p->next_line = (int)el->start_pos.line;
		}
		if (el->tag == GUMBO_TAG_A && !p->next_hint && href[0] != '#' && next_marked(el)) {
			if (!(p->next_hint = strdup(href)))
				st->oom = true;
			p->next_hint_line = (int)el->start_pos.line;
		}
		if (has_token(rel, "up"))
			set_once(&p->up, href, &st->oom);
		if (has_token(rel, "canonical"))
			set_once(&p->canonical, href, &st->oom);
		/* a search page, not an OpenSearch description (a type of its own) */
		const char *type = attr(el, "type");
		if (has_token(rel, "search") && (!type || strncasecmp(type, "text/html", 9) == 0))
			set_once(&p->search, href, &st->oom);
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
	case GUMBO_TAG_H2:
	case GUMBO_TAG_H3:
	case GUMBO_TAG_H4:
	case GUMBO_TAG_H5:
	case GUMBO_TAG_H6:
		if (!p->heading)
			p->heading = text_of(node);
		break;
	default:
		break;
	}
	if (!p->titled && st->body && has_token(attr(el, "class"), "title"))
		p->titled = text_of(node);
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
		read_trail(st, node, el->tag == GUMBO_TAG_DIV && has_token(attr(el, "class"), "related"), &trail, &n);
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

