/* corpus.c - the corpus: its folder read (pages, topics, synonyms, sitemap) and checked, its digest,
 * its pages' registry, and the section bodies shared with the build's readers. Every problem is
 * reported as file:line. */
#include "corpus_internal.h"
#include "error.h"
#include "grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *corpus_strndup(const char *s, size_t n)
{
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\0';
	}
	return r;
}

/* Reads the whole file at path (or, when fd is not -1, the file open on fd, which is closed either
 * way) into *out (owned by the caller, NUL-terminated) and its length into *n. Returns 0, or with
 * errno set (EIO when the file was opened but could not be read whole) ATLAS_EIO when the file
 * cannot be opened or read, or ATLAS_ENOMEM when out of memory. */
int corpus_read_file(const char *path, int fd, char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : fopen(path, "rb");
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return ATLAS_EIO;
	}
	strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_append(&sb, buf, got);
	int bad = ferror(f) || sb.oom;
	int rc = sb.oom ? ATLAS_ENOMEM : ATLAS_EIO;
	fclose(f);
	if (bad) {
		strbuf_free(&sb);
		errno = bad ? EIO : errno;
		return rc;
	}
	*n = sb.len;
	*out = strbuf_detach(&sb);
	return *out ? 0 : ATLAS_ENOMEM;
}

/* FNV-1a 64 of s[0..n), continuing from h (CORPUS_FNV_OFFSET to start). */
unsigned long long corpus_fnv1a(unsigned long long h, const void *s, size_t n)
{
	const unsigned char *b = s;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Adds n bytes of a corpus file to the corpus digest and size. */
void corpus_digest_bytes(corpus *c, const char *s, size_t n)
{
	c->digest = corpus_fnv1a(c->digest ? c->digest : CORPUS_FNV_OFFSET, s, n);
	c->bytes += n;
}

/* Adds a page file to the corpus digest and size: its digest (of its name, then its bytes, made
 * on the thread that read it) as 8 bytes, least significant first, and its size. */
void corpus_digest_page_file(corpus *c, unsigned long long file_digest, size_t bytes)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(file_digest >> (8 * i));
	c->digest = corpus_fnv1a(c->digest ? c->digest : CORPUS_FNV_OFFSET, b, sizeof(b));
	c->bytes += bytes;
}

page *corpus_add_page(corpus *c)
{
	if (atlas_grow(&c->pages, &c->cappages, c->npages, sizeof(*c->pages), 256))
		return NULL;
	return &c->pages[c->npages];
}

/* Registers the page just parsed into c->pages[c->npages]. */
void corpus_commit_page(corpus *c, diag_list *d)
{
	page *p = &c->pages[c->npages];
	int added = 0;
	int *idx = strmap_put(&c->page_index, p->path, strlen(p->path), c->npages, &added);
	if (!idx)
		return;
	if (!added) {
		diag_add(d, p->file, 1, DIAG_ERROR, "duplicate path %s (also %s)", p->path,
			 c->pages[*idx].file);
		page_free(p);
		return;
	}
	c->npages++;
}

int corpus_share_bodies(corpus *c, int readers)
{
	free(c->body_readers);
	c->body_readers = malloc((size_t)(c->npages ? c->npages : 1) * sizeof(*c->body_readers));
	if (!c->body_readers)
		return ATLAS_ENOMEM;
	for (int i = 0; i < c->npages; i++)
		atomic_init(&c->body_readers[i], readers);
	return 0;
}

void corpus_release_bodies(corpus *c, int i)
{
	if (!c->body_readers || atomic_fetch_sub(&c->body_readers[i], 1) != 1)
		return;
	page *p = &c->pages[i];
	for (int s = 0; s < p->nsecs; s++) {
		p->secs[s].body = "";
		p->secs[s].body_len = 0;
	}
	page_release_text(p);
}

int corpus_load(corpus *c, const char *dir, bool strict, diag_list *d)
{
	memset(c, 0, sizeof(*c));
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		diag_add(d, dir, 0, DIAG_ERROR, "corpus directory not found or not a directory");
		return ATLAS_ENOTFOUND;
	}
	c->dir = strdup(dir);
	corpus_load_topics(c, d);
	corpus_load_synonyms(c, d);
	corpus_load_pages(c, "explainers", ATLAS_TYPE_EXPLAINER, d);
	corpus_load_pages(c, "guides", ATLAS_TYPE_GUIDE, d);
	corpus_load_pages(c, "pages", ATLAS_TYPE_PAGE, d);
	corpus_read_sitemap(c, d, strict);
	corpus_add_topic_pages(c, d);
	corpus_check_references(c, strict, d);
	corpus_check_sitemap(c, strict, d);
	if (!c->site_url)
		c->site_url = strdup("");
	/* the guides' front matter texts only placed messages, and the sitemap was only checked,
	 * all done by now: not kept through the build */
	for (int i = 0; i < c->npages; i++) {
		free(c->pages[i].fm_text);
		c->pages[i].fm_text = NULL;
	}
	corpus_free_sitemap(c);
	return 0;
}

void corpus_free(corpus *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->npages; i++)
		page_free(&c->pages[i]);
	free(c->pages);
	free(c->page_next);
	free(c->body_readers);
	strmap_free(&c->page_index);
	for (int i = 0; i < c->ntopics; i++) {
		free(c->topics[i].path);
		free(c->topics[i].parent);
		free(c->topics[i].title);
		free(c->topics[i].description);
		free(c->topics[i].page);
	}
	free(c->topics);
	strmap_free(&c->topic_index);
	for (int i = 0; i < c->nsyn; i++) {
		for (char **t = c->syn_groups[i]; *t; t++)
			free(*t);
		free(c->syn_groups[i]);
	}
	free(c->syn_groups);
	corpus_free_sitemap(c);
	free(c->site_url);
	free(c->compilation_example);
	free(c->copy_example);
	free(c->dir);
	memset(c, 0, sizeof(*c));
}
