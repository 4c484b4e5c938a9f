/* html_internal.h - what the files reading an HTML page share (html.c, html_select.c,
 * html_content.c, html_charset.c); nothing else includes it. */
#ifndef ATLAS_HTML_INTERNAL_H
#define ATLAS_HTML_INTERNAL_H

#include <gumbo.h>
#include <stdbool.h>
#include <stddef.h>

#include "html.h"
#include "strbuf.h"
#include "strmap.h"

#define HTML_SEQUENCE_LINKS 16

typedef struct head_state {
	html_page *p;
	const html_opts *o;
	strmap frag_refs;           /* fragments of href="#..." anywhere in the page */
	int capids;
	const GumboNode *root_sel;  /* first match of the configured content selector */
	const GumboNode *marked, *main, *role_main, *article, *body;
	const GumboNode *crumb_box; /* the first breadcrumb container */
	bool html_crumbs;           /* p->crumbs are that container's */
	/* the first HTML_SEQUENCE_LINKS links (a) to the page before, after or above (rel next,
	 * prev, previous or up), or to the site's contents or index (rel contents or index: the
	 * "[Contents][Index]" of a Texinfo panel, whose copy at the page's foot has no rel next) */
	const GumboNode *sequence[HTML_SEQUENCE_LINKS];
	int nsequence;
	bool oom;
} head_state;


/* html_select.c: selectors */

/* Returns the value of el's attribute name (owned by gumbo's tree), or NULL. */
const char *attr(const GumboElement *el, const char *name);
/* Returns a copy of s[0..n) with a NUL after it (the caller frees it), or NULL when out of memory. */
char *dup_n(const char *s, size_t n);
/* Whether the whitespace-separated list holds word (ASCII case ignored). */
bool has_token(const char *list, const char *word);
/* Whether el matches one of the selectors of s (none for s NULL). */
bool sel_match(const html_sel *s, const GumboElement *el);

/* html.c: text */

/* Whether el is a permalink mark: a link to a fragment with no letter or digit in its text. */
bool is_permalink(const GumboElement *el);
/* The text under node, whitespace collapsed and trimmed (malloc'd), or NULL when empty. */
char *text_of(const GumboNode *node);
/* Returns s with its whitespace collapsed and trimmed (malloc'd), or NULL for s NULL or out of
 * memory. */
char *trimmed_dup(const char *s);

/* html.c: the whole document */

/* Appends (a copy of href, text (taken over), line) to *v, of *n, grown by doubling. Returns 0, or
 * ATLAS_ENOMEM when out of memory (text then freed). */
int add_ref(html_ref **v, int *n, const char *href, char *text, int line);
/* Appends a copy of s to *v, of *n, grown by doubling. Returns 0, or ATLAS_ENOMEM when out of
 * memory. */
int add_string(char ***v, int *n, const char *s);
/* Reads node and what is below it into st: the page's metadata, navigation (breadcrumbs, up,
 * next, guides) and the candidates for its content root. Out of memory sets st->oom. */
void read_head(head_state *st, const GumboNode *node);

/* Sorts the page's anchor names (p->ids) and keeps each once. */
void finish_ids(html_page *p);

#endif
