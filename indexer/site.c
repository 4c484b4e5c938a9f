/* site.c - reading a built site: the folder's HTML files (each read by html.c on every core), the
 * configuration, the sitemap, and what only the whole site tells: the title suffix every page
 * repeats, link targets, parent pages, the topics and guides they make, page types. */
#include "site.h"
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

/* Chrome most generators put inside the element that holds the page's text: DocBook's navigation
 * header and footer, permalink marks, navigation roles, breadcrumbs, Sphinx's sidebars. */
static const char default_ignore[] =
	".navheader, .navfooter, .headerlink, [role=navigation], [role=search], [role=banner],"
	" [role=contentinfo], .breadcrumb, .breadcrumbs, .related, .sphinxsidebar, [aria-hidden=true]";

#define SITE_THREADS_MAX 8
#define SITE_TEXT_BATCH 256
#define DESCRIPTION_MAX 300
/* A page with at least this many links whose texts are at least half of its text is a listing
 * (a book index, a list of every name): a site page, and its terms are not definitions. */
#define LISTING_LINKS 50

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
	char *base;          /* the path part of site_url ("" or "/docs") */
	html_opts opts;
	pthread_mutex_t lock;
	int next_file;
	char *suffix, *prefix; /* the title's repeated part, or NULL */
} site;

static enum diag_severity warn_sev(const site *s)
{
	return s->strict ? DIAG_ERROR : DIAG_WARNING;
}

static unsigned long long fnv1a(unsigned long long h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/**************************************************************************************************
** Globs.
*/

static bool glob_at(const char *p, const char *s)
{
	for (;;) {
		if (!*p)
			return !*s;
		if (p[0] == '*' && p[1] == '*') {
			p += 2;
			if (*p == '/') {
				p++;
				for (const char *q = s;;) {
					if (glob_at(p, q))
						return true;
					const char *sl = strchr(q, '/');
					if (!sl)
						return false;
					q = sl + 1;
				}
			}
			for (const char *q = s;; q++) {
				if (glob_at(p, q))
					return true;
				if (!*q)
					return false;
			}
		}
		if (*p == '*') {
			p++;
			for (const char *q = s;; q++) {
				if (glob_at(p, q))
					return true;
				if (!*q || *q == '/')
					return false;
			}
		}
		if (!*s || *s == '/') {
			if (*p != *s)
				return false;
			if (!*s)
				return false;
			p++;
			s++;
			continue;
		}
		if (*p == '?') {
			p++;
			s++;
			continue;
		}
		if (*p == '[') {
			const char *e = strchr(p + 1 + (p[1] == ']' || p[1] == '!'), ']');
			if (e) {
				char cls[128], one[2] = { *s, 0 };
				size_t n = (size_t)(e - p + 1);
				if (n < sizeof(cls)) {
					memcpy(cls, p, n);
					cls[n] = '\0';
					if (fnmatch(cls, one, 0) != 0)
						return false;
					p = e + 1;
					s++;
					continue;
				}
			}
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return false;
		p++;
		s++;
	}
}

bool site_glob_match(const char *glob, const char *path)
{
	if (glob_at(glob, path))
		return true;
	if (!strchr(glob, '/')) {
		const char *last = strrchr(path, '/');
		return last && glob_at(glob, last + 1);
	}
	return false;
}

/**************************************************************************************************
** Configuration.
*/

static int type_of_name(const char *n)
{
	for (int t = 0; t < 4; t++)
		if (strcmp(n, atlas_page_type_names[t]) == 0)
			return t;
	return -1;
}

static void config_free(site_config *cfg)
{
	free(cfg->file);
	free(cfg->site_url);
	for (int i = 0; i < cfg->nexclude; i++)
		free(cfg->exclude[i]);
	free(cfg->exclude);
	for (int i = 0; i < cfg->ntypes; i++)
		free(cfg->types[i].glob);
	free(cfg->types);
	free(cfg->topic_root);
	html_sel_free(cfg->content);
	html_sel_free(cfg->ignore);
	memset(cfg, 0, sizeof(*cfg));
}

/* Line of the first occurrence of "key" in the file's text, or 1. */
static int key_line(const char *text, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = strstr(text, pat);
	int line = 1;
	for (const char *q = text; p && q < p; q++)
		line += *q == '\n';
	return line;
}

/* A selector list given as one string or an array of strings, joined with commas into sb. */
static bool selector_text(cJSON *v, strbuf *sb)
{
	if (cJSON_IsString(v)) {
		strbuf_puts(sb, v->valuestring);
		return true;
	}
	if (!cJSON_IsArray(v))
		return false;
	cJSON *e;
	cJSON_ArrayForEach(e, v)
	{
		if (!cJSON_IsString(e))
			return false;
		if (sb->len)
			strbuf_putc(sb, ',');
		strbuf_puts(sb, e->valuestring);
	}
	return true;
}

/* Reads the configuration; a missing default file is no configuration. Returns 0, or -1 after
 * recording why in d. */
static int config_load(site *s, const char *path)
{
	char def[PATH_MAX];
	bool given = path != NULL;
	if (!path) {
		snprintf(def, sizeof(def), "%s/atlas.json", s->dir);
		path = def;
	}
	strbuf ig = STRBUF_INIT;
	strbuf_puts(&ig, default_ignore);
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	cJSON *root = NULL;
	int rc = 0;
	if (!f) {
		if (given || errno != ENOENT) {
			diag_add(s->d, path, 0, DIAG_ERROR, "cannot read the configuration: %s", strerror(errno));
			rc = -1;
		}
		goto selectors;
	}
	strbuf sb = STRBUF_INIT;
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_append(&sb, buf, n);
	fclose(f);
	text = strbuf_detach(&sb);
	if (!text)
		text = strdup("");
	s->cfg.file = strdup(path);
	root = cJSON_Parse(text ? text : "");
	if (!cJSON_IsObject(root)) {
		diag_add(s->d, path, 1, DIAG_ERROR, "the configuration is not a JSON object");
		rc = -1;
		goto selectors;
	}
	cJSON *item;
	cJSON_ArrayForEach(item, root)
	{
		const char *k = item->string;
		int line = key_line(text, k);
		if (strcmp(k, "site_url") == 0) {
			if (!cJSON_IsString(item)) {
				diag_add(s->d, path, line, DIAG_ERROR, "site_url must be a string");
				rc = -1;
				continue;
			}
			s->cfg.site_url = strdup(item->valuestring);
			size_t l = strlen(s->cfg.site_url);
			while (l && s->cfg.site_url[l - 1] == '/')
				s->cfg.site_url[--l] = '\0';
		} else if (strcmp(k, "exclude") == 0) {
			cJSON *e;
			bool ok = cJSON_IsArray(item);
			cJSON_ArrayForEach(e, item) ok = ok && cJSON_IsString(e);
			if (!ok) {
				diag_add(s->d, path, line, DIAG_ERROR, "exclude must be an array of glob strings");
				rc = -1;
				continue;
			}
			int cnt = cJSON_GetArraySize(item);
			s->cfg.exclude = calloc((size_t)(cnt ? cnt : 1), sizeof(char *));
			cJSON_ArrayForEach(e, item) if (s->cfg.exclude)
				s->cfg.exclude[s->cfg.nexclude++] = strdup(e->valuestring);
		} else if (strcmp(k, "content") == 0 || strcmp(k, "ignore") == 0) {
			strbuf t = STRBUF_INIT;
			if (!selector_text(item, &t)) {
				diag_add(s->d, path, line, DIAG_ERROR, "%s must be a selector string or an array of them", k);
				rc = -1;
			} else if (k[0] == 'c') {
				char err[200];
				if (!(s->cfg.content = html_sel_parse(strbuf_str(&t), err, sizeof(err)))) {
					diag_add(s->d, path, line, DIAG_ERROR, "content: %s", err);
					rc = -1;
				}
			} else {
				strbuf_putc(&ig, ',');
				strbuf_puts(&ig, strbuf_str(&t));
			}
			strbuf_free(&t);
		} else if (strcmp(k, "topic_root") == 0) {
			if (!cJSON_IsString(item) || item->valuestring[0] != '/') {
				diag_add(s->d, path, line, DIAG_ERROR, "topic_root must be a path starting with /");
				rc = -1;
				continue;
			}
			strbuf t = STRBUF_INIT;
			strbuf_puts(&t, item->valuestring + 1);
			if (t.len && t.buf[t.len - 1] != '/')
				strbuf_putc(&t, '/');
			free(s->cfg.topic_root);
			s->cfg.topic_root = strbuf_detach(&t);
			if (!s->cfg.topic_root)
				s->cfg.topic_root = strdup("");
		} else if (strcmp(k, "types") == 0) {
			if (!cJSON_IsObject(item)) {
				diag_add(s->d, path, line, DIAG_ERROR,
					 "types must be an object of globs and page types (explainer, guide, topic, page)");
				rc = -1;
				continue;
			}
			int cnt = cJSON_GetArraySize(item);
			s->cfg.types = calloc((size_t)(cnt ? cnt : 1), sizeof(type_rule));
			cJSON *e;
			cJSON_ArrayForEach(e, item)
			{
				int t = cJSON_IsString(e) ? type_of_name(e->valuestring) : -1;
				if (t < 0) {
					diag_add(s->d, path, key_line(text, e->string), DIAG_ERROR,
						 "type of \"%s\" must be explainer, guide, topic or page", e->string);
					rc = -1;
				} else if (s->cfg.types) {
					s->cfg.types[s->cfg.ntypes++] = (type_rule){ strdup(e->string), (enum atlas_page_type)t };
				}
			}
		} else {
			diag_add(s->d, path, line, warn_sev(s), "unknown configuration key \"%s\"", k);
		}
	}
selectors: {
	char err[200];
	if (!(s->cfg.ignore = html_sel_parse(strbuf_str(&ig), err, sizeof(err)))) {
		diag_add(s->d, path, key_line(text ? text : "", "ignore"), DIAG_ERROR, "ignore: %s", err);
		rc = -1;
	}
}
	strbuf_free(&ig);
	cJSON_Delete(root);
	free(text);
	return rc;
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

static int add_file(site *s, const char *rel)
{
	if (s->nfiles == s->capfiles) {
		int cap = s->capfiles ? s->capfiles * 2 : 256;
		site_file *f = realloc(s->files, (size_t)cap * sizeof(*f));
		if (!f)
			return -1;
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
		return -1;
	}
	snprintf(f->file, n, "%s/%s", s->dir, rel);
	f->page = f->parent = f->next = f->topic = -1;
	s->nfiles++;
	return 0;
}

static int cmp_rel(const void *a, const void *b)
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
static void walk(site *s, const char *rel, int depth)
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

static void read_all(site *s)
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
		size_t bl = strlen(s->base);
		if (bl && strncmp(p, s->base, bl) == 0 && (p[bl] == '/' || !p[bl]))
			p += bl;
		snprintf(joined, sizeof(joined), "%s", p);
	} else {
		const char *last = strrchr(rel, '/');
		int dl = last ? (int)(last - rel) : 0;
		if (!*p) /* the page itself */
			snprintf(joined, sizeof(joined), "/%s", rel);
		else
			snprintf(joined, sizeof(joined), "/%.*s%s%s", dl, rel, dl ? "/" : "", p);
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
 * or -1. */
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

/* The page file href names from file fi, or -1 (set *outside when it leaves the site). */
static int target_of(const site *s, int fi, const char *href, bool *exists)
{
	char rel[4096];
	*exists = false;
	if (!resolve(s, s->files[fi].rel, href, rel, sizeof(rel), NULL, 0)) {
		*exists = true; /* not the site's: not broken either */
		return -1;
	}
	int t = file_of(s, rel);
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

/* Reads dir/sitemap.xml (when present) and gives each listed file its path, lastmod, priority
 * and image; a URL with no file is a warning. */
static void read_sitemap(site *s)
{
	char file[PATH_MAX];
	snprintf(file, sizeof(file), "%s/sitemap.xml", s->dir);
	struct stat st;
	if (stat(file, &st) != 0)
		return;
	corpus *c = s->c;
	corpus_read_sitemap(c, s->d, s->strict);
	size_t ul = c->site_url ? strlen(c->site_url) : 0;
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
** Titles.
*/

static const char *const title_seps[] = { " — ", " – ", " - ", " | ", " · ", " :: ", " » ", " : " };
#define NSEPS (int)(sizeof(title_seps) / sizeof(title_seps[0]))

/* Finds the part of the title most pages repeat, after (suffix) or before (prefix) a separator:
 * " — Sphinx documentation", "MkDocs - ". Kept only when at least half of the titled pages (and
 * two of them) carry it. */
static void find_title_affix(site *s)
{
	strmap counts = STRMAP_INIT;
	int titled = 0;
	for (int i = 0; i < s->nfiles; i++) {
		const char *t = s->files[i].ok ? s->files[i].hp.title : NULL;
		if (!t)
			continue;
		titled++;
		for (int k = 0; k < NSEPS; k++) {
			const char *sep = title_seps[k];
			size_t sl = strlen(sep);
			/* every separator: the last for suffixes, the first for prefixes */
			const char *last = NULL, *first = strstr(t, sep);
			for (const char *p = first; p; p = strstr(p + 1, sep))
				last = p;
			char key[600];
			if (last && last > t) {
				snprintf(key, sizeof(key), "S%s", last);
				int *v = strmap_put(&counts, key, strlen(key), 0, NULL);
				if (v)
					(*v)++;
			}
			if (first && first[sl]) {
				snprintf(key, sizeof(key), "P%.*s", (int)(first - t + (long)sl), t);
				int *v = strmap_put(&counts, key, strlen(key), 0, NULL);
				if (v)
					(*v)++;
			}
		}
	}
	const char *best = NULL;
	int bestn = 0;
	for (size_t i = 0; i < counts.cap; i++) {
		const strmap_entry *e = &counts.slots[i];
		if (e->key && (e->value > bestn || (e->value == bestn && best && strcmp(e->key, best) < 0))) {
			best = e->key;
			bestn = e->value;
		}
	}
	if (best && bestn >= 2 && bestn * 2 >= titled) {
		if (best[0] == 'S')
			s->suffix = strdup(best + 1);
		else
			s->prefix = strdup(best + 1);
	}
	strmap_free(&counts);
}

/* The page's title with the site's repeated part taken off (malloc'd), else the og:title, else the
 * first h1; NULL when it has none. */
static char *clean_title(const site *s, const html_page *hp)
{
	const char *t = hp->title;
	if (t && *t) {
		size_t n = strlen(t);
		if (s->suffix) {
			size_t sl = strlen(s->suffix);
			if (n > sl && strcmp(t + n - sl, s->suffix) == 0)
				n -= sl;
		}
		if (s->prefix) {
			size_t pl = strlen(s->prefix);
			if (n > pl && strncmp(t, s->prefix, pl) == 0) {
				t += pl;
				n -= pl;
			}
		}
		while (n && t[n - 1] == ' ')
			n--;
		if (n) {
			char *r = malloc(n + 1);
			if (r) {
				memcpy(r, t, n);
				r[n] = '\0';
			}
			return r;
		}
		return strdup(hp->title);
	}
	if (hp->og_title)
		return strdup(hp->og_title);
	if (hp->h1)
		return strdup(hp->h1);
	return NULL;
}

/* The first paragraph cut at a word before DESCRIPTION_MAX bytes (malloc'd), or "". */
static char *short_description(const char *para)
{
	if (!para)
		return strdup("");
	size_t n = strlen(para);
	if (n <= DESCRIPTION_MAX)
		return strdup(para);
	size_t cut = DESCRIPTION_MAX;
	while (cut > 0 && para[cut] != ' ')
		cut--;
	if (!cut)
		cut = DESCRIPTION_MAX;
	while (cut > 0 && ((unsigned char)para[cut] & 0xc0) == 0x80)
		cut--;
	char *r = malloc(cut + 4);
	if (r) {
		memcpy(r, para, cut);
		memcpy(r + cut, "…", 4);
	}
	return r;
}

/**************************************************************************************************
** Pages.
*/

/* Splits the comma-separated keywords into *out. */
static void split_keywords(const char *kw, char ***out, int *n)
{
	*out = NULL;
	*n = 0;
	if (!kw)
		return;
	int cap = 1;
	for (const char *p = kw; *p; p++)
		cap += *p == ',';
	*out = calloc((size_t)cap, sizeof(char *));
	if (!*out)
		return;
	const char *p = kw;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *b = p;
		while (*p && *p != ',')
			p++;
		const char *e = p;
		while (e > b && e[-1] == ' ')
			e--;
		if (e > b && *n < cap) {
			char *k = malloc((size_t)(e - b) + 1);
			if (k) {
				memcpy(k, b, (size_t)(e - b));
				k[e - b] = '\0';
				(*out)[(*n)++] = k;
			}
		}
	}
}

/* Makes the corpus page of file fi (its path set, its HTML read): the lead (description, then
 * the text before the first heading), one section a heading with the page's own anchor. Returns
 * 0 or -1 when out of memory. */
static int make_page(site *s, int fi, page *p)
{
	site_file *f = &s->files[fi];
	html_page *hp = &f->hp;
	memset(p, 0, sizeof(*p));
	p->file = strdup(f->file);
	p->path = f->path;
	f->path = NULL;
	p->type = ATLAS_TYPE_EXPLAINER;
	p->title = clean_title(s, hp);
	if (!p->title) {
		diag_add(s->d, f->file, hp->title_line ? hp->title_line : 1, warn_sev(s), "page has no title");
		const char *base = strrchr(f->rel, '/');
		p->title = strdup(base ? base + 1 : f->rel);
	}
	p->description = hp->description ? strdup(hp->description) : short_description(hp->first_para);
	p->lastmod = strdup(f->lastmod ? f->lastmod : hp->modified ? hp->modified : "");
	if (p->lastmod && strlen(p->lastmod) > 10 && p->lastmod[4] == '-' && p->lastmod[10] == 'T')
		p->lastmod[10] = '\0'; /* the date of a timestamp */
	p->image = strdup(f->image ? f->image : hp->image ? hp->image : "");
	p->priority = f->priority ? atof(f->priority) : 0.5;
	split_keywords(hp->keywords, &p->keywords, &p->nkeywords);
	p->defs = hp->defs;
	p->ndefs = hp->ndefs;
	hp->defs = NULL;
	hp->ndefs = 0;
	if (!p->file || !p->title || !p->description || !p->lastmod || !p->image)
		return -1;
	/* the text: the description and a newline before the lead's own body */
	size_t dl = strlen(p->description);
	p->text_len = dl + 1 + hp->text_len;
	p->text = malloc(p->text_len + 1);
	p->secs = calloc((size_t)hp->nsecs, sizeof(section));
	if (!p->text || !p->secs)
		return -1;
	memcpy(p->text, p->description, dl);
	p->text[dl] = '\n';
	memcpy(p->text + dl + 1, hp->text, hp->text_len + 1);
	if (!hp->description && hp->first_para && strcmp(p->description, hp->first_para) == 0) {
		/* the description is the lead's first paragraph: not kept twice */
		char *lead = p->text + dl + 1, *at = strstr(lead, hp->first_para);
		size_t fl = strlen(hp->first_para);
		if (at) {
			if (at[fl] == '\n')
				fl++;
			memmove(at, at + fl, p->text_len + 1 - (size_t)(at + fl - p->text));
			p->text_len -= fl;
			for (int i = 1; i < hp->nsecs; i++)
				hp->secs[i].body_off -= fl;
		}
	}
	p->lead_len = dl + 1;
	size_t len = p->text_len;
	strmap anchors = STRMAP_INIT;
	p->nsecs = hp->nsecs;
	for (int i = 0; i < hp->nsecs; i++) {
		const html_sec *h = &hp->secs[i];
		section *x = &p->secs[i];
		x->level = i ? h->level : 0;
		x->heading = strdup(i ? h->heading : p->title);
		x->body_off = i ? dl + 1 + h->body_off : 0;
		if (!i)
			x->anchor = strdup("");
		else if (h->anchor) {
			x->anchor = strdup(h->anchor);
		} else {
			strbuf a = STRBUF_INIT;
			anchor_of(&a, h->heading);
			int added = 0;
			int *cnt = strmap_put(&anchors, strbuf_str(&a), a.len, 0, &added);
			if (cnt && !added)
				strbuf_printf(&a, "-%d", ++*cnt);
			x->anchor = strbuf_detach(&a);
			if (!x->anchor)
				x->anchor = strdup("");
		}
		if (!x->heading || !x->anchor) {
			strmap_free(&anchors);
			return -1;
		}
	}
	strmap_free(&anchors);
	for (int i = p->nsecs - 1; i >= 0; i--) {
		section *x = &p->secs[i];
		x->body = p->text + x->body_off;
		x->body_len = len - x->body_off;
		len = x->body_off ? x->body_off - 1 : 0;
	}
	p->words = hp->words;
	free(hp->text);
	hp->text = NULL;
	return 0;
}

/* Adds a link of page p to target (a page's path). A page may link to another more than once, as
 * a corpus page may: the index keeps one edge. */
static void add_link(page *p, const char *target, const char *text, int line)
{
	page_link *l = p->links;
	/* grown by doubling: the capacity is the power of two at or above nlinks */
	if ((p->nlinks & (p->nlinks - 1)) == 0 &&
	    !(l = realloc(p->links, (size_t)(p->nlinks ? p->nlinks * 2 : 1) * sizeof(*l))))
		return;
	p->links = l;
	l[p->nlinks].target = strdup(target);
	l[p->nlinks].text = strdup(text ? text : "");
	l[p->nlinks].line = line;
	if (l[p->nlinks].target && l[p->nlinks].text)
		p->nlinks++;
	else {
		free(l[p->nlinks].target);
		free(l[p->nlinks].text);
	}
}

static void resolve_links(site *s)
{
	corpus *c = s->c;
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		page *p = &c->pages[f->page];
		for (int k = 0; k < f->hp.nlinks; k++) {
			const html_ref *r = &f->hp.links[k];
			bool exists;
			int t = target_of(s, fi, r->href, &exists);
			if (t >= 0) {
				if (t != fi)
					add_link(p, c->pages[s->files[t].page].path, r->text, r->line);
			} else if (!exists) {
				diag_add(s->d, f->file, r->line, warn_sev(s), "link to missing page %s", r->href);
			}
		}
	}
}

/**************************************************************************************************
** Parents, topics, guides, types.
*/

static bool is_root(const site_file *f)
{
	return strcmp(f->rel, "index.html") == 0 || strcmp(f->rel, "index.htm") == 0;
}

/* The index page of the folder above file fi (its own folder's for a page that is not an index
 * page), or -1. */
static int folder_parent(const site *s, int fi)
{
	char d[4096];
	snprintf(d, sizeof(d), "%s", s->files[fi].rel);
	char *last = strrchr(d, '/');
	const char *name = last ? last + 1 : d;
	bool index = strncmp(name, "index.", 6) == 0;
	if (!last) {
		if (index)
			return -1;
		d[0] = '\0';
	} else
		last[1] = '\0';
	for (int guard = 0; guard < 64; guard++) {
		size_t n = strlen(d);
		if (index) {
			/* up one folder */
			if (!n)
				return -1;
			d[n - 1] = '\0';
			char *up = strrchr(d, '/');
			if (up)
				up[1] = '\0';
			else
				d[0] = '\0';
		}
		index = true;
		char t[4200];
		snprintf(t, sizeof(t), "%sindex.html", d);
		int *i = strmap_get(&s->by_rel, t);
		if (!i) {
			snprintf(t, sizeof(t), "%sindex.htm", d);
			i = strmap_get(&s->by_rel, t);
		}
		if (i && *i != fi && s->files[*i].page >= 0)
			return *i;
		if (!d[0])
			return -1;
	}
	return -1;
}

static void find_parents(site *s)
{
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		bool exists;
		int par = -1;
		if (f->hp.up)
			par = target_of(s, fi, f->hp.up, &exists);
		for (int k = f->hp.ncrumbs - 1; (par < 0 || par == fi) && k >= 0; k--)
			par = target_of(s, fi, f->hp.crumbs[k].href, &exists);
		if (par < 0 || par == fi)
			par = folder_parent(s, fi);
		f->parent = par == fi ? -1 : par;
		if (f->hp.next) {
			int nx = target_of(s, fi, f->hp.next, &exists);
			f->next = nx == fi ? -1 : nx;
		}
	}
	/* a parent chain that comes back to itself is cut where it does */
	for (int fi = 0; fi < s->nfiles; fi++) {
		int at = s->files[fi].parent;
		for (int depth = 0; at >= 0; depth++) {
			if (at == fi || depth > 64) {
				s->files[fi].parent = -1;
				break;
			}
			at = s->files[at].parent;
		}
	}
}

/* The topic path of a page: its path below the site (below topic_root when it is there) without
 * index.html, .html and slashes ("usage/index.html" -> "usage"), written into out; "" for the
 * top. */
static void topic_path(const site *s, const site_file *f, char *out, size_t n)
{
	const char *root = s->cfg.topic_root ? s->cfg.topic_root : "";
	size_t rl = strlen(root);
	snprintf(out, n, "%s", strncmp(f->rel, root, rl) == 0 ? f->rel + rl : f->rel);
	size_t l = strlen(out);
	const char *tails[] = { "index.html", "index.htm", ".html", ".htm" };
	for (int k = 0; k < 4; k++) {
		size_t tl = strlen(tails[k]);
		if (l >= tl && strcasecmp(out + l - tl, tails[k]) == 0) {
			l -= tl;
			out[l] = '\0';
			break;
		}
	}
	while (l && out[l - 1] == '/')
		out[--l] = '\0';
}

/* The topic whose page is file fi (made, with its parents, when it is new), or -1 for the site's
 * top page and pages whose topic cannot be made. */
static int topic_of(site *s, int fi, int depth)
{
	site_file *f = &s->files[fi];
	if (f->topic >= 0 || depth > 64)
		return f->topic;
	if (is_root(f) || f->page < 0)
		return -1;
	char tp[4096];
	topic_path(s, f, tp, sizeof(tp));
	if (!*tp)
		return -1;
	int parent = f->parent >= 0 ? topic_of(s, f->parent, depth + 1) : -1;
	corpus *c = s->c;
	int added = 0;
	int *idx = strmap_put(&c->topic_index, tp, strlen(tp), c->ntopics, &added);
	if (!idx)
		return -1;
	if (!added) {
		f->topic = *idx;
		return *idx;
	}
	if (c->ntopics == c->captopics) {
		int cap = c->captopics ? c->captopics * 2 : 64;
		topic *t = realloc(c->topics, (size_t)cap * sizeof(*t));
		if (!t)
			return -1;
		c->topics = t;
		c->captopics = cap;
	}
	const page *p = &c->pages[f->page];
	topic *t = &c->topics[c->ntopics];
	memset(t, 0, sizeof(*t));
	t->path = strdup(tp);
	t->parent = parent >= 0 ? strdup(c->topics[parent].path) : NULL;
	/* named as the breadcrumbs name it ("Caching"), else by its page's title */
	t->title = strdup(f->crumb_text ? f->crumb_text : p->title);
	t->description = strdup(p->description);
	t->page = strdup(p->path);
	t->ord = c->ntopics;
	t->line = 0;
	f->topic = c->ntopics++;
	return f->topic;
}

/* Adds topic t to page p unless it has it. */
static void add_topic(corpus *c, page *p, int t)
{
	for (int k = 0; k < p->ntopics; k++)
		if (strcmp(p->topics[k], c->topics[t].path) == 0)
			return;
	char **v = realloc(p->topics, (size_t)(p->ntopics + 1) * sizeof(char *));
	if (!v)
		return;
	p->topics = v;
	if ((v[p->ntopics] = strdup(c->topics[t].path)))
		p->ntopics++;
}

/* Each page's topics: the pages its breadcrumb trails end at (itself, for a page that ends its
 * own trail: a topic's page), else its parent page's. */
static void make_topics(site *s)
{
	corpus *c = s->c;
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		for (int k = 0; f->page >= 0 && k < f->hp.ncrumbs + f->hp.ntrail_ends; k++) {
			const html_ref *r = k < f->hp.ncrumbs ? &f->hp.crumbs[k] : &f->hp.trail_ends[k - f->hp.ncrumbs];
			bool exists;
			int t = r->text ? target_of(s, fi, r->href, &exists) : -1;
			if (t >= 0 && !s->files[t].crumb_text)
				s->files[t].crumb_text = r->text;
		}
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		page *p = &c->pages[f->page];
		bool any = false;
		for (int k = 0; k < f->hp.ntrail_ends; k++) {
			bool exists;
			int at = target_of(s, fi, f->hp.trail_ends[k].href, &exists);
			int t = at >= 0 ? topic_of(s, at, 0) : -1;
			if (t >= 0) {
				add_topic(c, p, t);
				any = true;
			}
		}
		if (!any && f->parent >= 0) {
			int t = topic_of(s, f->parent, 0);
			if (t >= 0)
				add_topic(c, p, t);
		}
	}
}

/* Whether file a lies below file anc in the parent tree. */
static bool below(const site *s, int a, int anc)
{
	for (int depth = 0; a >= 0 && depth < 64; depth++) {
		a = s->files[a].parent;
		if (a == anc)
			return true;
	}
	return false;
}

static char *slug_of(const char *path)
{
	return strdup(path[0] == '/' ? path + 1 : path);
}

/* Guides: a page's lists marked data-atlas-guide, in their order; else the rel=next chain
 * through the pages whose parent it is (skipping their own children), when it has two steps or
 * more. The site's top page is not a guide. */
static void make_guides(site *s)
{
	corpus *c = s->c;
	int *first_child = malloc((size_t)(s->nfiles ? s->nfiles : 1) * sizeof(int));
	bool *has_prev = calloc((size_t)(s->nfiles ? s->nfiles : 1), sizeof(bool));
	if (!first_child || !has_prev) {
		free(first_child);
		free(has_prev);
		return;
	}
	for (int fi = 0; fi < s->nfiles; fi++)
		first_child[fi] = -1;
	/* a child is where its parent's chain starts when no sibling's next leads to it */
	for (int fi = 0; fi < s->nfiles; fi++) {
		int nx = s->files[fi].next;
		if (nx >= 0 && s->files[nx].parent == s->files[fi].parent)
			has_prev[nx] = true;
	}
	for (int fi = 0; fi < s->nfiles; fi++) {
		int par = s->files[fi].parent;
		if (par >= 0 && s->files[fi].page >= 0 && !has_prev[fi] && first_child[par] < 0)
			first_child[par] = fi;
	}
	for (int gi = 0; gi < s->nfiles; gi++) {
		site_file *g = &s->files[gi];
		if (g->page < 0)
			continue;
		page *p = &c->pages[g->page];
		if (g->hp.nguides) {
			p->gsecs = calloc((size_t)g->hp.nguides, sizeof(guide_section));
			if (!p->gsecs)
				continue;
			for (int k = 0; k < g->hp.nguides; k++) {
				const html_guide *hg = &g->hp.guides[k];
				guide_section *gs = &p->gsecs[p->ngsecs++];
				gs->title = strdup(hg->title ? hg->title : p->title);
				gs->steps = calloc((size_t)(hg->nsteps ? hg->nsteps : 1), sizeof(char *));
				for (int j = 0; gs->steps && j < hg->nsteps; j++) {
					bool exists;
					int t = target_of(s, gi, hg->steps[j].href, &exists);
					if (t < 0) {
						diag_add(s->d, g->file, hg->steps[j].line, warn_sev(s),
							 "guide step %s is not a page of the site", hg->steps[j].href);
						continue;
					}
					gs->steps[gs->nsteps] = slug_of(c->pages[s->files[t].page].path);
					if (gs->steps[gs->nsteps])
						gs->nsteps++;
				}
			}
			p->type = ATLAS_TYPE_GUIDE;
			continue;
		}
		/* the chain starts where the page's own next leads, when that is one of its children;
		 * else at its first child (by file name) that no sibling leads to */
		int start = g->next >= 0 && s->files[g->next].parent == gi ? g->next : first_child[gi];
		if (is_root(g) || start < 0)
			continue;
		char **steps = NULL;
		int n = 0;
		for (int at = start, guard = 0; at >= 0 && guard < s->nfiles; guard++) {
			if (s->files[at].parent == gi) {
				bool dup = false;
				for (int k = 0; k < n && !dup; k++)
					dup = strcmp(steps[k] + 0, c->pages[s->files[at].page].path + 1) == 0;
				if (dup)
					break;
				char **v = realloc(steps, (size_t)(n + 1) * sizeof(char *));
				if (!v)
					break;
				steps = v;
				if (!(steps[n] = slug_of(c->pages[s->files[at].page].path)))
					break;
				n++;
			} else if (!below(s, at, gi))
				break;
			at = s->files[at].next;
		}
		if (n >= 2) {
			p->gsecs = calloc(1, sizeof(guide_section));
			if (p->gsecs) {
				p->gsecs[0].title = strdup(p->title);
				p->gsecs[0].steps = steps;
				p->gsecs[0].nsteps = n;
				p->ngsecs = 1;
				p->type = ATLAS_TYPE_GUIDE;
				steps = NULL;
				n = 0;
			}
		}
		for (int k = 0; k < n; k++)
			free(steps[k]);
		free(steps);
	}
	free(first_child);
	free(has_prev);
}

/* Page types: the configuration's rules first; else the site's top page and the pages its pages
 * name as index or search pages are site pages, guides stay guides, the rest explainers. */
static void assign_types(site *s)
{
	corpus *c = s->c;
	bool *index_page = calloc((size_t)(s->nfiles ? s->nfiles : 1), sizeof(bool));
	for (int fi = 0; index_page && fi < s->nfiles; fi++)
		for (int k = 0; s->files[fi].page >= 0 && k < s->files[fi].hp.nindex_refs; k++) {
			bool exists;
			int t = target_of(s, fi, s->files[fi].hp.index_refs[k], &exists);
			if (t >= 0)
				index_page[t] = true;
		}
	for (int fi = 0; fi < s->nfiles; fi++) {
		site_file *f = &s->files[fi];
		if (f->page < 0)
			continue;
		page *p = &c->pages[f->page];
		int rule = -1;
		for (int k = 0; k < s->cfg.ntypes && rule < 0; k++)
			if (site_glob_match(s->cfg.types[k].glob, f->rel))
				rule = k;
		/* a long list of links and little else: a book index, a list of every name */
		bool listing = f->hp.nlinks >= LISTING_LINKS && f->hp.link_text * 2 >= f->hp.text_len;
		if (rule >= 0)
			p->type = s->cfg.types[rule].type;
		else if (is_root(f) || (index_page && index_page[fi]) || (listing && p->type != ATLAS_TYPE_GUIDE))
			p->type = ATLAS_TYPE_PAGE;
		if (listing && p->type != ATLAS_TYPE_GUIDE) {
			for (int k = 0; k < p->ndefs; k++)
				free(p->defs[k]);
			free(p->defs);
			p->defs = NULL;
			p->ndefs = 0;
		}
	}
	free(index_page);
}

/**************************************************************************************************
** The whole site.
*/

/* The site's address when neither the configuration nor a sitemap gives it: the part of the
 * canonical links before each page's own path, when most of them agree. */
static char *url_from_canonicals(const site *s)
{
	strmap counts = STRMAP_INIT;
	int with = 0;
	for (int fi = 0; fi < s->nfiles; fi++) {
		const site_file *f = &s->files[fi];
		const char *cn = f->ok ? f->hp.canonical : NULL;
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

int site_load(corpus *c, const char *dir, const char *config_path, bool strict, diag_list *d)
{
	memset(c, 0, sizeof(*c));
	site s;
	memset(&s, 0, sizeof(s));
	s.c = c;
	s.d = d;
	s.strict = strict;
	struct stat sb;
	char real[PATH_MAX];
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || !realpath(dir, real)) {
		diag_add(d, dir, 0, DIAG_ERROR, "site directory not found or not a directory");
		return -1;
	}
	s.dir = strdup(dir);
	size_t dl = strlen(s.dir);
	while (dl > 1 && s.dir[dl - 1] == '/')
		s.dir[--dl] = '\0';
	s.real_dir = strdup(real);
	c->dir = strdup(s.dir);
	int rc = 0;
	if (config_load(&s, config_path)) {
		rc = -1;
		goto out;
	}
	s.opts.content = s.cfg.content;
	s.opts.ignore = s.cfg.ignore;
	walk(&s, "", 0);
	if (s.nfiles > 1)
		qsort(s.files, (size_t)s.nfiles, sizeof(*s.files), cmp_rel);
	for (int i = 0; i < s.nfiles; i++)
		strmap_put(&s.by_rel, s.files[i].rel, strlen(s.files[i].rel), i, NULL);
	read_all(&s);
	/* problems of reading, in file order */
	for (int i = 0; i < s.nfiles; i++) {
		site_file *f = &s.files[i];
		c->digest = fnv1a(c->digest ? c->digest : 1469598103934665603ULL, &f->digest, sizeof(f->digest));
		c->bytes += f->bytes;
		if (f->read_errno)
			diag_add(d, f->file, 0, DIAG_ERROR, "cannot read: %s", strerror(f->read_errno));
		else if (f->decode_rc == -1)
			diag_add(d, f->file, 1, DIAG_ERROR, "cannot decode: unknown charset \"%s\"", f->charset);
		else if (f->decode_rc)
			diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
		else if (f->replaced)
			diag_add(d, f->file, 1, warn_sev(&s), "%ld byte%s not valid %s, replaced", f->replaced,
				 f->replaced == 1 ? "" : "s", f->charset);
	}
	/* the site's address */
	if (s.cfg.site_url)
		c->site_url = strdup(s.cfg.site_url);
	s.base = strdup("");
	read_sitemap(&s);
	if (!c->site_url)
		c->site_url = url_from_canonicals(&s);
	if (!c->site_url)
		c->site_url = strdup("");
	{
		const char *h = strstr(c->site_url, "://");
		const char *p = h ? strchr(h + 3, '/') : NULL;
		free(s.base);
		s.base = strdup(p ? p : "");
	}
	find_title_affix(&s);
	int gathered = 0; /* pages whose texts are in blocks */
	/* pages, in file order */
	for (int fi = 0; fi < s.nfiles; fi++) {
		site_file *f = &s.files[fi];
		if (!f->ok || f->hp.skip)
			continue;
		if (!f->path) {
			if (c->have_sitemap)
				diag_add(d, f->file, 1, warn_sev(&s), "page /%s is not in sitemap.xml", f->rel);
			size_t n = strlen(f->rel) + 2;
			if ((f->path = malloc(n)))
				snprintf(f->path, n, "/%s", f->rel);
		}
		if (!f->path)
			continue;
		int added = 0;
		int *idx = strmap_put(&c->page_index, f->path, strlen(f->path), c->npages, &added);
		if (!idx)
			continue;
		if (!added) {
			diag_add(d, f->file, 1, warn_sev(&s), "duplicate path %s (also %s)", f->path,
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
		if (make_page(&s, fi, p)) {
			diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
			page_free(p);
			continue;
		}
		if (!p->words)
			diag_add(d, f->file, f->hp.body_line, warn_sev(&s), "the page's content is empty");
		f->page = c->npages++;
		if (c->npages - gathered == SITE_TEXT_BATCH)
			gathered = gather_batch(c, gathered);
	}
	gather_batch(c, gathered);
	/* the parsed pages' texts, freed page by page, lie between what is kept: given back */
	malloc_trim(0);
	resolve_links(&s);
	find_parents(&s);
	make_topics(&s);
	make_guides(&s);
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
