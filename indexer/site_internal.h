/* site_internal.h - what the files reading a built site share (site.c, site_config.c, site_pages.c,
 * site_structure.c): the site being read, its files and configuration; nothing else includes it. */
#ifndef ATLAS_SITE_INTERNAL_H
#define ATLAS_SITE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "corpus.h"
#include "html.h"
#include "site.h"
#include "strmap.h"

#define SITE_THREADS_MAX 8
/* A block of texts (corpus_gather_texts) holds the texts of at most SITE_TEXT_BATCH pages, and is
 * closed once they reach SITE_TEXT_BLOCK bytes: a block goes back only when the build has indexed
 * its last page, so a smaller block holds less text already indexed (256 pages of the PostgreSQL
 * manual were 1.9 MiB) */
#define SITE_TEXT_BATCH 256
#define SITE_TEXT_BLOCK (256 << 10)
#define DESCRIPTION_MAX 300
/* A page with at least this many links whose texts are at least half of its text is a listing
 * (a book index, a list of every name): a site page, and its terms are not definitions. */
#define LISTING_LINKS 50
/* A page whose text is at least this share code (<pre>) is a source listing: a module's code as a
 * documentation generator shows it (Sphinx's viewcode, rustdoc's src/, Javadoc's src-html/), a site
 * page, not an explainer. */
#define SOURCE_CODE_SHARE 0.9
#define SOURCE_MIN_BYTES 200
/* Redirects followed from a link before it is taken to lead nowhere (a chain, or a loop). */
#define SITE_REDIRECT_HOPS 8

typedef struct type_rule {
	char *glob;
	enum atlas_page_type type;
} type_rule;

typedef struct site_config {
	char *file;          /* the configuration read, or NULL */
	char *site_url;
	char **exclude;
	int nexclude;
	type_rule *types;
	int ntypes;
	char *topic_root;    /* the folder of the topic pages, "" for the top ("t/" for "/t/") */
	html_sel *content, *ignore;
} site_config;

/* One HTML file of the site, read on any thread, then taken into the corpus. */
typedef struct site_file {
	char *rel;           /* path below the site's folder, e.g. "usage/index.html" */
	char *file;          /* dir/rel, as diagnostics name it */
	bool ok;             /* read and parsed: hp holds it */
	int read_errno;      /* why it could not be read (0: it could) */
	char charset[64];
	int decode_rc;       /* html_decode's result */
	long replaced;       /* bytes not valid in the charset */
	size_t bytes;
	unsigned long long digest;
	html_page hp;
	/* after reading */
	int page;            /* index in c->pages, or -1 */
	char *path;          /* URL path (owned until moved into the page) */
	const char *lastmod, *priority, *image; /* the sitemap's, owned by it */
	int parent;          /* index of the parent file, or -1 */
	int next;            /* index of the rel=next file, or -1 */
	int topic;           /* the topic this page is the page of, or -1 */
	int redirect_to;     /* a redirect (hp.redirect naming another file): the file it leads to,
			      * -1 when that is outside the site or missing; -2 when no redirect */
	const char *crumb_text; /* the text of the first breadcrumb naming this page, in file order */
	bool in_sitemap;
} site_file;

typedef struct site {
	corpus *c;
	diag_list *d;
	bool strict;
	site_config cfg;
	char *dir;           /* as given, without trailing '/' */
	char *real_dir;      /* realpath of it */
	site_file *files;
	int nfiles, capfiles;
	strmap by_rel;       /* rel -> file index */
	char *base;          /* the folder of the site's URL paths the site's folder is served as ("" or
			      * "/docs/15"): the path part of site_url when the configuration gives it,
			      * else what the sitemap or the canonical links show */
	bool base_in_paths;  /* pages' paths begin with base (it was found, not configured) */
	html_opts opts;
	pthread_mutex_t lock;
	int next_file;
	char *suffix, *prefix; /* the title's repeated part, or NULL */
} site;


/* site.c: helpers */

/* Returns the severity of a warning in s: an error when strict. */
enum diag_severity warn_sev(const site *s);
/* Whether file f is made a page: read, not skipped (noindex, or left out since), not a redirect. */
bool is_page_file(const site_file *f);
/* Returns FNV-1a 64 of p[0..n), continuing from h. */
unsigned long long fnv1a(unsigned long long h, const void *p, size_t n);

/* site.c */

/* Orders site files by rel (qsort's comparison). */
int cmp_rel(const void *a, const void *b);
/* Reads and parses every listed file on every core (each file's outcome in its slot). */
void read_all(site *s);
/* Reads dir/sitemap.xml (when present) and gives each listed file its path, lastmod, priority
 * and image; a URL with no file is a warning. */
void read_sitemap(site *s);
/* Lists the HTML files below rel (a folder, "" for the top), following symbolic links only to
 * files inside the site's folder. */
void walk(site *s, const char *rel, int depth);
/* The page file href names from file fi (a redirect page followed to its target), or -1 when
 * none (not an error code); see site.c. */
int target_of(const site *s, int fi, const char *href, bool *exists, char *frag, size_t fragn);

/* site_config.c */

/* Reads the configuration; a missing default file is no configuration. Returns 0, or after
 * recording why in d ATLAS_EIO (the file cannot be read) or ATLAS_EINVAL (it is not a valid
 * configuration). */
int config_load(site *s, const char *path);
/* Frees what cfg holds. */
void config_free(site_config *cfg);

/* site_repeats.c */

/* Leaves out the pages made of other pages whole (marked skip) and all copies of a page but one
 * (made to lead to it, as a redirect does); counts them in the corpus. Out of memory leaves every
 * page in. Never fails. */
void find_repeats(site *s);
/* Takes out of every page's section bodies the lines on most of the site's pages (the chrome left
 * inside the content: see BOILERPLATE_SHARE in site_repeats.c), counted in s->c->chrome_lines
 * and chrome_pages. Out of memory leaves the pages as they are. */
void find_boilerplate(site *s);

/* Makes each page's code headings (html_page.code_heads) names it defines, but for a heading that
 * CODE_HEADING_PAGES_MAX or more pages have (a release note's section of changes to a module, in
 * every release's page: a recurring section, not the one place a name is explained). Out of
 * memory leaves the pages' definitions as they were. Never fails. */
void find_code_definitions(site *s);

/* site_pages.c */

/* Finds the part of the title most pages repeat, after (suffix) or before (prefix) a separator,
 * or in parentheses at its end: " — Sphinx documentation", "MkDocs - ", "SDL: ", " (GNU Octave)". Kept
 * only when at least half of the titled pages (and two of them) carry it; redirects not counted. */
void find_title_affix(site *s);
/* Makes the corpus page of file fi (its path set, its HTML read): the lead (description, then
 * the text before the first heading), one section a heading with the page's own anchor. Returns
 * 0 or -1 when out of memory. */
int make_page(site *s, int fi, page *p);
/* Gives every page the links of its file that name another page of the site; a link to a missing
 * page is a warning (an error when strict), one leaving the site is dropped. */
void resolve_links(site *s);

/* site_structure.c */

/* Page types: the configuration's rules first; else the site's top page and the pages its pages
 * name as index or search pages are site pages, guides stay guides, the rest explainers. */
void assign_types(site *s);
/* Finds each page's parent (its rel=up, else its breadcrumb trail's last page, else its folder's
 * page), chains that come back to themselves cut, and its rel=next page. */
void find_parents(site *s);
/* Guides: a page's lists marked data-atlas-guide, in their order; else the rel=next chain
 * through the pages whose parent it is (skipping their own children), when it has two steps or
 * more. The site's top page is a guide only when none of its chain's steps has pages of its own
 * (a flat book: mdBook's chapters); a deeper site's chain of parts is not a route. */
void make_guides(site *s);
/* Each page's rel=next page (find_parents) as a page index into the corpus's page_next: the site's
 * own reading order, a read-next signal (NULL when no page names one, or out of memory). */
void record_next_pages(site *s);
/* Each page's topics: the pages its breadcrumb trails end at (itself, for a page that ends its
 * own trail: a topic's page), else its parent page's. */
void make_topics(site *s);

#endif
