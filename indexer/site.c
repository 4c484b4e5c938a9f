/* site.c - reading a built site: the folder's HTML files (each read by html.c on every core), the
 * sitemap, link targets, and the whole site put together (configuration: site_config.c; titles and
 * pages: site_pages.c; parents, topics, guides and types: site_structure.c). */
#include "site_internal.h"
#include "error.h"
#include "anchor.h"
#include "html.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

enum diag_severity warn_sev(const site *s)
{
	return s->strict ? DIAG_ERROR : DIAG_WARNING;
}

bool is_page_file(const site_file *f)
{
	return f->ok && !f->hp.skip && f->redirect_to == -2;
}

unsigned long long fnv1a(unsigned long long h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/**************************************************************************************************
** The folder.
*/

static bool excluded(const site *s, const char *rel)
{
	for (int i = 0; i < s->cfg.nexclude; i++)
		if (site_glob_match(s->cfg.exclude[i], rel))
			return true;
	return false;
}

static bool is_html_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 5 && strcasecmp(n + l - 5, ".html") == 0) || (l > 4 && strcasecmp(n + l - 4, ".htm") == 0);
}

/* Adds the file rel (relative to the site's folder) to s->files. Returns 0, or ATLAS_ENOMEM when
 * out of memory (s->files then as it was). */
static int add_file(site *s, const char *rel)
{
	if (s->nfiles == s->capfiles) {
		int cap = s->capfiles ? s->capfiles * 2 : 256;
		site_file *f = realloc(s->files, (size_t)cap * sizeof(*f));
		if (!f)
			return ATLAS_ENOMEM;
		s->files = f;
		s->capfiles = cap;
	}
	site_file *f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	f->rel = strdup(rel);
	size_t n = strlen(s->dir) + strlen(rel) + 2;
	f->file = malloc(n);
	if (!f->rel || !f->file) {
		free(f->rel);
		free(f->file);
		return ATLAS_ENOMEM;
	}
	snprintf(f->file, n, "%s/%s", s->dir, rel);
	f->page = f->parent = f->next = f->topic = -1;
	f->redirect_to = -2;
	s->nfiles++;
	return 0;
}

int cmp_rel(const void *a, const void *b)
{
	return strcmp(((const site_file *)a)->rel, ((const site_file *)b)->rel);
}

/* Whether real (a resolved path) lies inside the site's folder. */
static bool inside(const site *s, const char *real)
{
	size_t n = strlen(s->real_dir);
	return strncmp(real, s->real_dir, n) == 0 && (real[n] == '/' || real[n] == '\0' || n == 1);
}

/* Lists the HTML files below rel (a folder, "" for the top), following symbolic links only to
 * files inside the site's folder. */
void walk(site *s, const char *rel, int depth)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s%s", s->dir, *rel ? "/" : "", rel);
	DIR *dir = opendir(path);
	if (!dir) {
		diag_add(s->d, path, 0, DIAG_ERROR, "cannot open directory: %s", strerror(errno));
		return;
	}
	struct dirent *de;
	while ((de = readdir(dir))) {
		const char *n = de->d_name;
		if (n[0] == '.')
			continue;
		char sub[PATH_MAX], full[PATH_MAX];
		snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", n);
		if (snprintf(full, sizeof(full), "%s/%s", s->dir, sub) >= (int)sizeof(full))
			continue;
		struct stat st;
		if (lstat(full, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			char real[PATH_MAX];
			struct stat tst;
			bool in = realpath(full, real) && inside(s, real);
			bool target_dir = stat(full, &tst) == 0 && S_ISDIR(tst.st_mode);
			if (!in) {
				if (target_dir || is_html_name(n))
					diag_add(s->d, full, 0, warn_sev(s), "symbolic link out of the site, not followed");
				continue;
			}
			if (target_dir || stat(full, &st) != 0 || !S_ISREG(st.st_mode))
				continue; /* folders inside the site are reached by their own name */
		}
		if (S_ISDIR(st.st_mode)) {
			if (depth < 64 && !excluded(s, sub))
				walk(s, sub, depth + 1);
		} else if (S_ISREG(st.st_mode) && is_html_name(n) && !excluded(s, sub)) {
			if (add_file(s, sub))
				diag_add(s->d, full, 0, DIAG_ERROR, "out of memory");
		}
	}
	closedir(dir);
}

/**************************************************************************************************
** Reading pages on every core.
*/

static void read_one(site *s, site_file *f)
{
	int fd = open(f->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		fd = open(f->file, O_RDONLY | O_CLOEXEC); /* a link inside the site, checked by walk */
	if (fd < 0) {
		f->read_errno = errno;
		return;
	}
	strbuf sb = STRBUF_INIT;
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		strbuf_reserve(&sb, (size_t)st.st_size + 1);
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_append(&sb, buf, (size_t)n);
	int e = errno;
	close(fd);
	if (n < 0 || sb.oom) {
		f->read_errno = n < 0 ? e : ENOMEM;
		strbuf_free(&sb);
		return;
	}
	f->bytes = sb.len;
	f->digest = fnv1a(fnv1a(1469598103934665603ULL, f->rel, strlen(f->rel) + 1), sb.buf ? sb.buf : "", sb.len);
	char *utf8;
	size_t un;
	f->decode_rc = html_decode(sb.buf ? sb.buf : "", sb.len, &utf8, &un, &f->replaced, f->charset);
	strbuf_free(&sb);
	if (f->decode_rc)
		return;
	f->ok = html_read(&f->hp, utf8, un, &s->opts) == 0;
	if (!f->ok)
		f->read_errno = ENOMEM;
	free(utf8);
}

static void *read_files(void *arg)
{
	site *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		int i = s->next_file++;
		pthread_mutex_unlock(&s->lock);
		if (i >= s->nfiles) {
			html_thread_done();
			return NULL;
		}
		read_one(s, &s->files[i]);
	}
}

void read_all(site *s)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = cpus < 1 ? 1 : cpus > SITE_THREADS_MAX ? SITE_THREADS_MAX : (int)cpus;
	pthread_mutex_init(&s->lock, NULL);
	s->next_file = 0;
	pthread_t t[SITE_THREADS_MAX];
	int started = 0;
	for (int i = 1; i < nthreads && i < s->nfiles; i++)
		if (pthread_create(&t[started], NULL, read_files, s) == 0)
			started++;
	read_files(s);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_mutex_destroy(&s->lock);
}

/**************************************************************************************************
** URLs.
*/

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The path below the site's folder that href (in the page at rel) names, normalised and percent
 * decoded, written into out ("" for the top; a trailing '/' kept), or false when href leaves the
 * site or is not a web address (mailto:, javascript:, another host). The fragment goes into frag
 * (may be NULL). */
static bool resolve(const site *s, const char *rel, const char *href, char *out, size_t outn, char *frag,
		    size_t fragn)
{
	while (isspace((unsigned char)*href))
		href++;
	char h[2048];
	snprintf(h, sizeof(h), "%s", href);
	size_t hl = strlen(h);
	while (hl && isspace((unsigned char)h[hl - 1]))
		h[--hl] = '\0';
	char *hash = strchr(h, '#');
	if (frag)
		snprintf(frag, fragn, "%s", hash ? hash + 1 : "");
	if (hash)
		*hash = '\0';
	char *q = strchr(h, '?');
	if (q)
		*q = '\0';
	const char *p = h;
	char joined[4096];
	const char *site_url = s->c->site_url ? s->c->site_url : "";
	size_t ul = strlen(site_url);
	const char *colon = strchr(p, ':'), *slash = strchr(p, '/');
	bool url_path = true; /* href is an absolute URL or path, not relative to the page */
	if (colon && (!slash || colon < slash)) {
		if (strncasecmp(p, "http://", 7) != 0 && strncasecmp(p, "https://", 8) != 0)
			return false;
		if (!ul || strncasecmp(p, site_url, ul) != 0 || (p[ul] && p[ul] != '/'))
			return false;
		snprintf(joined, sizeof(joined), "%s", p + ul);
	} else if (p[0] == '/' && p[1] == '/') {
		const char *host = strstr(site_url, "//");
		size_t hl2 = host ? strlen(host) : 0;
		if (!hl2 || strncasecmp(p, host, hl2) != 0 || (p[hl2] && p[hl2] != '/'))
			return false;
		snprintf(joined, sizeof(joined), "%s", p + hl2);
	} else if (p[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", p);
	} else {
		url_path = false;
		const char *last = strrchr(rel, '/');
		int dl = last ? (int)(last - rel) : 0;
		if (!*p) /* the page itself */
			snprintf(joined, sizeof(joined), "/%s", rel);
		else
			snprintf(joined, sizeof(joined), "/%.*s%s%s", dl, rel, dl ? "/" : "", p);
	}
	if (url_path) {
		/* a URL path: below the folder the site is served as */
		size_t bl = strlen(s->base);
		if (bl && strncmp(joined, s->base, bl) == 0 && (joined[bl] == '/' || !joined[bl]))
			memmove(joined, joined + bl, strlen(joined + bl) + 1);
		else if (bl && s->base_in_paths)
			return false; /* another part of the host */
	}
	/* segments, with . and .. */
	char *seg[512];
	int nseg = 0;
	bool dir = joined[strlen(joined) - 1] == '/' || !joined[0];
	char *save = NULL;
	for (char *t = strtok_r(joined, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (strcmp(t, ".") == 0) {
			dir = true;
			continue;
		}
		if (strcmp(t, "..") == 0) {
			if (!nseg)
				return false;
			nseg--;
			dir = true;
			continue;
		}
		dir = false;
		if (nseg < 512)
			seg[nseg++] = t;
	}
	size_t o = 0;
	for (int i = 0; i < nseg; i++) {
		for (const char *c = seg[i]; *c && o + 4 < outn; c++) {
			int a, b;
			if (*c == '%' && (a = hexval(c[1])) >= 0 && (b = hexval(c[2])) >= 0) {
				out[o++] = (char)(a * 16 + b);
				c += 2;
			} else
				out[o++] = *c;
		}
		if (o + 2 < outn && (i + 1 < nseg || dir))
			out[o++] = '/';
	}
	out[o] = '\0';
	return true;
}

/* The file a resolved path serves: itself, or its folder's index page. Returns the file's index,
 * or -1 when there is none (not an error code). */
static int file_of(const site *s, const char *rel)
{
	int *i = strmap_get(&s->by_rel, rel);
	if (i)
		return *i;
	char t[4200];
	size_t n = strlen(rel);
	static const char *const tails[] = { "index.html", "index.htm" };
	for (int k = 0; k < 2; k++) {
		if (!n || rel[n - 1] == '/')
			snprintf(t, sizeof(t), "%s%s", rel, tails[k]);
		else
			snprintf(t, sizeof(t), "%s/%s", rel, tails[k]);
		if ((i = strmap_get(&s->by_rel, t)))
			return *i;
	}
	/* "/caching" or "/caching/" served from caching.html */
	if (n) {
		snprintf(t, sizeof(t), "%.*s.html", (int)(rel[n - 1] == '/' ? n - 1 : n), rel);
		if ((i = strmap_get(&s->by_rel, t)))
			return *i;
	}
	return -1;
}

/* The page file href names from file fi, or -1 when none (not an error code); *exists is false when
 * href names a file of the site that is missing. frag (of fragn bytes, may be NULL) gets href's
 * fragment. */
int target_of(const site *s, int fi, const char *href, bool *exists, char *frag, size_t fragn)
{
	char rel[4096];
	*exists = false;
	if (frag && fragn)
		*frag = '\0';
	if (!resolve(s, s->files[fi].rel, href, rel, sizeof(rel), frag, fragn)) {
		*exists = true; /* not the site's: not broken either */
		return -1;
	}
	int t = file_of(s, rel);
	for (int hop = 0; t >= 0 && s->files[t].redirect_to != -2; hop++)
		t = hop < SITE_REDIRECT_HOPS ? s->files[t].redirect_to : -1;
	if (t >= 0 && s->files[t].page >= 0) {
		*exists = true;
		return t;
	}
	char full[PATH_MAX];
	struct stat st;
	if (snprintf(full, sizeof(full), "%s/%s", s->dir, rel) >= (int)sizeof(full))
		return -1;
	*exists = t >= 0 || stat(full, &st) == 0;
	return -1;
}

/**************************************************************************************************
** The sitemap.
*/

/* The folder of the host's URL paths the sitemap's entries lie below when the site is served
 * under one ("/docs/15" for locs under https://example.org/docs/15/): the prefix which, cut from
 * the most entries, leaves the path of a file of the site; "" when the paths name files as they
 * are. Returns a malloc'd string (NULL when out of memory). */
static char *base_from_sitemap(site *s)
{
	corpus *c = s->c;
	strmap votes = STRMAP_INIT;
	for (int i = 0; i < c->nsitemap; i++) {
		const char *p = c->sitemap[i].path;
		for (const char *q = p; q && *q == '/'; q = strchr(q + 1, '/')) {
			char rel[4096];
			if (resolve(s, "", q, rel, sizeof(rel), NULL, 0) && file_of(s, rel) >= 0) {
				int *v = strmap_put(&votes, p, (size_t)(q - p), 0, NULL);
				if (v)
					(*v)++;
				break;
			}
		}
	}
	const char *best = "";
	int bestn = 0;
	for (size_t i = 0; i < votes.cap; i++)
		if (votes.slots[i].key && votes.slots[i].value > bestn) {
			best = votes.slots[i].key;
			bestn = votes.slots[i].value;
		}
	char *r = strdup(best);
	strmap_free(&votes);
	return r;
}

/* Reads dir/sitemap.xml (when present) and gives each listed file its path, lastmod, priority
 * and image; a URL with no file is a warning. Without a configured site_url, the folder the site
 * is served as comes from the sitemap's locs (base_from_sitemap). */
void read_sitemap(site *s)
{
	char file[PATH_MAX];
	snprintf(file, sizeof(file), "%s/sitemap.xml", s->dir);
	struct stat st;
	if (stat(file, &st) != 0)
		return;
	corpus *c = s->c;
	bool configured = c->site_url != NULL;
	corpus_read_sitemap(c, s->d, s->strict);
	if (!configured && c->site_url) {
		char *b = base_from_sitemap(s);
		if (b) {
			free(s->base);
			s->base = b;
			s->base_in_paths = *b != '\0';
		}
	}
	size_t ul = configured ? strlen(c->site_url) : 0;
	for (int i = 0; i < c->nsitemap; i++) {
		sitemap_entry *e = &c->sitemap[i];
		if (!e->path)
			continue;
		const char *path = e->path;
		if (ul && e->loc && strncmp(e->loc, c->site_url, ul) == 0)
			path = e->loc + ul;
		char rel[4096];
		int fi = -1;
		if (resolve(s, "", *path ? path : "/", rel, sizeof(rel), NULL, 0))
			fi = file_of(s, rel);
		if (fi < 0) {
			diag_add(s->d, file, e->line, warn_sev(s), "sitemap lists %s but the site has no such page",
				 path);
			continue;
		}
		site_file *f = &s->files[fi];
		if (f->in_sitemap)
			continue;
		f->in_sitemap = true;
		free(f->path);
		f->path = strdup(*path ? path : "/");
		f->lastmod = e->lastmod;
		f->priority = e->priority;
		f->image = e->image;
	}
}

/**************************************************************************************************
** The whole site.
*/

/* The site's address when neither the configuration nor a sitemap gives it: the part of the
 * canonical links (else og:url) before each page's own path, when most of them agree. */
static char *url_from_canonicals(const site *s)
{
	strmap counts = STRMAP_INIT;
	int with = 0;
	for (int fi = 0; fi < s->nfiles; fi++) {
		const site_file *f = &s->files[fi];
		const char *cn = f->ok ? f->hp.canonical ? f->hp.canonical : f->hp.og_url : NULL;
		if (!cn || (strncmp(cn, "http://", 7) != 0 && strncmp(cn, "https://", 8) != 0))
			continue;
		with++;
		size_t cl = strlen(cn), rl = strlen(f->rel);
		char rel_dir[4096];
		snprintf(rel_dir, sizeof(rel_dir), "%s", f->rel);
		char *last = strrchr(rel_dir, '/');
		if (last && strncmp(last + 1, "index.", 6) == 0)
			last[1] = '\0';
		else if (!last && strncmp(rel_dir, "index.", 6) == 0)
			rel_dir[0] = '\0';
		else
			rel_dir[0] = '\1';
		size_t dl = strlen(rel_dir);
		size_t cut = 0;
		if (cl > rl && strcmp(cn + cl - rl, f->rel) == 0 && cn[cl - rl - 1] == '/')
			cut = cl - rl - 1;
		else if (rel_dir[0] != '\1' && cl > dl && strcmp(cn + cl - dl, rel_dir) == 0 && cn[cl - dl - 1] == '/')
			cut = cl - dl - 1;
		int *v = cut ? strmap_put(&counts, cn, cut, 0, NULL) : NULL;
		if (v)
			(*v)++;
	}
	const char *best = NULL;
	int bestn = 0;
	for (size_t i = 0; i < counts.cap; i++)
		if (counts.slots[i].key && counts.slots[i].value > bestn) {
			best = counts.slots[i].key;
			bestn = counts.slots[i].value;
		}
	char *r = best && bestn * 2 > with ? strdup(best) : NULL;
	strmap_free(&counts);
	return r;
}

/* Moves the texts of pages [from, c->npages) into one block of their own (corpus_gather_texts),
 * given back whole as the build indexes them, while the memory of the texts they were made from
 * is taken again by the next pages. Returns c->npages. */
static int gather_batch(corpus *c, int from)
{
	page *batch[SITE_TEXT_BATCH];
	int n = 0;
	for (int i = from; i < c->npages && n < SITE_TEXT_BATCH; i++)
		batch[n++] = &c->pages[i];
	if (n)
		corpus_gather_texts(batch, n);
	return c->npages;
}

/* Adds the files' digests and sizes to the corpus's and reports each file that could not be
 * read or decoded, in file order. Never fails. */
static void report_reads(site *s)
{
	corpus *c = s->c;
	diag_list *d = s->d;
	for (int i = 0; i < s->nfiles; i++) {
		site_file *f = &s->files[i];
		c->digest = fnv1a(c->digest ? c->digest : 1469598103934665603ULL, &f->digest, sizeof(f->digest));
		c->bytes += f->bytes;
		if (f->read_errno)
			diag_add(d, f->file, 0, DIAG_ERROR, "cannot read: %s", strerror(f->read_errno));
		else if (f->decode_rc == ATLAS_EINVAL)
			diag_add(d, f->file, 1, DIAG_ERROR, "cannot decode: unknown charset \"%s\"", f->charset);
		else if (f->decode_rc)
			diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
		else if (f->replaced)
			diag_add(d, f->file, 1, warn_sev(s), "%ld byte%s not valid %s, replaced", f->replaced,
				 f->replaced == 1 ? "" : "s", f->charset);
	}
}

/* Sets c->site_url (the configuration's, the sitemap's or the canonicals' address, or "") and
 * s->base, the URL path folder pages' paths are relative to. Allocation failures leave a field
 * NULL or ""; never fails otherwise. */
static void find_site_address(site *s)
{
	corpus *c = s->c;
	if (s->cfg.site_url)
		c->site_url = strdup(s->cfg.site_url);
	s->base = strdup("");
	read_sitemap(s);
	bool found = !c->site_url;
	if (!c->site_url)
		c->site_url = url_from_canonicals(s);
	if (!c->site_url)
		c->site_url = strdup("");
	if (!c->have_sitemap || s->cfg.site_url) {
		/* the folder of the URL's path: the pages' paths below it when it was found, the
		 * configuration's site_url being the address paths are relative to */
		const char *h = strstr(c->site_url, "://");
		char *p = h ? strchr(h + 3, '/') : NULL;
		free(s->base);
		s->base = strdup(p ? p : "");
		if (p && found && s->base && *s->base) {
			*p = '\0';
			s->base_in_paths = true;
		}
	}
}

/* Finds the redirect pages (<meta http-equiv="refresh"> naming another address: Texinfo's
 * XREF pages, Hugo's aliases, a moved page left behind) and the file each leads to; they are
 * not made pages, and links to them lead to their targets (target_of). A redirect to a file of
 * the site that is missing is a warning. Counts them in the corpus. Never fails. */
static void find_redirects(site *s)
{
	for (int i = 0; i < s->nfiles; i++) {
		site_file *f = &s->files[i];
		f->redirect_to = -2;
		if (!f->ok || !f->hp.redirect)
			continue;
		char rel[4096];
		if (!resolve(s, f->rel, f->hp.redirect, rel, sizeof(rel), NULL, 0)) {
			f->redirect_to = -1; /* another site's address */
			s->c->redirects++;
			continue;
		}
		int t = file_of(s, rel);
		if (t == i)
			continue; /* the page reloads itself */
		f->redirect_to = t;
		s->c->redirects++;
		char full[PATH_MAX];
		struct stat st;
		if (t < 0 && snprintf(full, sizeof(full), "%s/%s", s->dir, rel) < (int)sizeof(full) &&
		    stat(full, &st) != 0)
			diag_add(s->d, f->file, f->hp.redirect_line, warn_sev(s),
				 "redirects to %s, which is not in the site", f->hp.redirect);
	}
}

/* Leaves out the site's search page, the page its pages name with rel=search (Sphinx's
 * search.html: a form and "Please activate JavaScript"): a search never answers with it. An
 * OpenSearch description or another site's page is no file of the site and is left alone.
 * Counted in the corpus. */
static void find_search_pages(site *s)
{
	for (int i = 0; i < s->nfiles; i++) {
		const site_file *f = &s->files[i];
		char rel[4096];
		if (!f->ok || !f->hp.search || !resolve(s, f->rel, f->hp.search, rel, sizeof(rel), NULL, 0))
			continue;
		int t = file_of(s, rel);
		if (t < 0 || !is_page_file(&s->files[t]))
			continue;
		s->files[t].hp.skip = true;
		s->c->search_pages++;
	}
}

/* Leaves out the site's page for missing addresses: 404.html (or 404/index.html) at the top, the
 * name the hosts that serve built sites look for. Its text ("Page not found") answers no search
 * and it starts no reading. Counted in the corpus. */
static void find_error_pages(site *s)
{
	for (int i = 0; i < s->nfiles; i++) {
		site_file *f = &s->files[i];
		if (is_page_file(f) && (strcmp(f->rel, "404.html") == 0 || strcmp(f->rel, "404/index.html") == 0)) {
			f->hp.skip = true;
			s->c->error_pages++;
		}
	}
}

/* Makes the corpus's pages from the read files, in file order, with each page's path taken
 * from the sitemap or its file; reports pages missing from the sitemap, duplicate paths and empty
 * pages. Out of memory for a page is reported and the page left out; when the page array cannot
 * grow, the rest are left out. Texts are gathered into blocks batch by batch (SITE_TEXT_BATCH
 * pages, or SITE_TEXT_BLOCK bytes). */
static void add_pages(site *s)
{
	corpus *c = s->c;
	diag_list *d = s->d;
	int gathered = 0;     /* pages whose texts are in blocks */
	size_t pending = 0;   /* bytes of the texts of the pages after those */
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (!is_page_file(f))
			continue;
		if (!f->path) {
			if (c->have_sitemap)
				diag_add(d, f->file, 1, warn_sev(s), "page /%s is not in sitemap.xml", f->rel);
			const char *b = s->base_in_paths ? s->base : "";
			size_t n = strlen(b) + strlen(f->rel) + 2;
			if ((f->path = malloc(n)))
				snprintf(f->path, n, "%s/%s", b, f->rel);
		}
		if (!f->path)
			continue;
		int added = 0;
		int *idx = strmap_put(&c->page_index, f->path, strlen(f->path), c->npages, &added);
		if (!idx)
			continue;
		if (!added) {
			diag_add(d, f->file, 1, warn_sev(s), "duplicate path %s (also %s)", f->path,
				 c->pages[*idx].file);
			continue;
		}
		if (c->npages == c->cappages) {
			int cap = c->cappages ? c->cappages * 2 : 256;
			page *pg = realloc(c->pages, (size_t)cap * sizeof(*pg));
			if (!pg) {
				diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
				break;
			}
			c->pages = pg;
			c->cappages = cap;
		}
		page *p = &c->pages[c->npages];
		if (make_page(s, fi, p)) {
			diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
			page_free(p);
			continue;
		}
		if (!p->words)
			diag_add(d, f->file, f->hp.body_line, warn_sev(s), "the page's content is empty");
		f->page = c->npages++;
		pending += p->text_len + 1;
		if (c->npages - gathered == SITE_TEXT_BATCH || pending >= SITE_TEXT_BLOCK) {
			gathered = gather_batch(c, gathered);
			pending = 0;
		}
	}
	gather_batch(c, gathered);
}

int site_load(corpus *c, const char *dir, const char *config_path, bool strict, diag_list *d)
{
	memset(c, 0, sizeof(*c));
	c->site = true;
	site s;
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.d = d;
	s.strict = strict;
	struct stat sb;
	char real[PATH_MAX];
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || !realpath(dir, real)) {
		diag_add(d, dir, 0, DIAG_ERROR, "site directory not found or not a directory");
		return ATLAS_ENOTFOUND;
	}
	s.dir = strdup(dir);
	size_t dl = strlen(s.dir);
	while (dl > 1 && s.dir[dl - 1] == '/')
		s.dir[--dl] = '\0';
	s.real_dir = strdup(real);
	c->dir = strdup(s.dir);
	int rc = config_load(&s, config_path);
	if (rc)
		goto out;
	s.opts.content = s.cfg.content;
	s.opts.ignore = s.cfg.ignore;
	walk(&s, "", 0);
	if (s.nfiles > 1)
		qsort(s.files, (size_t)s.nfiles, sizeof(*s.files), cmp_rel);
	for (int i = 0; i < s.nfiles; i++)
		strmap_put(&s.by_rel, s.files[i].rel, strlen(s.files[i].rel), i, NULL);
	read_all(&s);
	report_reads(&s);
	find_site_address(&s);
	find_redirects(&s);
	find_error_pages(&s);
	find_search_pages(&s);
	find_boilerplate(&s);
	find_repeats(&s);
	find_code_definitions(&s);
	find_title_affix(&s);
	add_pages(&s);
	/* the parsed pages' texts, freed page by page, lie between what is kept: given back */
	malloc_trim(0);
	resolve_links(&s);
	find_parents(&s);
	make_topics(&s);
	make_guides(&s);
	record_next_pages(&s);
	assign_types(&s);
	free(s.suffix);
	free(s.prefix);
out:
	for (int i = 0; i < s.nfiles; i++) {
		free(s.files[i].rel);
		free(s.files[i].file);
		free(s.files[i].path);
		html_page_free(&s.files[i].hp);
	}
	free(s.files);
	strmap_free(&s.by_rel);
	config_free(&s.cfg);
	corpus_free_sitemap(c);
	free(s.dir);
	free(s.real_dir);
	free(s.base);
	if (!c->site_url)
		c->site_url = strdup("");
	malloc_trim(0); /* the HTML pages' links, breadcrumbs and sections, freed above */
	return rc;
}

