/* html_content.c - an HTML page's content root: its sections, links and definitions, and the page
 * read whole (html_read). */
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
	int pre;            /* depth inside <pre> or div.fragment */
	wrapper *wrappers;
	int nwrappers, capwrappers;
	int title_level;    /* level of the page's title heading while no text has followed it, or 0 */
	bool guess_nav;     /* the root is the whole body, and it holds a heading: a sidebar is
			     * looked for (nav_block) */
	const head_state *head; /* what the page's first pass found: its links to the sequence */
	bool oom;
	const GumboNode *rows_of;  /* the table whose rows were counted last, and how many */
	unsigned rows;
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
		if (st->pre)
			st->p->code_text++;
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

static void keep_name(char *def);

/* Whether node is a text node with more than whitespace. */
static bool words_node(const GumboNode *node)
{
	if (node->type != GUMBO_NODE_TEXT && node->type != GUMBO_NODE_CDATA)
		return false;
	for (const char *s = node->v.text.text; *s; s++)
		if (!isspace((unsigned char)*s))
			return true;
	return false;
}

/* Whether el holds no text a reader sees as the page's (a script, a style, a permalink's mark). */
static bool unseen(const GumboElement *el)
{
	return el->tag == GUMBO_TAG_SCRIPT || el->tag == GUMBO_TAG_STYLE || is_permalink(el);
}

/* Whether el marks code: code, tt, kbd, samp or var. */
static bool code_tag(const GumboElement *el)
{
	return el->tag == GUMBO_TAG_CODE || el->tag == GUMBO_TAG_TT || el->tag == GUMBO_TAG_KBD ||
	       el->tag == GUMBO_TAG_SAMP || el->tag == GUMBO_TAG_VAR;
}

/* Whether node's text is code alone: each of its text nodes with more than whitespace inside a
 * code, tt, kbd, samp or var element (a permalink's mark left out, as text_of leaves it), and one
 * at least. *any is set when one is found. */
static bool code_only(const GumboNode *node, bool in_code, bool *any)
{
	if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_CDATA) {
		if (!words_node(node))
			return true;
		*any = true;
		return in_code;
	}
	if (node->type != GUMBO_NODE_ELEMENT)
		return true;
	const GumboElement *el = &node->v.element;
	if (unseen(el))
		return true;
	in_code |= code_tag(el);
	for (unsigned i = 0; i < el->children.length; i++)
		if (!code_only(el->children.data[i], in_code, any))
			return false;
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
	/* a heading that is a name in code alone may define it, as a dt does: a setting's or an
	 * option's section ("<h3><code>FILE_UPLOAD_PERMISSIONS</code></h3>"), not "<code>WITH</code>
	 * Clause" */
	bool any = false;
	if (heading && code_only(node, false, &any) && any) {
		/* a signature's name, as a dt's ("fsPromises.access(path[, mode])") */
		char *name = strdup(heading);
		if (name)
			keep_name(name);
		if (!name || add_string(&st->p->code_heads, &st->p->ncode_heads, name))
			st->oom = true;
		free(name);
	}
	new_section(st, level == 1 ? 2 : level, heading, pick_anchor(st, el), (int)el->start_pos.line);
}

static void body_children(body_state *st, const GumboElement *el)
{
	for (unsigned i = 0; i < el->children.length; i++)
		body_node(st, el->children.data[i]);
}

/* The first link (a element) within node, in document order, or NULL. */
static const GumboNode *first_link(const GumboNode *node)
{
	if (node->type != GUMBO_NODE_ELEMENT)
		return NULL;
	if (node->v.element.tag == GUMBO_TAG_A)
		return node;
	for (unsigned i = 0; i < node->v.element.children.length; i++) {
		const GumboNode *a = first_link(node->v.element.children.data[i]);
		if (a)
			return a;
	}
	return NULL;
}

/* Whether link is an entry of a list, as a table of contents has them: the first link of its
 * nearest li or dt, with no paragraph, definition (dd), cell or quotation between (a definition's
 * text, a signature's further links, an item's prose are not). */
static bool entry_link(const GumboNode *link)
{
	for (const GumboNode *up = link->parent; up && up->type == GUMBO_NODE_ELEMENT; up = up->parent) {
		GumboTag t = up->v.element.tag;
		if (t == GUMBO_TAG_LI || t == GUMBO_TAG_DT)
			return first_link(up) == link;
		if (t == GUMBO_TAG_P || t == GUMBO_TAG_DD || t == GUMBO_TAG_TD || t == GUMBO_TAG_TH ||
		    t == GUMBO_TAG_BLOCKQUOTE || t == GUMBO_TAG_PRE || t == GUMBO_TAG_BODY)
			return false;
	}
	return false;
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
	if (add_ref(&st->p->links, &st->p->nlinks, href, text, (int)el->start_pos.line)) {
		st->oom = true;
		return;
	}
	st->p->links[st->p->nlinks - 1].listed = entry_link(node);
}

/* Cuts a definition's text to the name it defines: a signature's text before its parameters'
 * "(" ("pg_visibility_map(relation regclass, ...)", "add_config_value(name, default, rebuild)");
 * the parameters, their types and the return type stay in the page's text, where a query's word
 * that names one counts as a mention, not as the name the page defines. */
static void keep_name(char *def)
{
	char *paren = strchr(def, '(');
	if (!paren)
		return;
	char *end = paren;
	while (end > def && end[-1] == ' ')
		end--;
	if (end > def) /* else the text starts with "(": no name before it, kept whole */
		*end = '\0';
}

/* The id of the dt that a definition list nested in a dd belongs to: the dt before the dd that
 * holds node's dl, or NULL. */
static const char *owner_id(const GumboNode *dt)
{
	const GumboNode *dl = dt->parent;
	if (!dl || dl->type != GUMBO_NODE_ELEMENT || dl->v.element.tag != GUMBO_TAG_DL)
		return NULL;
	const GumboNode *dd = dl->parent;
	if (!dd || dd->type != GUMBO_NODE_ELEMENT || dd->v.element.tag != GUMBO_TAG_DD || !dd->parent)
		return NULL;
	const GumboVector *sib = &dd->parent->v.element.children;
	for (int i = (int)dd->index_within_parent - 1; i >= 0; i--) {
		const GumboNode *n = sib->data[i];
		if (n->type != GUMBO_NODE_ELEMENT)
			continue;
		if (n->v.element.tag != GUMBO_TAG_DT)
			return NULL;
		return attr(&n->v.element, "id");
	}
	return NULL;
}

/* A member's name as a reader writes it, qualified by its class ("Task.MaxRetriesExceededError",
 * "str.join"), when the page shows it bare inside its class's definition: the dt's id is the
 * owning dt's id, a dot and a word of def (API references that qualify their anchors fully,
 * "celery.app.task.Task.MaxRetriesExceededError", and print the member's name alone:
 * "exception MaxRetriesExceededError", "acks_late = False"). Returns a new string (the caller's
 * to free), or NULL when def is no such member or prints it qualified, or out of memory. */
static char *member_name(const GumboNode *dt, const char *id, const char *def)
{
	const char *owner = owner_id(dt);
	size_t no = owner ? strlen(owner) : 0;
	if (!no || strncmp(id, owner, no) != 0 || id[no] != '.')
		return NULL;
	const char *name = id + no + 1;
	size_t nname = strlen(name);
	if (!nname || strchr(name, '.'))
		return NULL;
	/* the name printed as a word of its own: after a keyword ("exception", "property") or none,
	 * before its value or type ("acks_late = False", "app: Sphinx") or nothing */
	const char *at = def;
	while ((at = strstr(at, name)) != NULL) {
		char after = at[nname];
		if ((at == def || at[-1] == ' ') && (!after || after == ' ' || after == ':' || after == '='))
			break;
		at++;
	}
	if (!at)
		return NULL;
	const char *cls = owner + no;
	while (cls > owner && cls[-1] != '.')
		cls--;
	size_t ncls = (size_t)(owner + no - cls);
	char *out = malloc(ncls + 1 + nname + 1);
	if (!out)
		return NULL;
	memcpy(out, cls, ncls);
	out[ncls] = '.';
	memcpy(out + ncls + 1, name, nname + 1);
	return out;
}

/* The name that an element's id defines as Sphinx writes the targets of its index entries, on an
 * empty span or on the element that follows it: "std-TYPE-NAME" (an object of a type a project
 * adds: a setting "std-setting-TEMPLATES-NAME", a lookup "std-fieldlookup-arrayfield.contained_by",
 * a signal) and "module-NAME" (a module declared on the page, "module-django.http"), the latter
 * only when NAME has a dot, an underscore or a capital, which no anchor made from a heading has
 * ("module-overview" is the section "Module Overview"). Returns a new string (the caller's to
 * free), or NULL when id is no such target, or out of memory. */
static char *target_name(const char *id)
{
	const char *name = NULL;
	if (strncmp(id, "std-", 4) == 0) {
		const char *t = id + 4;
		while (*t >= 'a' && *t <= 'z')
			t++;
		if (t > id + 4 && *t == '-')
			name = t + 1;
	} else if (strncmp(id, "module-", 7) == 0 && strpbrk(id + 7, "._ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
		name = id + 7;
	if (!name || !*name || strchr(name, ' '))
		return NULL;
	return strdup(name);
}

/* Finds the element of a kind (is) that holds node's first text with more than blanks: *out, the
 * outermost such element around that text (in: the one around node, or NULL), or NULL when none
 * is. Returns true once the text is found, false while node holds none. */
static bool leading_in(const GumboNode *node, bool (*is)(const GumboElement *), const GumboNode *in,
		       const GumboNode **out)
{
	if (words_node(node)) {
		*out = in;
		return true;
	}
	if (node->type != GUMBO_NODE_ELEMENT)
		return false;
	const GumboElement *el = &node->v.element;
	if (unseen(el))
		return false;
	if (!in && is(el))
		in = node;
	for (unsigned i = 0; i < el->children.length; i++)
		if (leading_in(el->children.data[i], is, in, out))
			return true;
	return false;
}

/* leading_in for code elements (code_tag): *code, that text's code element, or NULL when that
 * text is no code. */
static bool leading_code(const GumboNode *node, const GumboNode *code, const GumboNode **out)
{
	return leading_in(node, code_tag, code, out);
}

/* A table of more rows than this is a list of names, not their definitions (cell_name). */
#define TABLE_DEFS_ROWS 100

/* The rows of the table that holds row (a tr), counted once per table (st's cache). */
static unsigned table_rows(body_state *st, const GumboNode *row)
{
	const GumboNode *table = row->parent;
	if (table && table->type == GUMBO_NODE_ELEMENT && table->v.element.tag != GUMBO_TAG_TABLE)
		table = table->parent; /* a row group: tbody, thead, tfoot */
	if (!table || table->type != GUMBO_NODE_ELEMENT)
		return 0;
	if (table == st->rows_of)
		return st->rows;
	unsigned n = 0;
	const GumboVector *kids = &table->v.element.children;
	for (unsigned i = 0; i < kids->length; i++) {
		const GumboNode *k = kids->data[i];
		if (k->type != GUMBO_NODE_ELEMENT)
			continue;
		if (k->v.element.tag == GUMBO_TAG_TR)
			n++;
		else if (k->v.element.tag == GUMBO_TAG_TBODY || k->v.element.tag == GUMBO_TAG_THEAD ||
			 k->v.element.tag == GUMBO_TAG_TFOOT)
			for (unsigned j = 0; j < k->v.element.children.length; j++) {
				const GumboNode *r = k->v.element.children.data[j];
				n += r->type == GUMBO_NODE_ELEMENT && r->v.element.tag == GUMBO_TAG_TR;
			}
	}
	st->rows_of = table;
	st->rows = n;
	return n;
}

/* The name that a table row's first cell defines when it begins with code: a reference's table of
 * types, functions or settings ("<td><code>anyarray</code></td>", a signature "<code>sqrt</code> (
 * numeric ) -> numeric", its name alone). Only a name of one word: a cell that begins with a
 * statement ("SELECT * FROM t") is an example, not a definition; and only in a table of at most
 * TABLE_DEFS_ROWS rows: a longer one is a list of names (every key word of a language, every
 * deprecated name with its versions), as a long list of links is no page's definitions. Returns a
 * new string (the caller's to free), or NULL when cell is no such cell, or out of memory. */
static char *cell_name(body_state *st, const GumboNode *cell)
{
	const GumboNode *row = cell->parent;
	if (!row || row->type != GUMBO_NODE_ELEMENT || row->v.element.tag != GUMBO_TAG_TR ||
	    table_rows(st, row) > TABLE_DEFS_ROWS)
		return NULL;
	for (unsigned i = 0; i < cell->index_within_parent; i++) {
		const GumboNode *n = row->v.element.children.data[i];
		if (n->type == GUMBO_NODE_ELEMENT &&
		    (n->v.element.tag == GUMBO_TAG_TD || n->v.element.tag == GUMBO_TAG_TH))
			return NULL; /* not the row's first cell */
	}
	const GumboNode *code = NULL;
	if (!leading_code(cell, NULL, &code) || !code)
		return NULL;
	char *name = text_of(code);
	if (name)
		keep_name(name);
	if (name && (!*name || strchr(name, ' '))) {
		free(name);
		return NULL;
	}
	return name;
}

/* Whether word (one, no blank) is written as code names are: with a dot, an underscore or a
 * colon inside it ("core.autocrlf", "yy_at_bol", "Json::Value"), after one or two dashes ("--quiet",
 * "-v"), or a capital after a small letter ("assertEquals"). */
static bool code_like(const char *word)
{
	size_t n = strlen(word);
	if (n < 2)
		return false;
	if (word[0] == '-')
		return isalnum((unsigned char)word[word[1] == '-' ? 2 : 1]) != 0;
	for (size_t i = 1; i + 1 < n; i++)
		if (strchr("._:", word[i]) && isalnum((unsigned char)word[i + 1]))
			return true;
	for (size_t i = 1; i < n; i++)
		if (isupper((unsigned char)word[i]) && islower((unsigned char)word[i - 1]))
			return true;
	return false;
}

/* Whether an element marks a placeholder: em, i or var (DocBook's em.replaceable: a command's
 * parameter, "new_owner", named by the reader, not the manual). */
static bool placeholder_tag(const GumboElement *el)
{
	return el->tag == GUMBO_TAG_EM || el->tag == GUMBO_TAG_I || el->tag == GUMBO_TAG_VAR;
}

/* Whether node's first text with more than blanks is a placeholder (placeholder_tag). */
static bool leading_placeholder(const GumboNode *node)
{
	const GumboNode *var = NULL;
	return leading_in(node, placeholder_tag, NULL, &var) && var;
}

/* The name a definition list's term without an id defines: its text when that is one word
 * written as code names are (code_like; a signature's before its parameters, keep_name), as
 * AsciiDoc writes a configuration's variables ("<dt class="hdlist1">core.autocrlf</dt>") and a
 * command's options. A term of plain words ("Working tree") is a glossary's, defined elsewhere by
 * its id when the site gives one; nor does a placeholder (leading_placeholder), nor a Sphinx
 * signature (class sig) without an id. Returns a new string (the caller's), or NULL. */
static char *dt_name(const GumboNode *dt)
{
	/* a Sphinx object's signature without its id is one described again with :noindex:, its
	 * definition elsewhere */
	if (leading_placeholder(dt) || has_token(attr(&dt->v.element, "class"), "sig"))
		return NULL;
	char *name = text_of(dt);
	if (name)
		keep_name(name);
	if (name && (!*name || strchr(name, ' ') || !code_like(name))) {
		free(name);
		return NULL;
	}
	return name;
}

/* Two kinds of block are the site's navigation, as a nav element is:
 * - anywhere, a block of links to the pages before, after or above, or to the site's contents or
 *   index, named so (rel next, prev, up, contents or index), the links holding NAV_PANEL_SHARE of
 *   its text (Texinfo's "Next: ..., Previous: ..., Up: ... [Contents][Index]" panel, at the top
 *   and the foot of a page; a theme's pager in its main element: the neighbours' titles are no
 *   words of the page);
 * - in a page with no content root marked (no main, article, role=main, data-atlas-body or
 *   configured selector), before its first heading, a block of links: at least NAV_MIN_LINKS of
 *   them holding NAV_LINK_SHARE of its text (a sidebar listing every page, as Node.js's API
 *   pages have).
 * Neither holds a heading. */
#define NAV_MIN_LINKS 8
#define NAV_LINK_SHARE 0.9
#define NAV_PANEL_SHARE 0.5

typedef struct link_count {
	int links;
	size_t link_chars, chars;
	bool heading;
} link_count;

/* Adds to *lc the links, the letters in and out of links, and whether a heading is under node,
 * leaving out what body_node leaves out; stops at the first heading. */
static void count_links(const body_state *st, const GumboNode *node, bool in_link, link_count *lc)
{
	if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_CDATA) {
		size_t n = 0;
		for (const char *c = node->v.text.text; *c; c++)
			n += !isspace((unsigned char)*c);
		lc->chars += n;
		if (in_link)
			lc->link_chars += n;
		return;
	}
	if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE)
		return;
	const GumboElement *el = &node->v.element;
	if (removed(st, el) || is_permalink(el))
		return;
	if (heading_level(el->tag))
		lc->heading = true;
	if (el->tag == GUMBO_TAG_A && attr(el, "href")) {
		lc->links++;
		in_link = true;
	}
	for (unsigned i = 0; i < el->children.length && !lc->heading; i++)
		count_links(st, el->children.data[i], in_link, lc);
}

/* Whether node holds one of the page's links to the sequence (found by read_head). */
static bool holds_sequence_link(const body_state *st, const GumboNode *node)
{
	for (int i = 0; i < st->head->nsequence; i++)
		for (const GumboNode *up = st->head->sequence[i]; up; up = up->parent)
			if (up == node)
				return true;
	return false;
}

/* Whether node, a block, is the site's navigation (see NAV_MIN_LINKS). Only a block holding a
 * link to the sequence, or before the first heading of a page guessed at, is looked into. */
static bool nav_block(const body_state *st, const GumboNode *node)
{
	if (!is_block(node->v.element.tag))
		return false;
	bool sequence = holds_sequence_link(st, node), sidebar = st->guess_nav && !st->seen_heading;
	if (!sequence && !sidebar)
		return false;
	link_count lc = { 0, 0, 0, false };
	count_links(st, node, false, &lc);
	if (lc.heading)
		return false;
	if (sequence && lc.link_chars >= NAV_PANEL_SHARE * (double)lc.chars)
		return true;
	return sidebar && lc.links >= NAV_MIN_LINKS && lc.link_chars >= NAV_LINK_SHARE * (double)lc.chars;
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
	if (removed(st, el) || is_permalink(el) || nav_block(st, node))
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
		if (def)
			keep_name(def);
		if (def && add_string(&st->p->defs, &st->p->ndefs, def))
			st->oom = true;
		char *member = def ? member_name(node, id, def) : NULL;
		if (member && add_string(&st->p->defs, &st->p->ndefs, member))
			st->oom = true;
		free(member);
		free(def);
	}
	if (el->tag == GUMBO_TAG_DT && !(id && *id)) {
		char *name = dt_name(node);
		if (name && add_string(&st->p->defs, &st->p->ndefs, name))
			st->oom = true;
		free(name);
	}
	if (el->tag == GUMBO_TAG_TD) {
		char *name = cell_name(st, node);
		if (name && add_string(&st->p->defs, &st->p->ndefs, name))
			st->oom = true;
		free(name);
	}
	if (id && *id) {
		char *target = target_name(id);
		if (target && add_string(&st->p->defs, &st->p->ndefs, target))
			st->oom = true;
		free(target);
	}
	if (el->tag == GUMBO_TAG_P && !st->p->first_para) {
		char *t = text_of(node);
		if (t && strlen(t) >= 20 && strchr(t, ' '))
			st->p->first_para = t;
		else
			free(t);
	}
	/* preformatted text: a pre, or Doxygen's code block (div.fragment, a div.line a line) */
	bool pre = el->tag == GUMBO_TAG_PRE || (el->tag == GUMBO_TAG_DIV && has_token(attr(el, "class"), "fragment"));
	st->pre += pre;
	body_children(st, el);
	st->pre -= pre;
	if (pushed)
		st->nwrappers--;
	if (block || el->tag == GUMBO_TAG_BR)
		break_line(st);
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
		return ATLAS_ENOMEM;
	}
	head_state hs;
	memset(&hs, 0, sizeof(hs));
	hs.p = p;
	hs.o = o;
	read_head(&hs, out->root);
	if (!p->next && p->next_hint) {
		/* no rel=next: the generator's own mark of the next page */
		p->next = p->next_hint;
		p->next_line = p->next_hint_line;
		p->next_hint = NULL;
	}
	finish_ids(p);
	const GumboNode *root = hs.root_sel ? hs.root_sel : hs.marked ? hs.marked : hs.main ? hs.main
			      : hs.role_main ? hs.role_main : hs.article ? hs.article : hs.body ? hs.body : out->root;
	body_state bs;
	memset(&bs, 0, sizeof(bs));
	bs.p = p;
	bs.o = o;
	bs.frag_refs = &hs.frag_refs;
	bs.head = &hs;
	p->body_line = (int)root->v.element.start_pos.line;
	if (root == hs.body || root == out->root) {
		link_count lc = { 0, 0, 0, false };
		count_links(&bs, root, false, &lc);
		bs.guess_nav = lc.heading;
	}
	open_section(&bs, 0, NULL, NULL, p->body_line);
	if (!p->skip)
		body_children(&bs, &root->v.element);
	close_section(&bs);
	free(bs.wrappers);
	strmap_free(&hs.frag_refs);
	tree_reset(&thread_arena); /* the whole tree at once, for gumbo_destroy_output */
	bool oom = hs.oom || bs.oom || bs.text.oom;
	p->text_len = bs.text.len ? bs.text.len - 1 : 0;
	strbuf_shrink(&bs.text); /* every page's text is held until the site is read */
	p->text = strbuf_detach(&bs.text);
	if (!p->text)
		oom = true;
	if (oom) {
		html_page_free(p);
		return ATLAS_ENOMEM;
	}
	for (int i = 0; i < p->nsecs; i++)
		p->words += (p->secs[i].heading ? atlas_text_words(p->secs[i].heading) : 0) +
			    atlas_text_words(p->text + p->secs[i].body_off);
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
	free(p->titled);
	free(p->heading);
	free(p->description);
	free(p->first_para);
	free(p->keywords);
	free(p->image);
	free(p->modified);
	free(p->canonical);
	free(p->search);
	free(p->og_url);
	free(p->redirect);
	free(p->next);
	free(p->next_hint);
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
	for (int i = 0; i < p->ncode_heads; i++)
		free(p->code_heads[i]);
	free(p->code_heads);
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

