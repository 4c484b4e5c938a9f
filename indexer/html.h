/* html.h - one built HTML page read with gumbo: its metadata, content sections with the anchors
 * the page uses, links, definitions and navigation (next, up, breadcrumbs), for site.c. */
#ifndef ATLAS_HTML_H
#define ATLAS_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A list of simple selectors ("main", "div.body", "#content", "[role=main]", "nav[aria-label]",
 * comma-separated): each a tag name, classes, an id and attributes, all of which must match one
 * element. No combinators. */
typedef struct html_sel html_sel;

/* Parses a selector list. Returns NULL and writes what is wrong into err when it cannot be read
 * or memory runs out; free with html_sel_free. */
html_sel *html_sel_parse(const char *list, char *err, size_t errlen);
void html_sel_free(html_sel *s);

typedef struct html_ref {
	char *href;         /* as written in the page */
	char *text;         /* the link's text, whitespace collapsed */
	int line;
	bool listed;        /* an entry of a list: the first link of its li or dt, not the prose's */
} html_ref;

typedef struct html_sec {
	int level;          /* 0 for the lead, 2 to 4 for headings */
	char *heading;      /* NULL for the lead */
	char *anchor;       /* the id the page itself uses for it, or NULL when it has none */
	int line;
	size_t body_off;    /* where its body starts in the page's text */
} html_sec;

typedef struct html_guide {
	char *title;        /* the list's data-atlas-guide value, or NULL when empty */
	html_ref *steps;
	int nsteps;
	int line;
} html_guide;

typedef struct html_page {
	bool skip;          /* robots noindex, or data-atlas-ignore on <html> or <body> */
	char *title;        /* <title>, whitespace collapsed; NULL when absent or empty */
	int title_line;
	char *og_title, *h1, *description, *first_para, *keywords, *image, *modified, *canonical;
	char *titled;       /* the text of the first element of class "title" in the body (Doxygen's
			     * div.title), for a page with no <title>, og:title or h1 */
	char *heading;      /* the text of the first h2 to h6, likewise, after titled */
	char *og_url;       /* meta property="og:url", the page's address when it has no canonical link */
	char *search;       /* href of the first rel=search link: the site's search page */
	char *redirect;     /* the URL of <meta http-equiv="refresh" content="0; url=...">: the page
			     * sends its reader there (an alias, a moved page); NULL when none */
	int redirect_line;
	char *next;         /* href of <link rel=next> or a[rel=next]; else of the page's pagination link
			     * to the next page (next_hint) */
	int next_line;
	char *next_hint;    /* href of the first a that a generator marks as the next page without
			     * rel=next: accesskey n, or a class "next" or ending in "-next" or "_next"
			     * (Docusaurus' pagination-nav__link--next, VitePress' pager-link next) */
	int next_hint_line;
	char *up;           /* href of rel=up, or of the a[accesskey=u] generators mark "Up" with */
	html_ref *crumbs;   /* breadcrumb trail, from the top: the page's HTML one (nav[aria-label=
			     * breadcrumb], .breadcrumb, Sphinx's related bar), else its first
			     * schema.org BreadcrumbList; the page itself may end it */
	int ncrumbs;
	html_ref *trail_ends; /* the last entry of each trail (the HTML one, every BreadcrumbList) */
	int ntrail_ends;
	char **index_refs;  /* hrefs of rel=index and rel=search: the site's own index pages */
	int nindex_refs;
	html_ref *links;    /* a[href] inside the content root */
	int nlinks;
	uint64_t *ids;      /* html_id_hash of every id and a[name] in the page, sorted, each once:
			     * the fragments a link to the page may name */
	int nids;
	html_ref *bad_frags; /* links inside the content root to "#..." of the page itself that no
			      * id or a[name] of it answers (html_has_anchor), text NULL */
	int nbad_frags;
	char **defs;        /* the name each dt with an id inside the content root defines: its text,
			     * a signature's before its parameters (keep_name) */
	int ndefs;
	char **code_heads;  /* the text of each section heading that is code alone (a name: a setting's
			     * or an option's section); the site's pages decide which define it
			     * (find_code_definitions) */
	int ncode_heads;
	html_sec *secs;     /* secs[0] is the lead */
	int nsecs;
	char *text;         /* every section's body, each NUL-terminated, one after another */
	size_t text_len;
	html_guide *guides; /* lists marked data-atlas-guide anywhere in the page, in page order */
	int nguides;
	int body_line;      /* line of the content root */
	int words;
	size_t link_text;   /* bytes of the content's link texts */
	size_t code_text;   /* bytes of the content's text inside <pre> or Doxygen's div.fragment (code, a
			     * program's output) */
} html_page;

typedef struct html_opts {
	const html_sel *content;  /* content root; NULL: data-atlas-body, main, [role=main], article, body */
	const html_sel *ignore;   /* removed inside the content root, besides the fixed list */
} html_opts;

/* Parses the UTF-8 document data[0..n) and extracts *out (free with html_page_free). Returns 0,
 * or ATLAS_ENOMEM when out of memory (out is then empty). */
int html_read(html_page *out, const char *data, size_t n, const html_opts *o);
void html_page_free(html_page *p);

/* The hash html_page.ids holds for the anchor name id[0..n). */
uint64_t html_id_hash(const char *id, size_t n);

/* Whether the fragment frag (without '#', as written in an href) names a place in page p: an id or
 * a[name], as written or percent-decoded, a range of lines whose first is one ("160-173",
 * "L10-L20"), or what a browser finds with none ("", "top", a ":~:" text directive). */
bool html_has_anchor(const html_page *p, const char *frag);

/* Gives back the memory the calling thread keeps between pages for their parse trees; for a
 * thread done reading pages. */
void html_thread_done(void);

/* Converts data[0..n) to UTF-8 by its charset (a byte order mark, else a <meta> charset in its
 * first 1024 bytes, else UTF-8): every byte not valid in it becomes U+FFFD. *out (malloc'd,
 * NUL-terminated, owned by the caller) and *outn get the text, *replaced how many bytes were
 * replaced, charset (of size 64) the name used. Returns 0, ATLAS_EINVAL when the charset is unknown
 * (charset names it), or ATLAS_ENOMEM when out of memory. */
int html_decode(const char *data, size_t n, char **out, size_t *outn, long *replaced, char *charset);

#endif
