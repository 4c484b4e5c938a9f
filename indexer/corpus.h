/* corpus.h - the corpus in memory: pages with their front matter, sections and links, the
 * taxonomy, synonyms and the sitemap, plus the diagnostics found while reading them. */
#ifndef ATLAS_CORPUS_H
#define ATLAS_CORPUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "schema.h"
#include "strbuf.h"
#include "strmap.h"

enum diag_severity { DIAG_WARNING, DIAG_ERROR };

typedef struct diag {
	char *file;
	int line;
	enum diag_severity severity;
	char *msg;
} diag;

typedef struct diag_list {
	diag *items;
	int n, cap;
	int errors, warnings;
} diag_list;

/* Records a problem at file:line. Out of memory is counted as an error but not recorded. */
void diag_add(diag_list *d, const char *file, int line, enum diag_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void diag_list_free(diag_list *d);

typedef struct section {
	int level;          /* 0 for the lead, 2 or 3 for headings */
	char *heading;
	char *anchor;       /* GitHub-style, unique within the page; "" for the lead */
	const char *body;   /* plain text, NUL-terminated, in the page's text; "" once released */
	size_t body_len;
	size_t body_off;    /* where body starts in the page's text */
} section;

typedef struct page_link {
	char *target;       /* path, without #fragment */
	char *anchor;       /* the #fragment, without '#': "" for none */
	char *text;
	int line;
	bool listed;        /* an entry of a list (a table of contents): the first link of its item, not
			     * the prose's */
} page_link;

typedef struct guide_section {
	char *title;
	char **steps;       /* slugs */
	int nsteps;
} guide_section;

/* The section bodies of a batch of pages, copied into one block mapped from the system (see
 * page.c, corpus_gather_texts). */
typedef struct text_block text_block;

typedef struct page {
	char *file;         /* as reported in diagnostics */
	char *path;
	enum atlas_page_type type;
	char *title, *description, *lastmod, *image;
	double priority;
	char **keywords;
	int nkeywords;
	char **topics;
	int ntopics;
	char **prereqs;
	int nprereqs;
	char **defs;        /* names the page defines (an HTML page's dt with an id: API signatures,
			     * terms); none for a Markdown page */
	int ndefs;
	guide_section *gsecs;
	int ngsecs;
	section *secs;
	int nsecs;
	char *text;         /* every section's body, one after another, each NUL-terminated: one
			     * block, freed whole once the index holds it; NULL once released */
	size_t text_len;    /* bytes of text, the last NUL not counted */
	void *packed;       /* one block holding every string and array of the page but path, text,
			     * fm_text and a guide's sections (see page_pack in page.c), or NULL
			     * when each is its own allocation */
	text_block *block;  /* the batch's block holding text, or NULL when text is its own */
	page_link *links;
	int nlinks;
	int words;
	bool source;        /* a program's source shown whole (a built site's code listing) */
	size_t lead_len;    /* bytes of secs[0].body taken by the description and its newline */
	char *fm_text;      /* front matter text, for locating fields in messages: a guide's, for
			     * its steps, until corpus_load has checked the whole corpus; freed (NULL)
			     * once parsed for every other page, which keeps the lines below */
	int topics_line, prereqs_line, lastmod_line; /* of those fields, for later messages */
} page;

typedef struct topic {
	char *path, *parent, *title, *description;
	char *page;         /* path of the topic's page, or NULL for /t/<path> */
	int ord;
	int line;
} topic;

typedef struct sitemap_entry {
	char *path, *loc, *lastmod, *priority, *image;
	int line;
} sitemap_entry;

typedef struct corpus {
	char *dir;
	page *pages;
	int npages, cappages;
	strmap page_index;      /* path -> index in pages */
	topic *topics;
	int ntopics, captopics;
	strmap topic_index;     /* path -> index in topics */
	char ***syn_groups;     /* each a NULL-terminated array of lowercase terms */
	int nsyn;
	sitemap_entry *sitemap; /* checked against the pages, then freed (NULL) by corpus_load */
	int nsitemap, capsitemap;
	bool have_sitemap;
	char *site_url;         /* origin of the sitemap's locs, e.g. https://explainers.rudrite.com */
	unsigned long long digest;
	size_t bytes;           /* total bytes of corpus files read */
	int redirects;          /* a built site's redirect pages, left out (indexer/site.c) */
	int error_pages;        /* its page for missing addresses (404.html), left out (indexer/site.c) */
	int search_pages;       /* its search page (rel=search), left out (indexer/site.c) */
	int compilations;       /* its pages made of other pages, left out (indexer/site_repeats.c) */
	char *compilation_example; /* the first of them, described; NULL: none */
	int copies;             /* its pages the same as another, left out, leading to it */
	int chrome_lines;       /* lines on most of its pages, taken out of them (find_boilerplate) */
	int chrome_pages;       /* the pages they were taken out of */
	char *copy_example;     /* the first of them, described; NULL: none */
	bool site;              /* read from a built site (--site), whose paths are its file names */
	int *page_next;         /* by page: the page it names as its next (rel=next), or -1; NULL when
				 * none does (a corpus) */
	atomic_int *body_readers; /* per page, readers yet to release its section bodies; NULL: kept */
} corpus;

/* Parses one page file held in data[0..n) (front matter + Markdown) as a page of the given type.
 * file names it in diagnostics. On success fills *out (free with page_free) and returns 0; when the
 * page is not valid returns ATLAS_EINVAL with every problem found recorded in d and *out left
 * empty; ATLAS_ENOMEM (nothing recorded) when out of memory before the page could be checked. */
int page_parse(page *out, const char *file, const char *data, size_t n, enum atlas_page_type type,
	       diag_list *d);
void page_free(page *p);

/* Extracts sections (lead, then one per ##/### heading), plain text and links from a Markdown
 * body into p, whose title and description must be set. body_line is the file line of body[0].
 * Returns 0, or ATLAS_ENOMEM when out of memory or ATLAS_EINVAL when md4c fails. */
int corpus_parse_body(page *p, const char *body, size_t n, int body_line);

/* Reads the whole corpus under dir, validating everything it can; problems go to d. strict turns
 * link and sitemap warnings into errors. Returns 0 when it could read the corpus (check d->errors
 * for validity) or ATLAS_ENOTFOUND when dir is not a directory (d says so). */
int corpus_load(corpus *c, const char *dir, bool strict, diag_list *d);
void corpus_free(corpus *c);

/* Reads c->dir/sitemap.xml into c->sitemap (entries with their paths) and, unless set, c->site_url
 * from the first loc; problems go to d (strict: an unreadable sitemap is an error). */
void corpus_read_sitemap(corpus *c, diag_list *d, bool strict);
/* Moves the texts of the n pages (each its own allocation) into one block mapped from the system,
 * which goes back to it whole once the last of them is released; pages keep their own texts when
 * the block cannot be made. */
void corpus_gather_texts(page **pages, int n);
/* Frees the sitemap's entries (c->sitemap is NULL after). */
void corpus_free_sitemap(corpus *c);

/* Declares that each page's section bodies will be read by readers threads (readers >= 1), each
 * calling corpus_release_bodies once per page when done with them: the last frees them, so that a
 * build does not hold all the text of a large corpus while indexing it. Returns 0, or ATLAS_ENOMEM
 * when out of memory (the bodies are then kept until corpus_free, releasing does nothing). */
int corpus_share_bodies(corpus *c, int readers);

/* Called by one of the readers of corpus_share_bodies done with page i's section bodies; the last
 * of them frees them (a page's bodies are then empty). Safe from any thread. */
void corpus_release_bodies(corpus *c, int i);

#endif
