/* keep.c - page sources in the index, and --keep-going: invalid page files built at their last good
 * version (from the index being replaced) in a shadow copy of the source directory, or left out. */
#include "keep.h"
#include "error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "build.h"
#include "compress.h"
#include "schema.h"
#include "site.h"

#define KEEP_ROUNDS 6              /* loads at most: the first and five with files set apart */
#define SOURCE_MAX (64 << 20)      /* largest page source kept, bytes */

/* Returns whether name is a page file's: Markdown of the corpus or HTML of a site. */
static bool page_file_name(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot && (strcmp(dot, ".md") == 0 || strcmp(dot, ".html") == 0 || strcmp(dot, ".htm") == 0);
}

/* Returns file's name under dir (a pointer into file), or NULL when it is not under dir. */
static const char *rel_of(const char *file, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (strncmp(file, dir, n) != 0 || file[n] != '/')
		return NULL;
	while (file[n] == '/')
		n++;
	return file + n;
}

/* Reads the whole file path into a malloc'd buffer (*len bytes). Returns it, or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, n = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			char *nb = cap <= SOURCE_MAX ? realloc(buf, cap) : NULL;
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (k == 0)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* Returns bytes [at, at + len) of the block src[0..n), compressed against the dictionary
 * dict[0..dn) (common/compress.h), as a malloc'd copy, or NULL when out of memory or the block is
 * malformed or too short. */
static char *unpack_source(const void *dict, size_t dn, const void *src, size_t n, long long at, long long len)
{
	atlas_decompressor *z = NULL;
	atlas_error err = { 0, "" };
	strbuf out = STRBUF_INIT;
	char *r = NULL;
	if (at >= 0 && len >= 0 && len <= SOURCE_MAX && atlas_decompressor_new(&z, dict, dn, &err) == 0 &&
	    atlas_decompress(z, &out, src, n, &err) == 0 && (size_t)(at + len) <= out.len &&
	    (r = malloc(len ? (size_t)len : 1)))
		memcpy(r, out.buf + at, (size_t)len);
	strbuf_free(&out);
	atlas_decompressor_free(z);
	return r;
}

/* Returns rel's file from an index of an earlier build, which holds each file as one zstd frame
 * (page_sources(file, data)), as a malloc'd copy (*len bytes), or NULL. */
static char *earlier_source(sqlite3 *db, const char *rel, size_t *len)
{
	sqlite3_stmt *st = NULL;
	char *out = NULL;
	if (sqlite3_prepare_v2(db, "SELECT data FROM page_sources WHERE file = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, rel, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			const void *z = sqlite3_column_blob(st, 0);
			size_t zn = (size_t)sqlite3_column_bytes(st, 0);
			unsigned long long n = z ? ZSTD_getFrameContentSize(z, zn) : ZSTD_CONTENTSIZE_ERROR;
			if (n != ZSTD_CONTENTSIZE_ERROR && n != ZSTD_CONTENTSIZE_UNKNOWN && n <= SOURCE_MAX) {
				out = malloc(n ? (size_t)n : 1);
				if (out && ZSTD_isError(ZSTD_decompress(out, (size_t)n, z, zn))) {
					free(out);
					out = NULL;
				}
				*len = (size_t)n;
			}
		}
	}
	sqlite3_finalize(st);
	return out;
}

/* Returns the previous version of rel from the index at out_path (a malloc'd copy, *len bytes),
 * or NULL when the index, its tables or the file is not there. */
static char *previous_source(const char *out_path, const char *rel, size_t *len)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL, *dict = NULL;
	char *out = NULL;
	if (sqlite3_open_v2(out_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return NULL;
	}
	if (sqlite3_prepare_v2(db, "SELECT b.data, s.at, s.len FROM page_sources s JOIN source_blocks b"
				   " ON b.id = s.block WHERE s.file = ?", -1, &st, NULL) != SQLITE_OK) {
		out = earlier_source(db, rel, len);
	} else {
		sqlite3_bind_text(st, 1, rel, -1, SQLITE_STATIC);
		bool have_dict = sqlite3_prepare_v2(db, "SELECT dict FROM dictionaries WHERE name = 'page_source'",
						    -1, &dict, NULL) == SQLITE_OK && sqlite3_step(dict) == SQLITE_ROW;
		if (sqlite3_step(st) == SQLITE_ROW) {
			long long at = sqlite3_column_int64(st, 1), n = sqlite3_column_int64(st, 2);
			out = unpack_source(have_dict ? sqlite3_column_blob(dict, 0) : NULL,
					    have_dict ? (size_t)sqlite3_column_bytes(dict, 0) : 0,
					    sqlite3_column_blob(st, 0), (size_t)sqlite3_column_bytes(st, 0), at, n);
			*len = (size_t)n;
		}
	}
	sqlite3_finalize(dict);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return out;
}

/* Returns the entry of rel in k, or NULL. */
static kept_file *find_file(keep_state *k, const char *rel)
{
	for (int i = 0; i < k->n; i++)
		if (strcmp(k->files[i].rel, rel) == 0)
			return &k->files[i];
	return NULL;
}

/* Writes data[0..n) to path. Returns 0, or ATLAS_EIO (errno says why) when the file cannot be
 * made or written. */
static int write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return ATLAS_EIO;
	int rc = fwrite(data, 1, n, f) == n ? 0 : ATLAS_EIO;
	return fclose(f) || rc ? ATLAS_EIO : 0;
}

/* Copies the tree src/rel into dst/rel: hard links where the file system allows, else copies;
 * a set-apart file as its previous version (out_path's) or not at all. Returns 0, or ATLAS_EIO
 * (errno says why) when a folder, link or file cannot be read or made; the caller reports it. */
static int mirror(keep_state *k, const char *out_path, const char *rel, int depth)
{
	char from[PATH_MAX], to[PATH_MAX];
	snprintf(from, sizeof(from), "%s%s%s", k->src, *rel ? "/" : "", rel);
	snprintf(to, sizeof(to), "%s%s%s", k->shadow, *rel ? "/" : "", rel);
	if (*rel && mkdir(to, 0755) && errno != EEXIST)
		return ATLAS_EIO;
	DIR *dir = opendir(from);
	if (!dir)
		return ATLAS_EIO;
	int rc = 0;
	struct dirent *de;
	while (!rc && (de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char sub[PATH_MAX], f[PATH_MAX * 2], t[PATH_MAX * 2];
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >= (int)sizeof(sub))
			continue;
		snprintf(f, sizeof(f), "%s/%s", k->src, sub);
		snprintf(t, sizeof(t), "%s/%s", k->shadow, sub);
		struct stat sb;
		if (lstat(f, &sb))
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (depth < 64)
				rc = mirror(k, out_path, sub, depth + 1);
			continue;
		}
		kept_file *kf = find_file(k, sub);
		if (kf && !kf->restored) {
			size_t n = 0;
			char *old = kf->kept ? previous_source(out_path, sub, &n) : NULL;
			kf->kept = old != NULL;
			if (old)
				rc = write_file(t, old, n);
			free(old);
			continue;
		}
		if (S_ISLNK(sb.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlink(f, target, sizeof(target) - 1);
			if (n > 0) {
				target[n] = '\0';
				rc = symlink(target, t) ? ATLAS_EIO : 0;
			}
		} else if (S_ISREG(sb.st_mode) && link(f, t)) {
			size_t n = 0;
			char *data = slurp(f, &n);
			rc = data ? write_file(t, data, n) : ATLAS_EIO;
			free(data);
		}
	}
	closedir(dir);
	return rc;
}

/* Removes the tree at path (files, links and folders). */
static void remove_tree(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	while (dir && (de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char sub[PATH_MAX * 2];
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		struct stat sb;
		if (lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode))
			remove_tree(sub);
		else
			unlink(sub);
	}
	if (dir)
		closedir(dir);
	rmdir(path);
}

/* Records each page file with an error in d (named under dir) in k, a new one to be kept at its
 * previous version, one already set apart to be left out. Returns the files added or changed
 * (0 or more), ATLAS_EINVAL when an error is in a file that is not a page file (which cannot be
 * set apart), or ATLAS_ENOMEM when out of memory; the diagnostics in d say what is wrong. */
static int set_apart(keep_state *k, const char *dir, const diag_list *d)
{
	int changed = 0;
	for (int i = 0; i < d->n; i++) {
		const diag *g = &d->items[i];
		if (g->severity != DIAG_ERROR)
			continue;
		const char *rel = rel_of(g->file, dir);
		if (!rel || !page_file_name(rel))
			return ATLAS_EINVAL;
		kept_file *kf = find_file(k, rel);
		if (kf) {
			if (kf->kept) {
				kf->kept = false;
				changed++;
			}
			continue;
		}
		if (k->n == k->cap) {
			int cap = k->cap ? k->cap * 2 : 16;
			kept_file *nf = realloc(k->files, (size_t)cap * sizeof(*nf));
			if (!nf)
				return ATLAS_ENOMEM;
			k->files = nf;
			k->cap = cap;
		}
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s:%d: %s", g->file, g->line, g->msg);
		k->files[k->n++] = (kept_file){ strdup(rel), strdup(msg), true, false };
		changed++;
	}
	return changed;
}

/* Loads dir as src says into *c. Returns corpus_load's or site_load's result. */
static int load(corpus *c, const keep_source *src, const char *dir, diag_list *d)
{
	return src->site ? site_load(c, dir, src->config, src->strict, d)
			 : corpus_load(c, dir, src->strict, d);
}

/* Makes the shadow tree afresh and loads it into *c. Returns the load's errors (0: valid, a count,
 * not an error code), or ATLAS_EIO when the tree cannot be made (reported in d). */
static int shadow_load(corpus *c, const keep_source *src, const char *out_path, keep_state *k,
		       diag_list *d, diag_list *got)
{
	remove_tree(k->shadow);
	if (mkdir(k->shadow, 0755) || mirror(k, out_path, "", 0)) {
		diag_add(d, k->shadow, 0, DIAG_ERROR, "cannot copy %s for --keep-going: %s", k->src,
			 strerror(errno));
		return ATLAS_EIO;
	}
	corpus_free(c);
	load(c, src, k->shadow, got);
	return got->errors;
}

/* Gives back to the build each set-apart file that is valid as it is now once the others are set
 * apart (its errors were theirs: a step naming a page that failed), then loads the final tree.
 * Returns 0, ATLAS_EIO when the tree cannot be made (reported in d), or ATLAS_EINVAL when the final
 * tree has errors after all (they are not added to d). */
static int restore_innocent(corpus *c, const keep_source *src, const char *out_path, keep_state *k,
			    diag_list *d)
{
	for (int i = 0; i < k->n; i++) {
		char path[PATH_MAX * 2];
		snprintf(path, sizeof(path), "%s/%s", k->src, k->files[i].rel);
		if (access(path, R_OK))
			continue;
		k->files[i].restored = true;
		diag_list got = { 0 };
		int rc = shadow_load(c, src, out_path, k, d, &got);
		diag_list_free(&got);
		if (rc < 0)
			return rc;
		k->files[i].restored = rc == 0;
	}
	int n = 0;
	for (int i = 0; i < k->n; i++) {
		if (k->files[i].restored) {
			free(k->files[i].rel);
			free(k->files[i].error);
		} else {
			k->files[n++] = k->files[i];
		}
	}
	k->n = n;
	diag_list got = { 0 };
	int rc = shadow_load(c, src, out_path, k, d, &got);
	diag_list_free(&got);
	return rc < 0 ? rc : rc ? ATLAS_EINVAL : 0;
}

/* Loads, setting invalid page files apart with keep_going. Returns 0 when valid, else an ATLAS_E*
 * code with d saying why (see keep.h). */
int keep_load(corpus *c, const keep_source *src, bool keep_going, const char *out_path,
	      keep_state *k, diag_list *d)
{
	memset(k, 0, sizeof(*k));
	k->src = strdup(src->dir);
	int rc = load(c, src, src->dir, d);
	if (rc || !d->errors)
		return d->errors ? (rc ? rc : ATLAS_EINVAL) : 0;
	if (!keep_going)
		return ATLAS_EINVAL;
	if (!k->src)
		return ATLAS_ENOMEM;
	if ((rc = set_apart(k, src->dir, d)) < 0)
		return rc;
	char tmpl[PATH_MAX];
	const char *slash = strrchr(out_path, '/');
	snprintf(tmpl, sizeof(tmpl), "%.*s.atlas-keep.XXXXXX", slash ? (int)(slash - out_path + 1) : 0, out_path);
	if (!mkdtemp(tmpl)) {
		diag_add(d, tmpl, 0, DIAG_ERROR, "cannot make a folder for --keep-going: %s", strerror(errno));
		return ATLAS_EIO;
	}
	k->shadow = strdup(tmpl);
	for (int round = 1; round < KEEP_ROUNDS; round++) {
		diag_list again = { 0 };
		if ((rc = shadow_load(c, src, out_path, k, d, &again)) < 0) {
			diag_list_free(&again);
			return rc;
		}
		int changed = again.errors ? set_apart(k, k->shadow, &again) : 0;
		if (changed < 0) {
			for (int i = 0; i < again.n; i++)
				diag_add(d, again.items[i].file, again.items[i].line, again.items[i].severity,
					 "%s (with the invalid pages set apart)", again.items[i].msg);
		}
		bool done = !again.errors;
		diag_list_free(&again);
		if (done)
			return restore_innocent(c, src, out_path, k, d);
		if (changed <= 0)
			return changed < 0 ? changed : ATLAS_EINVAL;
	}
	diag_add(d, k->src, 0, DIAG_ERROR, "--keep-going: still invalid after setting pages apart");
	return ATLAS_EINVAL;
}

/* The page files kept in the index: those of c's pages under dir with a page file's name. Returns
 * the name of page i under dir, or NULL when it is not kept. */
static const char *kept_source(const corpus *c, int i, const char *dir)
{
	const char *rel = c->pages[i].file ? rel_of(c->pages[i].file, dir) : NULL;
	return rel && page_file_name(rel) ? rel : NULL;
}

#define SOURCE_SAMPLE_BYTES (2 << 20) /* of page files the page sources' dictionary is trained on */

/* Makes *z, a compressor whose dictionary is trained on every stride-th kept page file, for about
 * SOURCE_SAMPLE_BYTES in all, and stores the dictionary (empty when none) as page_source. Returns
 * 0 or an ATLAS_E* code with err set. */
static int train_sources(sqlite3 *db, const corpus *c, const char *dir, atlas_compressor **z,
			 atlas_error *err)
{
	size_t stride = c->bytes > SOURCE_SAMPLE_BYTES ? c->bytes / SOURCE_SAMPLE_BYTES + 1 : 1;
	size_t cap = (size_t)c->npages / stride + 1, n = 0;
	size_t *sizes = malloc(cap * sizeof(*sizes));
	strbuf samples = STRBUF_INIT;
	int rc = sizes ? 0 : atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	for (int i = 0; !rc && i < c->npages && n < cap; i += (int)stride) {
		size_t len = 0;
		char *data = kept_source(c, i, dir) ? slurp(c->pages[i].file, &len) : NULL;
		if (data && !strbuf_append(&samples, data, len))
			sizes[n++] = len;
		free(data);
	}
	if (!rc && samples.oom)
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	if (!rc)
		rc = atlas_compressor_new(z, samples.buf, sizes, n, err);
	sqlite3_stmt *st = NULL;
	size_t dn = 0;
	const void *dict = rc ? NULL : atlas_compressor_dict(*z, &dn);
	if (!rc && sqlite3_prepare_v2(db, "INSERT INTO dictionaries VALUES('page_source', ?)", -1, &st, NULL)) {
		rc = atlas_error_set(err, ATLAS_ESQL, "page sources: %s", sqlite3_errmsg(db));
	} else if (!rc) {
		sqlite3_bind_blob(st, 1, dict ? dict : "", (int)dn, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = atlas_error_set(err, ATLAS_ESQL, "page sources: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	strbuf_free(&samples);
	free(sizes);
	return rc;
}

#define SOURCE_BLOCK (256 << 10) /* bytes of files a source block holds before it is closed */

/* Compresses the files gathered in raw as source block id and empties raw. Returns 0 or an ATLAS_E*
 * code with err set. */
static int put_block(sqlite3 *db, sqlite3_stmt *ins, atlas_compressor *z, int id, strbuf *raw,
		     strbuf *packed, atlas_error *err)
{
	if (!raw->len)
		return 0;
	int rc = atlas_compress(z, packed, raw->buf, raw->len, err);
	if (!rc) {
		sqlite3_bind_int(ins, 1, id);
		sqlite3_bind_blob(ins, 2, packed->buf ? packed->buf : "", (int)packed->len, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = atlas_error_set(err, ATLAS_ESQL, "page sources: %s", sqlite3_errmsg(db));
		sqlite3_reset(ins);
	}
	strbuf_reset(raw);
	return rc;
}

/* The extra writer of index_build: the page sources (in blocks compressed against a dictionary
 * trained on them), kept_pages and meta kept_pages. */
static int write_sources(sqlite3 *db, const corpus *c, void *ctx, atlas_error *err)
{
	keep_state *k = ctx;
	sqlite3_stmt *ins = NULL, *blk = NULL, *kept = NULL, *meta = NULL;
	atlas_compressor *z = NULL;
	strbuf raw = STRBUF_INIT, packed = STRBUF_INIT;
	const char *dir = k->shadow ? k->shadow : c->dir;
	int rc = train_sources(db, c, dir, &z, err);
	if (!rc && (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO page_sources VALUES(?, ?, ?, ?)", -1, &ins, NULL) ||
		    sqlite3_prepare_v2(db, "INSERT INTO source_blocks VALUES(?, ?)", -1, &blk, NULL) ||
		    sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO kept_pages VALUES(?, ?, ?)", -1, &kept, NULL) ||
		    sqlite3_prepare_v2(db, "INSERT INTO meta VALUES(?, ?)", -1, &meta, NULL)))
		rc = atlas_error_set(err, ATLAS_ESQL, "page sources: %s", sqlite3_errmsg(db));
	int block = 1;
	for (int i = 0; !rc && i < c->npages; i++) {
		const char *rel = kept_source(c, i, dir);
		if (!rel)
			continue;
		size_t n = 0;
		char *data = slurp(c->pages[i].file, &n);
		if (!data) {
			rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot read for the index", c->pages[i].file);
			break;
		}
		sqlite3_bind_text(ins, 1, rel, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(ins, 2, block);
		sqlite3_bind_int64(ins, 3, (sqlite3_int64)raw.len);
		sqlite3_bind_int64(ins, 4, (sqlite3_int64)n);
		if (strbuf_append(&raw, data, n))
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		else if (sqlite3_step(ins) != SQLITE_DONE)
			rc = atlas_error_set(err, ATLAS_ESQL, "page sources: %s", sqlite3_errmsg(db));
		sqlite3_reset(ins);
		free(data);
		if (!rc && raw.len >= SOURCE_BLOCK)
			rc = put_block(db, blk, z, block++, &raw, &packed, err);
	}
	if (!rc)
		rc = put_block(db, blk, z, block, &raw, &packed, err);
	for (int i = 0; !rc && i < k->n; i++) {
		sqlite3_bind_text(kept, 1, k->files[i].rel, -1, SQLITE_STATIC);
		sqlite3_bind_int(kept, 2, k->files[i].kept);
		sqlite3_bind_text(kept, 3, k->files[i].error, -1, SQLITE_STATIC);
		if (sqlite3_step(kept) != SQLITE_DONE)
			rc = atlas_error_set(err, ATLAS_ESQL, "kept pages: %s", sqlite3_errmsg(db));
		sqlite3_reset(kept);
	}
	if (!rc) {
		char v[16];
		snprintf(v, sizeof(v), "%d", k->n);
		sqlite3_bind_text(meta, 1, ATLAS_META_KEPT_PAGES, -1, SQLITE_STATIC);
		sqlite3_bind_text(meta, 2, v, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(meta) != SQLITE_DONE)
			rc = atlas_error_set(err, ATLAS_ESQL, "kept pages: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(blk);
	sqlite3_finalize(kept);
	sqlite3_finalize(meta);
	atlas_compressor_free(z);
	strbuf_free(&raw);
	strbuf_free(&packed);
	return rc;
}

/* Installs write_sources for the next index_build. */
void keep_install(keep_state *k)
{
	index_build_set_extra(write_sources, k);
}

/* Removes the shadow tree and frees k. */
void keep_free(keep_state *k)
{
	if (k->shadow)
		remove_tree(k->shadow);
	for (int i = 0; i < k->n; i++) {
		free(k->files[i].rel);
		free(k->files[i].error);
	}
	free(k->files);
	free(k->shadow);
	free(k->src);
	memset(k, 0, sizeof(*k));
}
