/* read_pages.c - reading a folder of page files on every core: batches read ahead, parsed on all
 * threads, registered in name order so that nothing depends on the threads. */
#include "corpus_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files read and parsed at once by the reading threads, then registered in order by the caller. */
#define PARSE_BATCH 256
#define PARSE_THREADS_MAX 8

/**************************************************************************************************
** Reading pages on every core.
*/

/* One page file of a batch: read and parsed on any thread, registered on the caller's. */
typedef struct parsed_file {
	char *name;         /* directory entry, e.g. "raft.md"; owned */
	char *file;         /* dir/sub/name, as reported in diagnostics; owned */
	int fd;             /* the file, opened ahead (see prefetch_files), or -1 */
	bool read;          /* the file could be read */
	unsigned long long digest; /* of its name, then its bytes */
	size_t len;         /* bytes of the name and the file */
	int read_errno;     /* errno of a failed read */
	bool ok;            /* page_parse succeeded: pg holds the page */
	page pg;
	diag_list d;        /* this file's problems, moved into the corpus's list in file order */
} parsed_file;

typedef struct parse_batch {
	parsed_file *files;
	int n;
	enum atlas_page_type type;
	pthread_mutex_t lock;
	int next;           /* the next file to take, under lock */
} parse_batch;

/* Reads and parses the files of the batch not yet taken, until none is left. Never fails: every
 * problem stays in its file's slot. */
static void *parse_files(void *arg)
{
	parse_batch *b = arg;
	for (;;) {
		pthread_mutex_lock(&b->lock);
		int i = b->next++;
		pthread_mutex_unlock(&b->lock);
		if (i >= b->n)
			return NULL;
		parsed_file *f = &b->files[i];
		int fd = f->fd;
		f->fd = -1;
		if (!f->file) {
			if (fd >= 0)
				close(fd);
			f->read_errno = ENOMEM;
			continue;
		}
		char *data;
		size_t len;
		if (corpus_read_file(f->file, fd, &data, &len)) {
			f->read_errno = errno ? errno : EIO;
			continue;
		}
		f->read = true;
		f->digest = corpus_fnv1a(corpus_fnv1a(CORPUS_FNV_OFFSET, f->name, strlen(f->name)), data, len);
		f->len = strlen(f->name) + len;
		f->ok = page_parse(&f->pg, f->file, data, len, b->type, &f->d) == 0;
		free(data);
	}
}

/* Registers the parsed file f as the corpus's next page (its digest, its problems, the page),
 * and frees what f held. */
static void register_file(corpus *c, parsed_file *f, enum atlas_page_type type, diag_list *d)
{
	if (!f->read) {
		diag_add(d, f->file ? f->file : f->name, 0, DIAG_ERROR, "cannot read file: %s",
			 strerror(f->read_errno));
		goto out;
	}
	corpus_digest_page_file(c, f->digest, f->len);
	diag_list_move(d, &f->d);
	if (!f->ok)
		goto out;
	page *p = corpus_add_page(c);
	if (!p) {
		diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
		page_free(&f->pg);
		goto out;
	}
	*p = f->pg;
	memset(&f->pg, 0, sizeof(f->pg));
	if (type != ATLAS_TYPE_PAGE) {
		size_t sl = strlen(f->name) - 3;
		p->path = malloc(sl + 2);
		if (p->path) {
			p->path[0] = '/';
			memcpy(p->path + 1, f->name, sl);
			p->path[sl + 1] = '\0';
		}
	}
	if (p->path)
		corpus_commit_page(c, d);
	else
		page_free(p);
out:
	diag_list_free(&f->d);
	free(f->name);
	free(f->file);
	memset(f, 0, sizeof(*f));
}

/* Opens the files dir/names[0..n) into fds[0..n) (-1 where one cannot be opened: it is then
 * opened again, and its error reported, when read) and asks the kernel to start reading them:
 * a corpus read cold then comes in while the batch before is parsed, instead of a file at a
 * time as each is read. */
static void prefetch_files(int *fds, const char *dir, char **names, int n)
{
	char path[8192];
	for (int i = 0; i < n; i++) {
		fds[i] = -1;
		if (!names[i] || snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path))
			continue;
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] >= 0)
			posix_fadvise(fds[i], 0, 0, POSIX_FADV_WILLNEED);
	}
}

/* How many threads read and parse pages: one per core, at most PARSE_THREADS_MAX. */
static int parse_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > PARSE_THREADS_MAX ? PARSE_THREADS_MAX : (int)n;
}

/* Reads every *.md file of dir/sub as a page of the given type, in name order: the files of each
 * batch are read and parsed on all cores, then registered one by one in that order, so that the
 * pages, their problems and the corpus digest do not depend on the threads. */
void corpus_load_pages(corpus *c, const char *sub, enum atlas_page_type type, diag_list *d)
{
	char dirpath[4096];
	snprintf(dirpath, sizeof(dirpath), "%s/%s", c->dir, sub);
	DIR *dir = opendir(dirpath);
	if (!dir) {
		if (errno != ENOENT || type != ATLAS_TYPE_PAGE)
			diag_add(d, dirpath, 0, DIAG_ERROR, "cannot open directory: %s", strerror(errno));
		return;
	}
	char **names = NULL;
	int n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 3, ".md") != 0 || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			char **nn = realloc(names, (size_t)cap * sizeof(char *));
			if (!nn)
				break;
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)))
			n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(names, (size_t)n, sizeof(char *), cmp_str);
	parse_batch b = { .files = calloc(PARSE_BATCH, sizeof(parsed_file)), .type = type };
	if (!b.files) {
		diag_add(d, dirpath, 0, DIAG_ERROR, "out of memory");
		goto out_names;
	}
	pthread_mutex_init(&b.lock, NULL);
	int nthreads = parse_threads();
	int ahead[PARSE_BATCH]; /* the batch's files, opened while the one before was parsed */
	prefetch_files(ahead, dirpath, names, n < PARSE_BATCH ? n : PARSE_BATCH);
	for (int at = 0; at < n; at += b.n) {
		b.n = n - at < PARSE_BATCH ? n - at : PARSE_BATCH;
		b.next = 0;
		for (int i = 0; i < b.n; i++) {
			parsed_file *f = &b.files[i];
			f->name = names[at + i];
			names[at + i] = NULL;
			f->fd = ahead[i];
			size_t len = strlen(dirpath) + strlen(f->name) + 2;
			if ((f->file = malloc(len)))
				snprintf(f->file, len, "%s/%s", dirpath, f->name);
		}
		int next = at + b.n, nnext = n - next < PARSE_BATCH ? n - next : PARSE_BATCH;
		prefetch_files(ahead, dirpath, names + next, nnext);
		pthread_t helpers[PARSE_THREADS_MAX];
		int started = 0;
		for (int t = 1; t < nthreads && t < b.n; t++)
			if (pthread_create(&helpers[started], NULL, parse_files, &b) == 0)
				started++;
		parse_files(&b);
		for (int t = 0; t < started; t++)
			pthread_join(helpers[t], NULL);
		page *parsed[PARSE_BATCH];
		int np = 0;
		for (int i = 0; i < b.n; i++)
			if (b.files[i].ok)
				parsed[np++] = &b.files[i].pg;
		corpus_gather_texts(parsed, np);
		for (int i = 0; i < b.n; i++)
			register_file(c, &b.files[i], type, d);
	}
	pthread_mutex_destroy(&b.lock);
	free(b.files);
out_names:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

