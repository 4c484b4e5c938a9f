/* build.c - the corpus into atlas.db: documents, sections, FTS5 tables, taxonomy, guide steps,
 * links, synonyms, vocabulary, read-next candidates and meta, built in a temporary file and
 * renamed into place only after it passed its checks. */
#include "build.h"
#include "build_extra.h"
#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <malloc.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "analyzer.h"
#include "anchor.h"
#include "body_chunks.h"
#include "compress.h"
#include "fields_index.h"
#include "postings_index.h"
#include "schema.h"
#include "signals.h"
#include "spans.h"
#include "strmap.h"
#include "token_counts.h"
#include "grow.h"

/**************************************************************************************************
** Temporary files.
*/

static void split_path(const char *path, char *dir, size_t dcap, char *base, size_t bcap)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(dir, dcap, "%s", dirname(tmp));
	snprintf(tmp, sizeof(tmp), "%s", path);
	snprintf(base, bcap, "%s", basename(tmp));
}

int index_remove_stale_temps(const char *out_path)
{
	char dir[4096], base[1024], prefix[1100];
	split_path(out_path, dir, sizeof(dir), base, sizeof(base));
	snprintf(prefix, sizeof(prefix), ".%s.tmp.", base);
	DIR *dh = opendir(dir);
	if (!dh)
		return 0;
	int removed = 0;
	struct dirent *de;
	while ((de = readdir(dh))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		long pid = strtol(de->d_name + strlen(prefix), NULL, 10);
		if (pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) == 0)
			continue; /* a build still running */
		char full[8192];
		snprintf(full, sizeof(full), "%s/%s", dir, de->d_name);
		if (unlink(full) == 0)
			removed++;
	}
	closedir(dh);
	return removed;
}

/* Flushes the file (or, with directory, the folder) at path to the disk. Returns 0, or ATLAS_EIO
 * with errno saying why; the caller writes the message. */
static int fsync_path(const char *path, int directory)
{
	int fd = open(path, directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
	if (fd < 0)
		return ATLAS_EIO;
	int rc = fsync(fd) ? ATLAS_EIO : 0;
	close(fd);
	return rc;
}

/**************************************************************************************************
** Writing.
*/

typedef struct writer {
	sqlite3 *db;
	const char *file; /* for messages */
	atlas_error *err;
	int *order;       /* doc id - 1 -> page index */
	int *id_of;       /* page index -> doc id */
	signals *signals; /* the read-next computation running beside the indexing */
	corpus *bodies;   /* the corpus whose section bodies are released as they are indexed */
	long long fts_hash_bytes; /* FTS5's in-memory hash of pending terms, flushed to a segment when full */
	atlas_compressor *body_z;  /* the sections' bodies, against the corpus's dictionary */
	build_extra *extra;        /* the page sources, written beside the postings */
} writer;

static int sql_fail(writer *w, const char *what)
{
	return atlas_sql_error(w->err, w->db, w->file, what, NULL);
}

static int exec(writer *w, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		atlas_sql_error(w->err, w->db, w->file, sql, msg ? msg : "error");
		sqlite3_free(msg);
		return w->err ? w->err->code : ATLAS_ESQL;
	}
	return 0;
}

static int prepare(writer *w, sqlite3_stmt **st, const char *sql)
{
	if (sqlite3_prepare_v2(w->db, sql, -1, st, NULL) != SQLITE_OK)
		return sql_fail(w, "prepare");
	return 0;
}

static int step_reset(writer *w, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return sql_fail(w, what);
	return 0;
}

static const corpus *g_sort_corpus;
static int cmp_page_path(const void *a, const void *b)
{
	return strcmp(g_sort_corpus->pages[*(const int *)a].path, g_sort_corpus->pages[*(const int *)b].path);
}

static void join_strings(strbuf *sb, char **s, int n, const char *sep)
{
	for (int i = 0; i < n; i++) {
		if (i)
			strbuf_puts(sb, sep);
		strbuf_puts(sb, s[i]);
	}
}

static void topics_json(strbuf *sb, const page *p)
{
	strbuf_putc(sb, '[');
	for (int i = 0; i < p->ntopics; i++) {
		strbuf_puts(sb, i ? ",\"" : "\"");
		for (const char *q = p->topics[i]; *q; q++) {
			if (*q == '"' || *q == '\\')
				strbuf_putc(sb, '\\');
			strbuf_putc(sb, *q);
		}
		strbuf_putc(sb, '"');
	}
	strbuf_putc(sb, ']');
}

/**************************************************************************************************
** The text dictionary.
**
** Section bodies are stored compressed (common/compress.h) against a dictionary trained on a
** sample of this corpus's own: every stride-th section, for about DICT_SAMPLE_BYTES in all.
*/

#define DICT_SAMPLE_BYTES (2 << 20)

static int write_dictionaries(writer *w, const corpus *c, build_stats *stats)
{
	(void)stats;
	size_t total = 0, nsecs = 0;
	for (int i = 0; i < c->npages; i++) {
		for (int s = 0; s < c->pages[i].nsecs; s++)
			total += c->pages[i].secs[s].body_len;
		nsecs += (size_t)c->pages[i].nsecs;
	}
	size_t stride = total > DICT_SAMPLE_BYTES ? total / DICT_SAMPLE_BYTES + 1 : 1;
	size_t cap = nsecs / stride + 1, n = 0, k = 0;
	strbuf samples = STRBUF_INIT;
	size_t *sizes = malloc(cap * sizeof(size_t));
	int rc = 0;
	if (!sizes)
		goto fail_nomem;
	for (int i = 0; i < c->npages; i++) {
		const page *p = &c->pages[w->order[i]];
		for (int s = 0; s < p->nsecs; s++, k++) {
			if (k % stride || n == cap)
				continue;
			if (strbuf_append(&samples, p->secs[s].body, p->secs[s].body_len))
				goto fail_nomem;
			sizes[n++] = p->secs[s].body_len;
		}
	}
	rc = atlas_compressor_new(&w->body_z, samples.buf, sizes, n, w->err);
	size_t ndict;
	const void *dict = rc ? NULL : atlas_compressor_dict(w->body_z, &ndict);
	if (dict) {
		sqlite3_stmt *st = NULL;
		rc = prepare(w, &st, "INSERT INTO dictionaries VALUES('section_body', ?)");
		if (!rc) {
			sqlite3_bind_blob(st, 1, dict, (int)ndict, SQLITE_STATIC);
			rc = step_reset(w, st, "insert dictionary");
		}
		sqlite3_finalize(st);
	}
	free(sizes);
	strbuf_free(&samples);
	return rc;

fail_nomem:
	free(sizes);
	strbuf_free(&samples);
	return atlas_error_set(w->err, ATLAS_ENOMEM, "out of memory");
}

/**************************************************************************************************
** Documents, sections and the full-text indexes.
*/

/* Inserts page p's docs row (doc id, its keywords and topics joined as kw and topics_json, its
 * sections from first_section on) with doc, the prepared insert. Returns 0 or an ATLAS_E* code
 * with w->err set. */
static int insert_doc(writer *w, sqlite3_stmt *doc, int id, const page *p, const char *kw,
		      const char *topics_json, int first_section)
{
	sqlite3_bind_int(doc, 1, id);
	sqlite3_bind_text(doc, 2, p->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(doc, 3, atlas_page_type_names[p->type], -1, SQLITE_STATIC);
	sqlite3_bind_text(doc, 4, p->title, -1, SQLITE_STATIC);
	sqlite3_bind_text(doc, 5, p->description, -1, SQLITE_STATIC);
	sqlite3_bind_text(doc, 6, kw, -1, SQLITE_STATIC);
	sqlite3_bind_text(doc, 7, topics_json, -1, SQLITE_STATIC);
	sqlite3_bind_double(doc, 8, p->priority);
	sqlite3_bind_text(doc, 9, p->lastmod ? p->lastmod : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(doc, 10, p->image ? p->image : "", -1, SQLITE_STATIC);
	sqlite3_bind_int(doc, 11, p->words);
	sqlite3_bind_int(doc, 12, first_section);
	sqlite3_bind_int(doc, 13, first_section + p->nsecs - 1);
	sqlite3_bind_text(doc, 14, p->file, -1, SQLITE_STATIC);
	sqlite3_bind_int(doc, 15, p->source);
	return step_reset(w, doc, "insert document");
}

/* Writes every page of c, in doc id order: its docs row, its fts row (the tap counting the
 * sections' tokens), its sections (bodies compressed) and its doc_topics; each page's bodies are
 * released once written. Counts into stats. Returns 0 or an ATLAS_E* code with w->err set. */
static int write_docs(writer *w, const corpus *c, build_stats *stats)
{
	sqlite3_stmt *doc = NULL, *sec = NULL, *fts = NULL, *dt = NULL;
	int rc = prepare(w, &doc, "INSERT INTO docs VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	if (!rc)
		rc = prepare(w, &sec, "INSERT INTO sections VALUES(?,?,?,?,?,?,?,?,?,?)");
	atlas_analyzer *a = NULL;
	if (!rc)
		rc = atlas_analyzer_new(&a, w->db, w->err);
	if (!rc)
		rc = prepare(w, &fts, "INSERT INTO fts(rowid, title, keywords, headings, description, body, defs)"
				      " VALUES(?,?,?,?,?,?,?)");
	if (!rc)
		rc = prepare(w, &dt, "INSERT OR IGNORE INTO doc_topics VALUES(?,?)");
	row_tap tap;
	tap_init(&tap);
	section_places places = { NULL, NULL, NULL, 0 };
	body_chunks chunks = BODY_CHUNKS_INIT;
	if (!rc)
		rc = atlas_analyzer_set_tap(w->db, &tap.tap, w->err);
	int sec_id = 1;
	strbuf kw = STRBUF_INIT, heads = STRBUF_INIT, body = STRBUF_INIT, tj = STRBUF_INIT,
	       zbody = STRBUF_INIT, anchor = STRBUF_INIT, defs = STRBUF_INIT;
	for (int id = 1; !rc && id <= c->npages; id++) {
		const page *p = &c->pages[w->order[id - 1]];
		if (places_reserve(&places, p->nsecs)) {
			rc = atlas_error_set(w->err, ATLAS_ENOMEM, "out of memory");
			break;
		}
		strbuf_reset(&kw);
		strbuf_reset(&heads);
		strbuf_reset(&body);
		strbuf_reset(&tj);
		join_strings(&kw, p->keywords, p->nkeywords, "; ");
		strbuf_reset(&defs);
		join_strings(&defs, p->defs, p->ndefs, "\n");
		topics_json(&tj, p);
		join_sections(p, &heads, &body, &places);
		stats->pages[p->type]++;
		stats->sections += p->nsecs;
		rc = insert_doc(w, doc, id, p, strbuf_str(&kw), strbuf_str(&tj), sec_id);
		/* the full-text row first: its analysis counts the sections' tokens */
		if (!rc) {
			tap_row(&tap, p->title, strbuf_str(&heads), p->description, strbuf_str(&body), body.len,
				heads.len);
			sqlite3_bind_int(fts, 1, id);
			sqlite3_bind_text(fts, 2, p->title, -1, SQLITE_STATIC);
			sqlite3_bind_text(fts, 3, strbuf_str(&kw), -1, SQLITE_STATIC);
			sqlite3_bind_text(fts, 4, strbuf_str(&heads), -1, SQLITE_STATIC);
			sqlite3_bind_text(fts, 5, p->description, -1, SQLITE_STATIC);
			sqlite3_bind_text(fts, 6, strbuf_str(&body), -1, SQLITE_STATIC);
			sqlite3_bind_text(fts, 7, strbuf_str(&defs), -1, SQLITE_STATIC);
			tap.armed = true;
			rc = step_reset(w, fts, "insert into fts");
			tap.armed = false;
		}
		for (int s = 0; !rc && s < p->nsecs; s++) {
			const section *x = &p->secs[s];
			section_tokens tk;
			if ((rc = count_section_tokens(w->err, w->file, a, &tk, p, s, &tap, &places)))
				break;
			if ((rc = body_compress(&chunks, w->body_z, a, &zbody, x->body, x->body_len, tk.lead + tk.body,
						w->err)))
				break;
			/* what an engine holding the texts keeps: the bytes, and a span for each token */
			stats->section_text_bytes +=
				(long long)(strlen(x->heading) + strlen(x->anchor) + x->body_len) +
				(long long)sizeof(atlas_span) * (tk.heading + tk.lead + tk.body);
			sqlite3_bind_int(sec, 1, sec_id++);
			sqlite3_bind_int(sec, 2, id);
			sqlite3_bind_int(sec, 3, s);
			sqlite3_bind_int(sec, 4, x->level);
			sqlite3_bind_text(sec, 5, x->heading, -1, SQLITE_STATIC);
			/* an anchor the heading gives is left for the engine to make again */
			strbuf_reset(&anchor);
			if (x->level > 0)
				anchor_of(&anchor, x->heading);
			bool derived = x->level > 0 && strcmp(strbuf_str(&anchor), x->anchor) == 0;
			sqlite3_bind_text(sec, 6, derived ? "" : x->anchor, -1, SQLITE_STATIC);
			sqlite3_bind_blob(sec, 7, zbody.len ? zbody.buf : "", (int)zbody.len, SQLITE_STATIC);
			sqlite3_bind_int(sec, 8, tk.heading);
			sqlite3_bind_int(sec, 9, tk.lead);
			sqlite3_bind_int(sec, 10, tk.body);
			rc = step_reset(w, sec, "insert section");
		}
		for (int t = 0; !rc && t < p->ntopics; t++) {
			sqlite3_bind_int(dt, 1, id);
			sqlite3_bind_text(dt, 2, p->topics[t], -1, SQLITE_STATIC);
			rc = step_reset(w, dt, "insert document topic");
		}
		corpus_release_bodies(w->bodies, w->order[id - 1]);
	}
	atlas_analyzer_set_tap(w->db, NULL, NULL);
	tap_free(&tap);
	body_chunks_free(&chunks);
	free(places.heads_at);
	free(places.body_at);
	free(places.body_n);
	strbuf_free(&kw);
	strbuf_free(&heads);
	strbuf_free(&body);
	strbuf_free(&tj);
	strbuf_free(&zbody);
	strbuf_free(&anchor);
	strbuf_free(&defs);
	sqlite3_finalize(doc);
	sqlite3_finalize(sec);
	sqlite3_finalize(fts);
	sqlite3_finalize(dt);
	atlas_analyzer_free(a);
	return rc;
}

static int doc_id_of(const writer *w, const corpus *c, const char *path)
{
	int *i = strmap_get(&c->page_index, path);
	return i ? w->id_of[*i] : 0;
}

static int write_graph(writer *w, const corpus *c, build_stats *stats)
{
	sqlite3_stmt *tp = NULL, *gs = NULL, *ln = NULL, *pr = NULL;
	int rc = prepare(w, &tp, "INSERT INTO topics VALUES(?,?,?,?,?,?)");
	if (!rc)
		rc = prepare(w, &gs, "INSERT OR IGNORE INTO guide_steps VALUES(?,?,?,?)");
	if (!rc)
		rc = prepare(w, &ln, "INSERT OR IGNORE INTO links VALUES(?,?,?)");
	if (!rc)
		rc = prepare(w, &pr, "INSERT OR IGNORE INTO prerequisites VALUES(?,?)");
	char path[1100];
	for (int i = 0; !rc && i < c->ntopics; i++) {
		const topic *t = &c->topics[i];
		snprintf(path, sizeof(path), t->page ? "%s" : "/t/%s", t->page ? t->page : t->path);
		sqlite3_bind_text(tp, 1, t->path, -1, SQLITE_STATIC);
		if (t->parent)
			sqlite3_bind_text(tp, 2, t->parent, -1, SQLITE_STATIC);
		sqlite3_bind_text(tp, 3, t->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(tp, 4, t->description, -1, SQLITE_STATIC);
		sqlite3_bind_int(tp, 5, t->ord);
		sqlite3_bind_int(tp, 6, doc_id_of(w, c, path));
		rc = step_reset(w, tp, "insert topic");
	}
	for (int pi = 0; !rc && pi < c->npages; pi++) {
		const page *p = &c->pages[pi];
		int id = w->id_of[pi];
		int step = 0;
		for (int g = 0; !rc && g < p->ngsecs; g++)
			for (int k = 0; !rc && k < p->gsecs[g].nsteps; k++) {
				snprintf(path, sizeof(path), "/%s", p->gsecs[g].steps[k]);
				int dst = doc_id_of(w, c, path);
				if (!dst)
					continue;
				sqlite3_bind_int(gs, 1, id);
				sqlite3_bind_int(gs, 2, ++step);
				sqlite3_bind_text(gs, 3, p->gsecs[g].title, -1, SQLITE_STATIC);
				sqlite3_bind_int(gs, 4, dst);
				rc = step_reset(w, gs, "insert guide step");
				stats->guide_steps++;
			}
		for (int k = 0; !rc && k < p->nlinks; k++) {
			int dst = doc_id_of(w, c, p->links[k].target);
			if (!dst || dst == id)
				continue;
			sqlite3_bind_int(ln, 1, id);
			sqlite3_bind_int(ln, 2, dst);
			sqlite3_bind_text(ln, 3, p->links[k].anchor ? p->links[k].anchor : "", -1, SQLITE_STATIC);
			rc = step_reset(w, ln, "insert link");
			if (!rc && sqlite3_changes(w->db))
				stats->links++;
		}
		for (int k = 0; !rc && k < p->nprereqs; k++) {
			snprintf(path, sizeof(path), "/%s", p->prereqs[k]);
			int dst = doc_id_of(w, c, path);
			if (!dst)
				continue;
			sqlite3_bind_int(pr, 1, id);
			sqlite3_bind_int(pr, 2, dst);
			rc = step_reset(w, pr, "insert prerequisite");
		}
	}
	sqlite3_finalize(tp);
	sqlite3_finalize(gs);
	sqlite3_finalize(ln);
	sqlite3_finalize(pr);
	return rc;
}

static int write_synonyms(writer *w, const corpus *c, build_stats *stats)
{
	(void)stats;
	sqlite3_stmt *st = NULL;
	int rc = prepare(w, &st, "INSERT INTO synonyms VALUES(?,?)");
	for (int g = 0; !rc && g < c->nsyn; g++)
		for (char **t = c->syn_groups[g]; !rc && *t; t++) {
			sqlite3_bind_int(st, 1, g + 1);
			sqlite3_bind_text(st, 2, *t, -1, SQLITE_STATIC);
			rc = step_reset(w, st, "insert synonym");
		}
	sqlite3_finalize(st);
	return rc;
}

static int put_meta(writer *w, sqlite3_stmt *st, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int put_meta(writer *w, sqlite3_stmt *st, const char *key, const char *fmt, ...)
{
	char val[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, val, -1, SQLITE_TRANSIENT);
	return step_reset(w, st, "insert meta");
}

/* Writes into buf (cap bytes, 17 or more) the build id of an index of the corpus whose digest is
 * corpus_digest: 16 hex digits of FNV-1a 64 over that digest, the schema version and the indexer's
 * version, the inputs the index's answers depend on. So a rebuild of an unchanged corpus by the
 * same atlas-index has the same id (and the server the same ETags); one changed byte a new one.
 * Cannot fail. */
static void build_id_of(char *buf, size_t cap, unsigned long long corpus_digest)
{
	char in[128];
	int n = snprintf(in, sizeof(in), "corpus fnv1a64:%016llx schema %d atlas-index %s",
			 corpus_digest, ATLAS_SCHEMA_VERSION, ATLAS_VERSION);
	unsigned long long h = 1469598103934665603ULL;
	for (int i = 0; i < n && i < (int)sizeof(in); i++) {
		h ^= (unsigned char)in[i];
		h *= 1099511628211ULL;
	}
	snprintf(buf, cap, "%016llx", h);
}

static build_extra_fn extra_fn;
static void *extra_ctx;

/* Sets what write_extra runs. */
void index_build_set_extra(build_extra_fn fn, void *ctx)
{
	extra_fn = fn;
	extra_ctx = ctx;
}

/* Starts the caller's extra writer (index_build_set_extra), if any, on the core the read-next
 * thread has finished with by the time the full text is written. Returns 0 or an error code. */
static int start_extra(writer *w, const corpus *c, build_stats *stats)
{
	(void)stats;
	char path[8200];
	snprintf(path, sizeof(path), "%s-sources", w->file);
	return extra_fn ? build_extra_start(&w->extra, extra_fn, extra_ctx, c, path, w->err) : 0;
}

static int copy_tables(writer *w, const char *path, const char *const *appended,
		       const char *const *replaced);

/* Waits for the extra writer and copies its tables' rows in. Returns 0 or its error code. */
static int write_extra(writer *w, const corpus *c, build_stats *stats)
{
	(void)c;
	(void)stats;
	const char *rows = NULL;
	int rc = w->extra ? build_extra_finish(w->extra, &rows, w->err) : 0;
	if (!rc && rows)
		rc = copy_tables(w, rows, atlas_sources_tables, NULL);
	build_extra_free(w->extra);
	w->extra = NULL;
	return rc;
}

static int write_meta(writer *w, const corpus *c, build_stats *stats)
{
	sqlite3_stmt *st = NULL;
	int rc = prepare(w, &st, "INSERT INTO " ATLAS_META_TABLE " VALUES(?,?)");
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char when[32];
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	build_id_of(stats->build_id, sizeof(stats->build_id), c->digest);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_SCHEMA_VERSION, "%d", ATLAS_SCHEMA_VERSION);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_BUILD_ID, "%s", stats->build_id);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_BUILT_AT, "%s", when);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_BUILT_AT_UNIX, "%lld", (long long)now);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_CORPUS_DIGEST, "fnv1a64:%016llx", c->digest);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_CORPUS_BYTES, "%zu", c->bytes);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_SITE_URL, "%s", c->site_url);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_PAGES, "%d", c->npages);
	for (int t = 0; !rc && t < ATLAS_TYPE_COUNT; t++)
		rc = put_meta(w, st, atlas_meta_pages_of_type[t], "%d", stats->pages[t]);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_SECTIONS, "%d", stats->sections);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_SECTION_TEXT_BYTES, "%lld", stats->section_text_bytes);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_LINKS, "%d", stats->links);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_GUIDE_STEPS, "%d", stats->guide_steps);
	if (!rc)
		rc = put_meta(w, st, ATLAS_META_TERMS, "%d", stats->terms);
	sqlite3_finalize(st);
	return rc;
}

/* Whether table name is one the read-next thread writes, copied in by write_signals: the signals',
 * and the fields and titles tables' shadow tables. */
static bool signals_table(const char *name)
{
	for (int i = 0; atlas_signals_tables[i]; i++)
		if (strcmp(name, atlas_signals_tables[i]) == 0)
			return true;
	for (int i = 0; atlas_fields_shadow_tables[i]; i++)
		if (strcmp(name, atlas_fields_shadow_tables[i]) == 0)
			return true;
	return false;
}

/* Runs PRAGMA integrity_check on each table of the index (and its indexes) that is or is not, as
 * read_next says, one of the read-next thread's; meta goes with those, written last. Virtual tables
 * are checked through their shadow tables. Returns 0, or ATLAS_ESQL naming the first problem. */
static int check_tables(writer *w, bool read_next)
{
	sqlite3_stmt *names = NULL, *check = NULL;
	int rc = prepare(w, &names, "SELECT name FROM sqlite_schema WHERE type = 'table'"
				    " AND sql NOT LIKE 'CREATE VIRTUAL%' ORDER BY name");
	if (!rc)
		rc = prepare(w, &check, "SELECT * FROM pragma_integrity_check(?1)");
	while (!rc && sqlite3_step(names) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(names, 0);
		if ((signals_table(name) || strcmp(name, ATLAS_META_TABLE) == 0) != read_next)
			continue;
		sqlite3_bind_text(check, 1, name, -1, SQLITE_STATIC);
		int step = sqlite3_step(check);
		const char *verdict = step == SQLITE_ROW ? (const char *)sqlite3_column_text(check, 0) : NULL;
		if (!verdict || strcmp(verdict, "ok") != 0)
			rc = atlas_error_set(w->err, ATLAS_ESQL, "%s: integrity check of %s failed: %s", w->file,
					     name, verdict ? verdict : sqlite3_errmsg(w->db));
		sqlite3_reset(check);
	}
	sqlite3_finalize(check);
	sqlite3_finalize(names);
	return rc;
}

/* The tables written by this thread, checked while the read-next thread finishes its work. */
static int check_written(writer *w, const corpus *c, build_stats *stats)
{
	(void)c;
	(void)stats;
	return check_tables(w, false);
}

/* The read-next thread's tables and meta, checked once written and committed. */
static int check_signals(writer *w, const corpus *c, build_stats *stats)
{
	(void)c;
	(void)stats;
	int rc = exec(w, "COMMIT");
	return rc ? rc : check_tables(w, true);
}

/* Copies the rows of the tables appended whole from the file at path into the index's, and the
 * tables replaced over the index's own (emptied first). The same tables on both sides, so SQLite
 * copies the rows as they are stored, in key order. ATTACH is refused inside a transaction: the
 * build's is committed around it, which with the journal off only writes out what is pending.
 * Returns 0 or an error code with w->err set, naming the table. */
static int copy_tables(writer *w, const char *path, const char *const *appended,
		       const char *const *replaced)
{
	char *attach = sqlite3_mprintf("COMMIT; ATTACH %Q AS side; BEGIN", path);
	int rc = attach ? exec(w, attach) : atlas_error_set(w->err, ATLAS_ENOMEM, "out of memory");
	sqlite3_free(attach);
	for (int pass = 0; pass < 2; pass++) {
		const char *const *names = pass ? replaced : appended;
		for (int i = 0; !rc && names && names[i]; i++) {
			char sql[240], what[80];
			snprintf(sql, sizeof(sql), "%s%s%sINSERT INTO main.%s SELECT * FROM side.%s",
				 pass ? "DELETE FROM main." : "", pass ? names[i] : "", pass ? "; " : "",
				 names[i], names[i]);
			snprintf(what, sizeof(what), "copy %s", names[i]);
			if (sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
				rc = sql_fail(w, what);
		}
	}
	return rc ? rc : exec(w, "COMMIT; DETACH side; BEGIN");
}

/* Copies the signals' tables whole from the file their thread wrote, and the fields and titles
 * tables' shadow tables over the empty tables' (this connection never reads those tables, so FTS5
 * holds nothing of them to go stale). */
static int write_signals(writer *w, const corpus *c, build_stats *stats)
{
	(void)c;
	const char *rows = NULL;
	int rc = signals_finish(w->signals, &rows, &stats->candidates, &stats->terms, w->err);
	if (!rc)
		rc = copy_tables(w, rows, atlas_signals_tables, atlas_fields_shadow_tables);
	signals_free(w->signals);
	w->signals = NULL;
	return rc;
}

/* Merges the fts table's segments into one, while the read-next thread finishes (and merges the
 * fields and titles tables'). */
/* A corpus that fits the in-memory hash was flushed as one segment per table already: merging it
 * again would only rewrite it. */
static bool merge_segments(const writer *w, const corpus *c)
{
	return (long long)c->bytes > w->fts_hash_bytes / 2;
}

static int optimize_fts(writer *w, const corpus *c, build_stats *stats)
{
	(void)stats;
	if (merge_segments(w, c))
		return exec(w, "INSERT INTO fts(fts) VALUES('optimize')");
	return 0;
}

/* Atlas's own postings of every term, from the merged fts table (indexer/postings_index.h). */
static int write_postings(writer *w, const corpus *c, build_stats *stats)
{
	(void)stats;
	return postings_index_write(w->db, w->file, c->npages, w->err);
}

static int compact(writer *w, const corpus *c, build_stats *stats)
{
	(void)c;
	(void)stats;
	/* the pages FTS5 freed when merging segments go back: moved to fill the holes, file cut */
	return exec(w, "PRAGMA incremental_vacuum; PRAGMA journal_mode=DELETE");
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int index_build(build_stats *stats, corpus *c, const char *out_path, int fts_memory_mib,
		atlas_error *err)
{
	char dir[4096], base[1024], tmp[8192];
	memset(stats, 0, sizeof(*stats));
	split_path(out_path, dir, sizeof(dir), base, sizeof(base));
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.%ld", dir, base, (long)getpid());
	index_remove_stale_temps(out_path);
	unlink(tmp);

	/* by default an eighth of the corpus (1 MiB to BUILD_FTS_MEMORY_MIB): the hashes of the three
	 * full-text tables take several times what FTS5 counts, and the build's peak memory is to
	 * stay within twice the corpus */
	long long hash = (long long)fts_memory_mib << 20;
	if (fts_memory_mib <= 0) {
		hash = (long long)c->bytes / 8;
		hash = hash < (1LL << 20) ? 1LL << 20 : hash > (long long)BUILD_FTS_MEMORY_MIB << 20
			? (long long)BUILD_FTS_MEMORY_MIB << 20 : hash;
	}
	writer w = { .file = tmp, .err = err, .fts_hash_bytes = hash };
	int rc = 0;
	w.order = malloc((size_t)(c->npages ? c->npages : 1) * sizeof(int));
	w.id_of = malloc((size_t)(c->npages ? c->npages : 1) * sizeof(int));
	if (!w.order || !w.id_of) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto out_free;
	}
	for (int i = 0; i < c->npages; i++)
		w.order[i] = i;
	g_sort_corpus = c;
	qsort(w.order, (size_t)c->npages, sizeof(int), cmp_page_path);
	for (int i = 0; i < c->npages; i++)
		w.id_of[w.order[i]] = i + 1;

	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(tmp, &w.db, flags, NULL) != SQLITE_OK) {
		rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot create: %s", tmp,
				     w.db ? sqlite3_errmsg(w.db) : "out of memory");
		goto out_close;
	}
	rc = atlas_analyzer_register(w.db, err);
	if (!rc) {
		/* the page cache (and so the sorter's memory): a sixteenth of the corpus, 1 MiB to
		 * BUILD_FTS_MEMORY_MIB. The tables are written in key order, near enough, so the pages
		 * being filled are few; at an eighth, as much as the hash, the cache was full (2 MiB on
		 * the PostgreSQL manual) when the build's memory peaked */
		long long kib = (long long)c->bytes / 16 / 1024;
		kib = kib < 1024 ? 1024 : kib > BUILD_FTS_MEMORY_MIB * 1024LL ? BUILD_FTS_MEMORY_MIB * 1024LL : kib;
		char sql[200];
		snprintf(sql, sizeof(sql),
			 "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=4096;"
			 " PRAGMA auto_vacuum=INCREMENTAL; PRAGMA cache_size=-%lld; BEGIN", kib);
		rc = exec(&w, sql);
	}
	if (!rc)
		rc = exec(&w, atlas_schema_sql);
	if (!rc) {
		/* one large in-memory hash before each flush, and no merging during the bulk load:
		 * few segments, merged once by 'optimize' at the end */
		char sql[160];
		snprintf(sql, sizeof(sql),
			 "INSERT INTO fts(fts, rank) VALUES('automerge', 0);"
			 " INSERT INTO fts(fts, rank) VALUES('hashsize', %lld)",
			 w.fts_hash_bytes);
		rc = exec(&w, sql);
	}
	/* the read-next signals and the vocabulary are computed on the other core meanwhile, and
	 * then the fields and titles tables (a quarter of the fts table's hash each); the section bodies, read by
	 * both, are freed page by page once both have read them (or kept to the end, when there is
	 * no memory to count them) */
	if (!rc) {
		w.bodies = c;
		corpus_share_bodies(c, 2);
		char rows[sizeof(tmp) + 16];
		snprintf(rows, sizeof(rows), "%s-signals", tmp);
		rc = signals_start(&w.signals, w.db, c, w.id_of, rows, w.fts_hash_bytes / 4,
				   merge_segments(&w, c), err);
	}
	/* each phase timed, for the summary */
	struct {
		const char *name;
		int (*run)(writer *, const corpus *, build_stats *);
	} phases[] = {
		{ "text dictionary", write_dictionaries },
		{ "documents and full-text index", write_docs },
		{ NULL, start_extra },
		{ "taxonomy, guides and links", write_graph },
		{ "synonyms", write_synonyms },
		/* the work that needs no read-next rows, done before waiting for them */
		{ "optimize", optimize_fts },
		{ "postings", write_postings },
		{ "page sources", write_extra },
		{ "integrity check", check_written },
		{ "vocabulary, read-next signals, fields and titles indexes", write_signals },
		{ "meta", write_meta },
		{ "integrity check of the read-next tables", check_signals },
		{ "compact", compact },
	};
	for (size_t i = 0; !rc && i < sizeof(phases) / sizeof(phases[0]); i++) {
		double t0 = now_ms();
		rc = phases[i].run(&w, c, stats);
		if (phases[i].name && stats->nphases < BUILD_MAX_PHASES) {
			stats->phase_name[stats->nphases] = phases[i].name;
			stats->phase_ms[stats->nphases++] = now_ms() - t0;
		}
	}
out_close:
	atlas_compressor_free(w.body_z);
	build_extra_free(w.extra);
	signals_free(w.signals);
	w.signals = NULL;
	if (w.db && sqlite3_close(w.db) != SQLITE_OK && !rc)
		rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot close", tmp);
	if (!rc && fsync_path(tmp, 0))
		rc = atlas_error_set(err, ATLAS_EIO, "%s: fsync: %s", tmp, strerror(errno));
	if (!rc) {
		struct stat sb;
		if (stat(tmp, &sb) == 0)
			stats->index_bytes = (long long)sb.st_size;
		if (rename(tmp, out_path))
			rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot rename into place: %s", out_path,
					     strerror(errno));
		else
			fsync_path(dir, 1);
	}
	if (rc)
		unlink(tmp);
out_free:
	free(w.order);
	free(w.id_of);
	return rc;
}
