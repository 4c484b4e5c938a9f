/* html_select.c - the CSS selectors of a site's configuration, parsed and matched against gumbo's
 * elements. */
#include "html_internal.h"
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

char *dup_n(const char *s, size_t n)
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

const char *attr(const GumboElement *el, const char *name)
{
	GumboAttribute *a = gumbo_get_attribute(&el->attributes, name);
	return a ? a->value : NULL;
}

/* Whether the whitespace-separated list holds word (ASCII case ignored). */
bool has_token(const char *list, const char *word)
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

bool sel_match(const html_sel *s, const GumboElement *el)
{
	for (int i = 0; s && i < s->n; i++)
		if (sel_one_match(&s->items[i], el))
			return true;
	return false;
}

