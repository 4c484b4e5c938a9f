/* corpus_internal.h - what the files reading the corpus share among themselves (corpus.c, diag.c,
 * markdown.c, page.c, read_pages.c, site_files.c, corpus_checks.c); nothing else includes it. */
#ifndef ATLAS_CORPUS_INTERNAL_H
#define ATLAS_CORPUS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "corpus.h"

/* Diagnostics' places (diag.c). */

/* Returns the 1-based line of byte off of data. */
int diag_line_of_offset(const char *data, size_t off);
/* Returns the line (within the page file) of the first occurrence of "key" in the front matter fm,
 * or 1 (also for fm NULL). */
int diag_field_line(const char *fm, const char *key);
/* Returns the line of the nth (1-based) occurrence of pat in data at or after the first occurrence
 * of from (or the start when from is NULL), or fallback when absent. */
int diag_line_of_nth(const char *data, const char *from, const char *pat, int nth, int fallback);
/* Appends src's problems to dst, in order, leaving src empty. A problem dst has no room for is
 * still counted. */
void diag_list_move(diag_list *dst, diag_list *src);

/* Files and the corpus's registry (corpus.c). */

/* Returns a copy of s[0..n) with a NUL after it (the caller frees it), or NULL when out of memory. */
char *corpus_strndup(const char *s, size_t n);
/* Reads the whole file at path (or, when fd is not -1, the file open on fd, which is closed either
 * way) into *out (owned by the caller, NUL-terminated) and its length into *n. Returns 0, or with
 * errno set ATLAS_EIO (the file cannot be opened or read) or ATLAS_ENOMEM (out of memory). */
int corpus_read_file(const char *path, int fd, char **out, size_t *n);

#define CORPUS_FNV_OFFSET 1469598103934665603ULL
/* Returns FNV-1a 64 of s[0..n), continuing from h (CORPUS_FNV_OFFSET to start). */
unsigned long long corpus_fnv1a(unsigned long long h, const void *s, size_t n);
/* Adds n bytes of a corpus file to the corpus digest and size. */
void corpus_digest_bytes(corpus *c, const char *s, size_t n);
/* Adds a page file to the corpus digest and size: its digest (of its name, then its bytes) as 8
 * bytes, least significant first, and its size. */
void corpus_digest_page_file(corpus *c, unsigned long long file_digest, size_t bytes);
/* Returns the slot c->pages[c->npages] for the next page (not yet counted: corpus_commit_page or
 * c->npages++ does), growing the array; NULL when out of memory. */
page *corpus_add_page(corpus *c);
/* Registers the page just parsed into c->pages[c->npages] under its path; a duplicate path is an
 * error in d, and that page is freed. */
void corpus_commit_page(corpus *c, diag_list *d);

/* One page (page.c). */

/* Moves a parsed page's small strings and arrays into one block (p->packed); left as they are when
 * out of memory. */
void page_pack(page *p);
/* Frees p's text, or gives its share of the block holding it back (the last page frees the
 * block). Leaves p->text NULL. */
void page_release_text(page *p);

/* The folders of page files (read_pages.c). */

/* Reads every *.md file of c->dir/sub as a page of the given type into c, in name order; problems
 * go to d. */
void corpus_load_pages(corpus *c, const char *sub, enum atlas_page_type type, diag_list *d);

/* The site-wide files (site_files.c). */

/* Reads c->dir/topics.json into c->topics; problems go to d. */
void corpus_load_topics(corpus *c, diag_list *d);
/* Reads c->dir/synonyms.json, when there is one, into c->syn_groups; problems go to d. */
void corpus_load_synonyms(corpus *c, diag_list *d);

/* The checks across files, and the topic pages (corpus_checks.c). */

/* Checks that every topic, prerequisite, guide step and link of a page names a topic or page of c;
 * strict makes a link to a missing page an error, not a warning. */
void corpus_check_references(corpus *c, bool strict, diag_list *d);
/* Checks the sitemap against the pages: listed pages that do not exist, different dates, pages
 * not listed (warnings, or errors when strict). Nothing without a sitemap. */
void corpus_check_sitemap(corpus *c, bool strict, diag_list *d);
/* Adds a page /t/PATH for every topic of c (its subtopics and member explainers, linked),
 * dated and weighted by its sitemap entry; problems go to d. */
void corpus_add_topic_pages(corpus *c, diag_list *d);

#endif
