/* engine.c - opening an index: the file read into memory (image.c) or in place, its schema and
 * size checked, its tables loaded (pages, sections and their texts, vocabulary, synonyms, title
 * words, meta), the statements of a search prepared, read next opened (next.h); the engine's
 * accessors, and freeing it. Searching is search.c's. */
#include "engine.h"
#include "grow.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "analyzer.h"
#include "anchor.h"
#include "engine_internal.h"
#include "blockmax.h"
#include "blockpost.h"
#include "image.h"
#include "next.h"
#include "postings.h"
#include "fts_functions.h"
#include "rank.h"
#include "schema.h"
#include "stopwords.h"
#include "strbuf.h"

/**************************************************************************************************
** Opening.
*/

/* A copy of column i of the current row in the engine's arena ("" for NULL), or NULL when out of
 * memory. */
static char *dup_col(atlas_engine *e, sqlite3_stmt *st, int i)
{
	const char *s = (const char *)sqlite3_column_text(st, i);
	return atlas_arena_strndup(&e->strings, s ? s : "", s ? (size_t)sqlite3_column_bytes(st, i) : 0);
}

unsigned long long atlas_word_sig(const char *norm)
{
	unsigned long long sig = 0;
	for (const char *p = norm; p && *p; p++)
		if (*p == ' ' && p[1] && p[1] != ' ')
			sig |= atlas_word_bit((unsigned char)p[1], (unsigned char)p[2]);
	return sig;
}

/* A copy of sb's text in the engine's arena (then sb is emptied), or NULL when out of memory. */
static char *keep_str(atlas_engine *e, strbuf *sb)
{
	char *s = atlas_arena_strndup(&e->strings, strbuf_str(sb), sb->len);
	strbuf_reset(sb);
	return s;
}

static int cmp_vocab(const void *a, const void *b)
{
	return strcmp(((const vocab_entry *)a)->term, ((const vocab_entry *)b)->term);
}

/* Folded words of text, analyzed in prefix mode (surface forms), into a NUL-separated list. */
typedef struct words_ctx {
	strbuf *out;
	atlas_analyzer *a;
	bool stem;
	int n;
} words_ctx;

static int words_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	words_ctx *w = ctx;
	(void)tflags;
	(void)start;
	(void)end;
	char stem[256];
	if (w->stem) {
		int sl = atlas_stem(w->a, tok, n, stem, sizeof(stem));
		tok = stem;
		n = sl;
	}
	if (w->n++)
		strbuf_putc(w->out, ' ');
	strbuf_append(w->out, tok, (size_t)n);
	return 0;
}

/* Writes the folded surface words (or their stems) of text into out, space-separated. */
void engine_normalize(atlas_engine *e, strbuf *out, const char *text, bool stem)
{
	words_ctx w = { out, e->analyzer, stem, 0 };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, text, (int)strlen(text),
		      words_token, &w);
}

/* The first of the n strings at base, stride bytes apart and sorted, that is not before word. */
static int lower_bound(const void *base, int n, size_t stride, const char *word)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (strcmp(*(const char *const *)((const char *)base + (size_t)mid * stride), word) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int engine_title_index_from(const atlas_engine *e, const char *word)
{
	return lower_bound(e->title_index, e->ntitle_index, sizeof(*e->title_index), word);
}

int engine_vocab_from(const atlas_engine *e, const char *word)
{
	return lower_bound(e->vocab, e->nvocab, sizeof(*e->vocab), word);
}

/* Writes the stems of the words of a page's path into out, as engine_normalize does: the words
 * an author chose for the page's address ("/orbax-model-surgery": orbax model surgeri), the "t"
 * that starts a topic page's path left out. */
static void path_words(atlas_engine *e, strbuf *out, const char *path)
{
	char buf[512];
	if (strncmp(path, "/t/", 3) == 0)
		path += 3;
	size_t n = strlen(path);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = path[i] == '-' || path[i] == '_' || path[i] == '/' || path[i] == '.' ? ' ' : path[i];
	buf[n] = '\0';
	engine_normalize(e, out, buf, true);
}

/* Whether s holds no byte a JSON string escapes: a quote, a backslash or a control byte. */
static bool json_plain(const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
			return false;
	return true;
}

/* How much a page of words words and links links to other pages is a list of links (a table of
 * contents, an index, a home page) rather than content: 0 below RANK_LISTING_MIN_LINKS links or
 * RANK_LISTING_DENSITY_FROM links per 100 words, 1 from RANK_LISTING_DENSITY_FULL, linear
 * between. */
static double listing_of(int links, int words)
{
	if (links < RANK_LISTING_MIN_LINKS)
		return 0;
	double density = 100.0 * links / (words > 0 ? words : 1);
	double x = (density - RANK_LISTING_DENSITY_FROM) / (RANK_LISTING_DENSITY_FULL - RANK_LISTING_DENSITY_FROM);
	return x <= 0 ? 0 : x >= 1 ? 1 : x;
}

/* How many of the space-separated words of words (a page's title_words) are not stop words. */
static int content_words(const char *words)
{
	int n = 0;
	for (const char *w = words; *w;) {
		while (*w == ' ')
			w++;
		size_t len = strcspn(w, " ");
		n += len > 0 && !atlas_is_stopword(w, len);
		w += len;
	}
	return n;
}

static int load_docs(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db,
			       "SELECT id, path,"
			       " (SELECT value FROM " ATLAS_META_TABLE " WHERE key = '" ATLAS_META_SITE_URL "') || path, title,"
			       " type, description, topics, priority,"
			       " first_section, last_section, keywords, lastmod, image, words,"
			       " (SELECT count(*) FROM links WHERE src = docs.id), code_listing FROM docs ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read documents: %s", sqlite3_errmsg(e->db));
	int cap = 0;
	strbuf sb = STRBUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (atlas_grow(&e->docs, &cap, e->ndocs, sizeof(*e->docs), 256))
			goto oom;
		atlas_doc *d = &e->docs[e->ndocs];
		memset(d, 0, sizeof(*d));
		d->id = sqlite3_column_int(st, 0);
		d->path = dup_col(e, st, 1);
		d->url = dup_col(e, st, 2);
		d->title = dup_col(e, st, 3);
		d->type = dup_col(e, st, 4);
		d->description = dup_col(e, st, 5);
		d->lastmod = dup_col(e, st, 11);
		d->image = dup_col(e, st, 12);
		d->priority = sqlite3_column_double(st, 7);
		d->first_section = sqlite3_column_int(st, 8);
		d->last_section = sqlite3_column_int(st, 9);
		d->listing = listing_of(sqlite3_column_int(st, 14), sqlite3_column_int(st, 13));
		d->code_listing = sqlite3_column_int(st, 15) != 0;
		cJSON *tj = cJSON_Parse((const char *)sqlite3_column_text(st, 6));
		int nt = cJSON_IsArray(tj) ? cJSON_GetArraySize(tj) : 0;
		d->topics = atlas_arena_alloc(&e->strings, ((size_t)nt + 1) * sizeof(char *));
		cJSON *it;
		bool topics_ok = d->topics != NULL;
		cJSON_ArrayForEach(it, tj) {
			if (cJSON_IsString(it) && topics_ok) {
				char *t = atlas_arena_strndup(&e->strings, it->valuestring, strlen(it->valuestring));
				topics_ok = t != NULL;
				d->topics[d->ntopics++] = t;
			}
		}
		cJSON_Delete(tj);
		strbuf_putc(&sb, ' ');
		engine_normalize(e, &sb, d->title, true);
		strbuf_putc(&sb, ' ');
		d->title_norm = keep_str(e, &sb);
		strbuf_putc(&sb, ' ');
		engine_normalize(e, &sb, d->title, false);
		strbuf_putc(&sb, ' ');
		d->title_words = keep_str(e, &sb);
		d->title_content = d->title_words ? content_words(d->title_words) : 0;
		strbuf_putc(&sb, ' ');
		engine_normalize(e, &sb, (const char *)sqlite3_column_text(st, 10), true);
		strbuf_putc(&sb, ' ');
		d->keywords_norm = keep_str(e, &sb);
		strbuf_putc(&sb, ' ');
		engine_normalize(e, &sb, (const char *)sqlite3_column_text(st, 10), false);
		strbuf_putc(&sb, ' ');
		d->keywords_words = keep_str(e, &sb);
		strbuf_putc(&sb, ' ');
		path_words(e, &sb, d->path ? d->path : "");
		strbuf_putc(&sb, ' ');
		d->path_norm = keep_str(e, &sb);
		d->title_sig = atlas_word_sig(d->title_norm);
		d->keywords_sig = atlas_word_sig(d->keywords_norm);
		d->path_sig = atlas_word_sig(d->path_norm);
		d->type_id = atlas_page_type_of(d->type);
		if (!d->path || !d->url || !d->title || !d->type || !d->description || !d->lastmod || !d->image || !topics_ok ||
		    !d->title_norm || !d->title_words || !d->keywords_norm || !d->keywords_words || !d->path_norm ||
		    !strmap_put(&e->path_index, d->path, strlen(d->path), e->ndocs, NULL))
			goto oom;
		d->json_plain = json_plain(d->path) && json_plain(d->url) && json_plain(d->title) &&
				json_plain(d->type);
		for (int k = 0; k < d->ntopics; k++)
			d->json_plain = d->json_plain && json_plain(d->topics[k]);
		e->ndocs++;
	}
	sqlite3_finalize(st);
	strbuf_free(&sb);
	return 0;
oom:
	sqlite3_finalize(st);
	strbuf_free(&sb);
	return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading documents");
}

/* Packs every page's type and top-level topics into e->facet_type and e->facet_bits (engine.h:
 * atlas_doc's type_id and top_topics); leaves them NULL when the index has more top-level topics
 * than FACET_BITS. Returns 0, or ATLAS_ENOMEM with err set. */
static int pack_facets(atlas_engine *e, atlas_error *err)
{
	e->nfacet_topics = 0;
	for (int d = 0; d < e->ndocs; d++)
		for (int k = 0; k < e->docs[d].ntop_topics; k++) {
			int ti = e->docs[d].top_topics[k], b;
			for (b = 0; b < e->nfacet_topics && e->facet_topic[b] != ti; b++)
				;
			if (b == FACET_BITS)
				return 0; /* too many to pack: counted from the pages */
			if (b == e->nfacet_topics)
				e->facet_topic[e->nfacet_topics++] = ti;
		}
	e->facet_type = malloc((size_t)e->ndocs + 1);
	e->facet_bits = malloc(((size_t)e->ndocs + 1) * sizeof(uint32_t));
	if (!e->facet_type || !e->facet_bits) {
		free(e->facet_type);
		free(e->facet_bits);
		e->facet_type = NULL;
		e->facet_bits = NULL;
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	}
	for (int d = 0; d < e->ndocs; d++) {
		const atlas_doc *doc = &e->docs[d];
		uint32_t bits = 0;
		for (int k = 0; k < doc->ntop_topics; k++)
			for (int b = 0; b < e->nfacet_topics; b++)
				if (e->facet_topic[b] == doc->top_topics[k])
					bits |= (uint32_t)1 << b;
		e->facet_type[d] = (unsigned char)doc->type_id;
		e->facet_bits[d] = bits;
	}
	return 0;
}

/* Reads which page is each topic's (the topics table's doc_id: "/t/systems/caching" in a corpus, a
 * section's index page on a built site) into e->topic_index and the pages' topic_of. Returns 0,
 * ATLAS_ESQL or ATLAS_ENOMEM. */
static int load_topic_pages(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT path, doc_id FROM topics WHERE doc_id IS NOT NULL ORDER BY ord", -1, &st,
			       NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read topics: %s", sqlite3_errmsg(e->db));
	int rc = 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 0);
		int id = sqlite3_column_int(st, 1), lo = 0, hi = e->ndocs;
		while (lo < hi) { /* the docs are in id order */
			int mid = (lo + hi) / 2;
			if (e->docs[mid].id < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!path || lo == e->ndocs || e->docs[lo].id != id || e->docs[lo].topic_of)
			continue;
		char *t = atlas_arena_strndup(&e->strings, path, strlen(path));
		if (!t || !strmap_put(&e->topic_index, t, strlen(t), lo, NULL))
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading topics");
		else
			e->docs[lo].topic_of = t;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Finds every page's top-level topic pages, for the topic facet (a top-level topic without a
 * page of its own counts in none). Returns 0 or ATLAS_ENOMEM. */
static int link_top_topics(atlas_engine *e, atlas_error *err)
{
	for (int d = 0; d < e->ndocs; d++) {
		atlas_doc *doc = &e->docs[d];
		doc->top_topics = atlas_arena_alloc(&e->strings, 8 * sizeof(int));
		if (!doc->top_topics)
			return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		const char *seen[8];
		int nseen = 0;
		for (int k = 0; k < doc->ntopics && nseen < 8; k++) {
			const char *t = doc->topics[k];
			size_t tl = strcspn(t, "/");
			bool dup = false;
			for (int s = 0; s < nseen && !dup; s++)
				dup = strncmp(seen[s], t, tl) == 0 && (seen[s][tl] == '/' || seen[s][tl] == '\0');
			if (dup)
				continue;
			seen[nseen++] = t;
			char top[300];
			snprintf(top, sizeof(top), "%.*s", (int)tl, t);
			int ti = atlas_engine_topic_page(e, top);
			if (ti >= 0)
				doc->top_topics[doc->ntop_topics++] = ti;
		}
	}
	return pack_facets(e, err);
}

/* Reads where every section's tokens sit among its page's fts positions (sections are numbered
 * 1..n in page order, each page's from its lead section). Returns 0, or ATLAS_ESCHEMA when the
 * table does not have that shape, or ATLAS_ENOMEM. */
static int load_sections(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db,
			       "SELECT id, doc_id, ord, level, heading_tokens, lead_tokens, body_tokens"
			       " FROM sections ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read sections: %s", sqlite3_errmsg(e->db));
	int cap = 0, rc = 0, prev_doc = -1, head = 0, body = 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		if (atlas_grow(&e->sections, &cap, e->nsections, sizeof(*e->sections), 1024)) {
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading sections");
			break;
		}
		section_info *x = &e->sections[e->nsections];
		int id = sqlite3_column_int(st, 0), doc = sqlite3_column_int(st, 1) - 1;
		x->doc = doc;
		x->ord = sqlite3_column_int(st, 2);
		x->level = sqlite3_column_int(st, 3);
		x->nhead = sqlite3_column_int(st, 4);
		x->nlead = sqlite3_column_int(st, 5);
		x->nbody = sqlite3_column_int(st, 6);
		if (id != e->nsections + 1 || doc < 0 || doc >= e->ndocs || e->docs[doc].id != doc + 1 ||
		    (doc != prev_doc) != (x->ord == 0) || x->nhead < 0 || x->nlead < 0 || x->nbody < 0 ||
		    (x->ord && x->nlead)) {
			rc = atlas_error_set(err, ATLAS_ESCHEMA, "section %d is out of place or malformed", id);
			break;
		}
		if (doc != prev_doc)
			head = body = 0;
		prev_doc = doc;
		x->head_pos = x->ord ? head : 0;
		head += x->ord ? x->nhead : 0;
		x->body_pos = body;
		body += x->nbody;
		e->nsections++;
	}
	sqlite3_finalize(st);
	for (int d = 0; !rc && d < e->ndocs; d++) {
		const atlas_doc *doc = &e->docs[d];
		if (doc->first_section < 1 || doc->last_section > e->nsections ||
		    doc->first_section > doc->last_section || e->sections[doc->first_section - 1].doc != d ||
		    e->sections[doc->last_section - 1].doc != d)
			rc = atlas_error_set(err, ATLAS_ESCHEMA, "page %s has no sections of its own", doc->path);
	}
	return rc;
}

/* Makes the engine's decompressor of section bodies from the index's dictionary (none: the
 * bodies were compressed without). Returns 0, or ATLAS_ENOMEM or ATLAS_EINVAL. */
static int load_dictionaries(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT dict FROM dictionaries WHERE name = 'section_body'", -1, &st,
			       NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "cannot read dictionaries: %s", sqlite3_errmsg(e->db));
	bool found = sqlite3_step(st) == SQLITE_ROW;
	const void *dict = found ? sqlite3_column_blob(st, 0) : NULL;
	size_t n = found ? (size_t)sqlite3_column_bytes(st, 0) : 0;
	int rc = atlas_decompressor_new(&e->body_z, dict, n, err);
	sqlite3_finalize(st);
	return rc;
}

/* The anchor of section sec, whose heading is heading: *anchor as stored, or when the index left
 * it empty (the heading's own anchor, common/anchor.h) made again in e->anchor_buf. Returns false
 * when out of memory. */
static bool section_anchor(atlas_engine *e, int sec, const char *heading, const char **anchor, int *n)
{
	if ((*anchor && *n > 0) || e->sections[sec].level == 0)
		return true;
	strbuf_reset(&e->anchor_buf);
	anchor_of(&e->anchor_buf, heading ? heading : "");
	if (e->anchor_buf.oom)
		return false;
	*anchor = strbuf_str(&e->anchor_buf);
	*n = (int)e->anchor_buf.len;
	return true;
}

/* Finds the spans of section sec's text t into l (emptied first): the heading's tokens, then the
 * body's from t->body_first to to (to < 0: all). Returns whether they are as many as the index
 * counts for the section there. */
static bool section_spans(atlas_engine *e, atlas_span_list *l, int sec, const section_text *t, int to)
{
	const section_info *si = &e->sections[sec];
	int nbody = si->nlead + si->nbody;
	int end = to >= 0 && to < nbody ? to : nbody;
	int want = si->nhead + (end > t->body_first ? end - t->body_first : 0);
	l->count = 0;
	if (!t->heading || !t->body ||
	    atlas_spans_add(l, e->analyzer, t->heading, t->nheading, 0, -1) != SQLITE_OK ||
	    l->count != si->nhead ||
	    (want > si->nhead && atlas_spans_add(l, e->analyzer, t->body, t->nbody, 0, want) != SQLITE_OK))
		return false;
	return l->count == want;
}

int engine_section_row(atlas_engine *e, int sec, int from, int to, section_text *out)
{
	sqlite3_stmt *st = e->st_section_text;
	sqlite3_bind_int(st, 1, sec + 1);
	int step = sqlite3_step(st);
	if (step != SQLITE_ROW)
		return step == SQLITE_DONE ? ATLAS_EINVAL : ATLAS_ESQL;
	unsigned first = 0;
	int rc = 0;
	if (to > 0)
		rc = atlas_decompress_units(e->body_z, &e->body_buf, sqlite3_column_blob(st, 2),
					    (size_t)sqlite3_column_bytes(st, 2), from > 0 ? (unsigned)from : 0,
					    (unsigned)to, &first, NULL);
	else
		strbuf_reset(&e->body_buf);
	if (rc)
		return rc;
	if (first > (unsigned)to)
		return ATLAS_EINVAL;
	out->heading = (const char *)sqlite3_column_text(st, 0);
	out->nheading = sqlite3_column_bytes(st, 0);
	out->anchor = (const char *)sqlite3_column_text(st, 1);
	out->nanchor = sqlite3_column_bytes(st, 1);
	if (!section_anchor(e, sec, out->heading, &out->anchor, &out->nanchor))
		return ATLAS_ENOMEM;
	out->body = e->body_buf.buf ? e->body_buf.buf : "";
	out->nbody = (int)e->body_buf.len;
	out->body_first = (int)first;
	out->decoded = section_spans(e, &e->row_spans, sec, out, to) ? e->row_spans.sp : NULL;
	return 0;
}

/* Copies every section's text into the engine, decompressed, when the index is held in memory and
 * the texts are small (SECTION_TEXTS_MAX, against meta's section_text_bytes): a hit's sections are
 * then read without a statement each. Leaves e->texts NULL otherwise. Returns 0, ATLAS_ENOMEM, or
 * ATLAS_EINVAL when a stored text does not decompress (the message names path, the index). */
static int load_section_texts(atlas_engine *e, const char *path, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	const char *bytes = atlas_engine_meta(e, ATLAS_META_SECTION_TEXT_BYTES);
	if (!e->in_memory || e->nsections == 0 || !bytes || atoll(bytes) > SECTION_TEXTS_MAX)
		return 0;
	section_text *t = atlas_arena_alloc(&e->strings, (size_t)e->nsections * sizeof(*t));
	if (!t || sqlite3_prepare_v2(e->db, "SELECT id, heading, anchor, body FROM sections ORDER BY id",
				     -1, &st, NULL) != SQLITE_OK)
		return t ? 0 : atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading section texts");
	int n = 0, rc = 0;
	while (!rc && sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_int(st, 0) != n + 1 || n == e->nsections)
			break; /* load_sections checked the numbering; a change since is not worth a copy */
		if ((rc = atlas_decompress(e->body_z, &e->body_buf, sqlite3_column_blob(st, 3),
					   (size_t)sqlite3_column_bytes(st, 3), err))) {
			char why[sizeof(err->msg)];
			snprintf(why, sizeof(why), "%s", err ? err->msg : "");
			rc = atlas_error_set(err, rc, "%s: section %d: %s", path, n + 1, why);
			break;
		}
		section_text *x = &t[n];
		const char *h = (const char *)sqlite3_column_text(st, 1);
		x->nheading = sqlite3_column_bytes(st, 1);
		x->heading = atlas_arena_strndup(&e->strings, h ? h : "", h ? (size_t)x->nheading : 0);
		const char *a = (const char *)sqlite3_column_text(st, 2);
		int na = sqlite3_column_bytes(st, 2);
		bool made = section_anchor(e, n, x->heading, &a, &na);
		x->nanchor = made && a ? na : 0;
		x->anchor = made ? atlas_arena_strndup(&e->strings, a ? a : "", (size_t)x->nanchor) : NULL;
		x->nbody = (int)e->body_buf.len;
		x->body = atlas_arena_strndup(&e->strings, e->body_buf.buf, e->body_buf.len);
		/* found once here rather than for every hit showing the section */
		x->decoded = NULL;
		x->body_first = 0;
		if (x->heading && x->body && section_spans(e, &e->row_spans, n, x, -1)) {
			size_t size = (size_t)e->row_spans.count * sizeof(atlas_span);
			atlas_span *all = atlas_arena_alloc(&e->strings, size ? size : 1);
			if (all)
				memcpy(all, e->row_spans.sp, size);
			x->decoded = all;
			if (!all)
				rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading section texts");
		}
		if (!x->heading || !x->anchor || !x->body)
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading section texts");
		n++;
	}
	sqlite3_finalize(st);
	if (!rc && n == e->nsections)
		e->texts = t;
	return rc;
}

/* Reads the token count of every fts column of every page (fts_docsize: per row, one SQLite
 * varint per column), so that ranking needs no lookup per row. A page whose sizes are missing or
 * malformed is left to FTS5 to answer. Returns 0 or ATLAS_ENOMEM. */
static int load_col_sizes(atlas_engine *e, atlas_error *err)
{
	e->has_defs = true;
	e->col_sizes = calloc((size_t)(e->ndocs ? e->ndocs : 1) * FTS_NCOLS, sizeof(int));
	if (!e->col_sizes)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading column sizes");
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT id, sz FROM fts_docsize", -1, &st, NULL) != SQLITE_OK)
		return 0;
	int complete = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		const unsigned char *p = sqlite3_column_blob(st, 1), *end = p + sqlite3_column_bytes(st, 1);
		if (id < 1 || id > e->ndocs || !p)
			continue;
		int v[FTS_NCOLS];
		if (!blockpost_docsize(p, (int)(end - p), v)) {
			memcpy(e->col_sizes + (id - 1) * FTS_NCOLS, v, sizeof(v));
			complete++;
		}
	}
	sqlite3_finalize(st);
	/* all or nothing: a page without its sizes would rank as if empty */
	if (complete == e->ndocs && e->ndocs > 0) {
		e->rec.sizes = e->col_sizes;
		e->rec.nrows = e->ndocs;
		for (int c = 0; c < FTS_NCOLS; c++) {
			double total = 0;
			for (int d = 0; d < e->ndocs; d++)
				total += e->col_sizes[d * FTS_NCOLS + c];
			e->rec.avg[c] = total > 0 ? total / e->ndocs : 1.0;
			if (c == FTS_DEFS)
				e->has_defs = total > 0;
		}
	}
	return 0;
}

static int cmp_title_word(const void *a, const void *b)
{
	const title_word *x = a, *y = b;
	int c = strcmp(x->word, y->word);
	return c ? c : x->doc - y->doc;
}

/* The sorted index of title words behind typeahead. */
static int index_titles(atlas_engine *e, atlas_error *err)
{
	size_t bytes = 0;
	int words = 0;
	for (int d = 0; d < e->ndocs; d++) {
		bytes += strlen(e->docs[d].title_words) + 1;
		for (const char *c = e->docs[d].title_words; *c; c++)
			words += *c == ' ';
	}
	e->title_words_buf = malloc(bytes + 1);
	e->title_index = malloc((size_t)(words + 1) * sizeof(title_word));
	if (!e->title_words_buf || !e->title_index)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory indexing titles");
	char *out = e->title_words_buf;
	for (int d = 0; d < e->ndocs; d++) {
		const char *t = e->docs[d].title_words;
		while (*t) {
			while (*t == ' ')
				t++;
			size_t n = strcspn(t, " ");
			if (!n)
				break;
			memcpy(out, t, n);
			out[n] = '\0';
			e->title_index[e->ntitle_index++] = (title_word){ out, d };
			out += n + 1;
			t += n;
		}
	}
	qsort(e->title_index, (size_t)e->ntitle_index, sizeof(title_word), cmp_title_word);
	return 0;
}

unsigned long long letter_set(const char *w, int n)
{
	unsigned long long once = 0, twice = 0;
	for (int i = 0; i < n; i++)
		if (w[i] >= 'a' && w[i] <= 'z') {
			unsigned long long bit = 1ull << (w[i] - 'a');
			twice |= once & bit;
			once |= bit;
		}
	return once | twice << 26;
}

static int load_vocab(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT term, df, cf FROM vocab", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read vocabulary: %s", sqlite3_errmsg(e->db));
	int cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (atlas_grow(&e->vocab, &cap, e->nvocab, sizeof(*e->vocab), 4096)) {
			sqlite3_finalize(st);
			return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading vocabulary");
		}
		vocab_entry *v = &e->vocab[e->nvocab++];
		v->term = dup_col(e, st, 0);
		v->len = (int)strlen(v->term);
		v->df = sqlite3_column_int(st, 1);
		v->cf = sqlite3_column_int(st, 2);
		v->alpha = 1;
		for (int i = 0; i < v->len; i++)
			if (!islower((unsigned char)v->term[i]) &&
			    !(i > 0 && i < v->len - 1 && strchr("_.-/:", v->term[i])))
				v->alpha = 0;
	}
	sqlite3_finalize(st);
	qsort(e->vocab, (size_t)e->nvocab, sizeof(vocab_entry), cmp_vocab);
	for (int i = 0; i < e->nvocab; i++)
		strmap_put(&e->vocab_index, e->vocab[i].term, (size_t)e->vocab[i].len, i, NULL);
	/* words of letters only (identifiers of them too), grouped by length, for spelling correction */
	e->by_len = malloc((size_t)(e->nvocab ? e->nvocab : 1) * sizeof(int));
	e->by_len_letters = malloc((size_t)(e->nvocab ? e->nvocab : 1) * sizeof(*e->by_len_letters));
	if (!e->by_len || !e->by_len_letters)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading vocabulary");
	int count[VOCAB_MAX_LEN + 2] = { 0 };
	for (int i = 0; i < e->nvocab; i++)
		if (e->vocab[i].alpha && e->vocab[i].len <= VOCAB_MAX_LEN)
			count[e->vocab[i].len]++;
	e->by_len_start[0] = 0;
	for (int l = 0; l <= VOCAB_MAX_LEN; l++)
		e->by_len_start[l + 1] = e->by_len_start[l] + count[l];
	int fill[VOCAB_MAX_LEN + 1];
	memcpy(fill, e->by_len_start, sizeof(fill));
	for (int i = 0; i < e->nvocab; i++)
		if (e->vocab[i].alpha && e->vocab[i].len <= VOCAB_MAX_LEN) {
			int j = fill[e->vocab[i].len]++;
			e->by_len[j] = i;
			e->by_len_letters[j] = letter_set(e->vocab[i].term, e->vocab[i].len);
		}
	return 0;
}

static int load_synonyms(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT grp, term FROM synonyms ORDER BY grp, rowid", -1, &st,
			       NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read synonyms: %s", sqlite3_errmsg(e->db));
	int cap = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (atlas_grow(&e->syn, &cap, e->nsyn, sizeof(*e->syn), 256)) {
			sqlite3_finalize(st);
			return atlas_error_set(err, ATLAS_ENOMEM, "out of memory loading synonyms");
		}
		syn_term *s = &e->syn[e->nsyn];
		s->group = sqlite3_column_int(st, 0);
		s->text = dup_col(e, st, 1);
		/* keyed by its folded words, by those words with joiners as spaces, and by stems */
		strbuf k = STRBUF_INIT;
		engine_normalize(e, &k, s->text, false);
		strmap_put(&e->syn_index, strbuf_str(&k), k.len, e->nsyn, NULL);
		s->words = 1;
		for (size_t i = 0; i < k.len; i++)
			s->words += k.buf[i] == ' ';
		char *spaced = strdup(s->text);
		for (char *c = spaced; c && *c; c++)
			if (strchr("-_./:", *c))
				*c = ' ';
		strbuf_reset(&k);
		if (spaced)
			engine_normalize(e, &k, spaced, false);
		strmap_put(&e->syn_index, strbuf_str(&k), k.len, e->nsyn, NULL);
		strbuf_reset(&k);
		if (spaced)
			engine_normalize(e, &k, spaced, true);
		strmap_put(&e->syn_stem_index, strbuf_str(&k), k.len, e->nsyn, NULL);
		free(spaced);
		strbuf_free(&k);
		e->nsyn++;
	}
	sqlite3_finalize(st);
	return 0;
}

static int load_meta(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(e->db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "read meta: %s", sqlite3_errmsg(e->db));
	while (sqlite3_step(st) == SQLITE_ROW && e->nmeta < (int)(sizeof(e->meta) / sizeof(e->meta[0]))) {
		e->meta[e->nmeta].key = dup_col(e, st, 0);
		e->meta[e->nmeta].value = dup_col(e, st, 1);
		e->nmeta++;
	}
	sqlite3_finalize(st);
	return 0;
}

static int prepare_all(atlas_engine *e, atlas_error *err)
{
	struct {
		sqlite3_stmt **st;
		const char *sql;
	} all[] = {
		/* no ORDER BY: each row's matches are read from the match record as it is returned */
		{ &e->st_match, "SELECT rowid, atlas_rank(fts) FROM fts WHERE fts MATCH ?1" },
		/* the same over the important fields alone (titles, keywords, headings, descriptions) */
		{ &e->st_match_fields, "SELECT rowid, atlas_rank(fields) FROM fields WHERE fields MATCH ?1" },
		/* the pages of an expression over whole pages, unscored */
		{ &e->st_match_rows, "SELECT rowid FROM fts WHERE fts MATCH ?1" },
		/* the same over the titles alone (one column, the fts table's first) */
		{ &e->st_match_titles, "SELECT rowid, atlas_rank(titles) FROM titles WHERE titles MATCH ?1" },
		{ &e->st_stem_df, "SELECT df FROM stems WHERE stem = ?1" },
		{ &e->st_explain,
		  "SELECT -bm25(fts, 1, 0, 0, 0, 0, 0), -bm25(fts, 0, 1, 0, 0, 0, 0),"
		  " -bm25(fts, 0, 0, 1, 0, 0, 0), -bm25(fts, 0, 0, 0, 1, 0, 0),"
		  " -bm25(fts, 0, 0, 0, 0, 1, 0), -bm25(fts, 0, 0, 0, 0, 0, 1) FROM fts"
		  " WHERE fts MATCH ?1 AND rowid = ?2" },
		/* one page's matches, when the candidate pass could not keep them */
		{ &e->st_record, "SELECT atlas_rank(fts) FROM fts WHERE fts MATCH ?1 AND rowid = ?2" },
		{ &e->st_section_text, "SELECT heading, anchor, body FROM sections WHERE id = ?1" },
	};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (sqlite3_prepare_v3(e->db, all[i].sql, -1, SQLITE_PREPARE_PERSISTENT, all[i].st, NULL) !=
		    SQLITE_OK)
			return atlas_error_set(err, ATLAS_ESQL, "prepare: %s", sqlite3_errmsg(e->db));
	return 0;
}

/* Opens read next over e's index (next.h), handing it the connection and the pages. Returns 0, or
 * ATLAS_ESQL or ATLAS_ENOMEM with err set. */
static int open_next(atlas_engine *e, atlas_error *err)
{
	next_index ix = { e->db, e->docs, e->ndocs, e->in_memory };
	return next_state_open(&e->next, &ix, err);
}

next_state *engine_next(const atlas_engine *e)
{
	return e->next;
}

/* A cut-short file can still open and answer from its first pages: its size must be what its
 * header says (page count x page size). */
static int check_size(sqlite3 *db, const char *path, atlas_error *err)
{
	sqlite3_int64 pages = -1, size = -1;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
			       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		pages = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	struct stat sb;
	if (stat(path, &sb) == 0)
		size = (sqlite3_int64)sb.st_size;
	if (pages < 0 || size != pages)
		return atlas_error_set(err, ATLAS_ESCHEMA, "%s: index is %lld bytes but should be %lld: cut short or damaged",
				       path, (long long)size, (long long)pages);
	return 0;
}

int atlas_engine_verify(atlas_engine *e, atlas_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(e->db, "PRAGMA quick_check", -1, &st, NULL);
	const char *res = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	if (!res || strcmp(res, "ok") != 0)
		rc = atlas_error_set(err, ATLAS_ESCHEMA, "index fails its check: %s", res ? res : sqlite3_errmsg(e->db));
	else
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int atlas_engine_open(atlas_engine **out, const char *path, atlas_error *err)
{
	*out = NULL;
	atlas_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	e->strings = (atlas_arena)ATLAS_ARENA_INIT(ENGINE_ARENA_BLOCK);
	e->path_index.arena = e->topic_index.arena = e->vocab_index.arena = e->syn_index.arena = e->syn_stem_index.arena = &e->strings;
	/* a URI with immutable=1: the index never changes in place (it is replaced by rename) */
	strbuf uri = STRBUF_INIT;
	strbuf_puts(&uri, "file:");
	for (const char *c = path; *c; c++) {
		if (*c == '?' || *c == '#' || *c == '%')
			strbuf_printf(&uri, "%%%02X", (unsigned char)*c);
		else
			strbuf_putc(&uri, *c);
	}
	strbuf_puts(&uri, "?immutable=1");
	int rc = 0;
	FILE *f = fopen(path, "rb");
	if (!f) {
		rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot open index: no such file or not readable", path);
		goto fail;
	}
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    sb.st_size <= ATLAS_ENGINE_MEMORY_MAX) {
		/* a copy in memory: whatever later happens to the file (replaced, deleted, truncated or
		 * overwritten in place by mistake), this engine answers from the build it opened; the
		 * copy is shared by every engine opened on the same file */
		e->image = image_acquire(f, &sb);
		fclose(f);
		if (!e->image) {
			rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot read index", path);
			goto fail;
		}
		sqlite3_int64 size = (sqlite3_int64)sb.st_size;
		if (sqlite3_open_v2(":memory:", &e->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
			    SQLITE_OK ||
		    sqlite3_deserialize(e->db, "main", e->image->bytes, size, size, SQLITE_DESERIALIZE_READONLY) !=
			    SQLITE_OK) {
			rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot open index: %s", path,
					     e->db ? sqlite3_errmsg(e->db) : "out of memory");
			goto fail;
		}
		e->in_memory = true;
		/* pages read in place from the copy, not copied again into this connection's cache */
		char pragma[64];
		snprintf(pragma, sizeof(pragma), "PRAGMA mmap_size=%lld", (long long)size);
		sqlite3_exec(e->db, pragma, NULL, NULL, NULL);
	} else {
		fclose(f);
		if (sqlite3_open_v2(strbuf_str(&uri), &e->db,
				    SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
			rc = atlas_error_set(err, ATLAS_EIO, "%s: cannot open index: %s", path,
					     e->db ? sqlite3_errmsg(e->db) : "out of memory");
			goto fail;
		}
		/* no memory mapping: a file truncated in place by mistake must give read errors, not
		 * SIGBUS */
		sqlite3_exec(e->db, "PRAGMA mmap_size=0", NULL, NULL, NULL);
	}
	rc = atlas_schema_check(e->db, err);
	if (!rc)
		rc = check_size(e->db, path, err);
	if (rc) {
		char why[sizeof(err->msg)];
		snprintf(why, sizeof(why), "%s", err ? err->msg : "");
		atlas_error_set(err, rc, "%s: %s", path, why);
		goto fail;
	}
	if ((rc = atlas_analyzer_register(e->db, err)) || (rc = atlas_analyzer_new(&e->analyzer, e->db, err)))
		goto fail;
	e->rec.limit = RANK_RECORD_MAX;
	if (fts_functions_register(e->db, &e->rec)) {
		rc = atlas_error_set(err, ATLAS_ESQL, "cannot register the ranking function");
		goto fail;
	}
	if ((rc = load_meta(e, err)) || (rc = load_docs(e, err)) || (rc = load_topic_pages(e, err)) ||
	    (rc = link_top_topics(e, err)) ||
	    (rc = index_titles(e, err)) ||
	    (rc = load_sections(e, err)) || (rc = load_dictionaries(e, err)) ||
	    (rc = load_section_texts(e, path, err)) ||
	    (rc = load_col_sizes(e, err)) || (rc = load_vocab(e, err)) ||
	    (rc = load_synonyms(e, err)) || (rc = prepare_all(e, err)) || (rc = open_next(e, err)))
		goto fail;
	/* one read transaction for the engine's life: the index never changes under it (a new index
	 * is a new file), and no statement then takes and drops a lock of its own */
	if (sqlite3_exec(e->db, "BEGIN; SELECT count(*) FROM meta", NULL, NULL, NULL) != SQLITE_OK) {
		rc = atlas_error_set(err, ATLAS_ESQL, "%s: cannot read: %s", path, sqlite3_errmsg(e->db));
		goto fail;
	}
	e->mark = calloc((size_t)e->ndocs + 1, sizeof(*e->mark));
	e->excluded = calloc((size_t)e->ndocs + 1, sizeof(*e->excluded));
	e->cand = calloc((size_t)e->ndocs + 1, sizeof(*e->cand));
	e->touched = malloc(((size_t)e->ndocs + 1) * sizeof(*e->touched));
	if (!e->mark || !e->excluded || !e->cand || !e->touched) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto fail;
	}
	strbuf_free(&uri);
	*out = e;
	return 0;
fail:
	strbuf_free(&uri);
	atlas_engine_free(e);
	return rc ? rc : ATLAS_ESQL;
}

int atlas_engine_read_postings_table(atlas_engine *e, atlas_error *err)
{
	if (e->blockmax || !e->rec.sizes)
		return 0;
	return blockmax_new(&e->blockmax, e->db, e->rec.sizes, e->rec.avg, e->ndocs, err);
}

int atlas_engine_hold_postings(atlas_engine *e, atlas_error *err)
{
	index_image *im = e->image;
	if (e->postings || !im || !e->rec.sizes)
		return 0;
	/* every token has a position (colocated forms add more): a larger index is not even counted */
	long long tokens = 0;
	for (long long i = 0; i < (long long)e->ndocs * FTS_NCOLS; i++)
		tokens += e->rec.sizes[i];
	if (tokens > POSTINGS_MAX)
		return 0;
	const atlas_postings *p = NULL;
	int rc = image_postings(im, e->db, e->ndocs, &p, err);
	if (rc || !p)
		return rc;
	if (postings_query_new(&e->postings, p))
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory holding the postings");
	return 0;
}

void atlas_engine_free(atlas_engine *e)
{
	if (!e)
		return;
	postings_query_free(e->postings);
	blockmax_free(e->blockmax);
	blockmax_free(e->filter_blocks);
	for (int t = 0; t < ATLAS_TYPE_COUNT; t++)
		free(e->type_pages[t]);
	free(e->allowed);
	for (int t = 0; t < e->ntopic_sets; t++) {
		free(e->topic_sets[t].topic);
		free(e->topic_sets[t].pages);
	}
	free(e->top_count);
	free(e->facet_type);
	free(e->facet_bits);
	sqlite3_finalize(e->st_match);
	sqlite3_finalize(e->st_stem_df);
	sqlite3_finalize(e->st_match_fields);
	sqlite3_finalize(e->st_match_titles);
	sqlite3_finalize(e->st_match_rows);
	sqlite3_finalize(e->st_explain);
	sqlite3_finalize(e->st_record);
	sqlite3_finalize(e->st_section_text);
	next_state_free(e->next);
	atlas_analyzer_free(e->analyzer);
	if (e->db)
		sqlite3_close(e->db);
	image_release(e->image); /* after the connection that reads it is gone */
	free(e->docs);
	free(e->title_index);
	free(e->title_words_buf);
	free(e->vocab);
	free(e->by_len);
	free(e->by_len_letters);
	free(e->syn);
	strmap_free(&e->path_index);
	strmap_free(&e->topic_index);
	strmap_free(&e->vocab_index);
	strmap_free(&e->syn_index);
	strmap_free(&e->syn_stem_index);
	atlas_arena_free(&e->strings);
	free(e->mark);
	free(e->excluded);
	free(e->cand);
	free(e->touched);
	free(e->sections);
	atlas_decompressor_free(e->body_z);
	strbuf_free(&e->body_buf);
	strbuf_free(&e->anchor_buf);
	atlas_span_list_free(&e->row_spans);
	free(e->col_sizes);
	match_record_free(&e->rec);
	free(e);
}

const atlas_doc *atlas_engine_doc(const atlas_engine *e, int i)
{
	return i >= 0 && i < e->ndocs ? &e->docs[i] : NULL;
}

int atlas_engine_ndocs(const atlas_engine *e)
{
	return e->ndocs;
}

int atlas_engine_vocab_size(const atlas_engine *e)
{
	return e->nvocab;
}

const char *atlas_engine_meta(const atlas_engine *e, const char *key)
{
	for (int i = 0; i < e->nmeta; i++)
		if (strcmp(e->meta[i].key, key) == 0)
			return e->meta[i].value;
	return NULL;
}

int atlas_engine_topic_page(const atlas_engine *e, const char *topic)
{
	int *i = topic ? strmap_get(&e->topic_index, topic) : NULL;
	return i ? *i : -1;
}

int atlas_engine_find(const atlas_engine *e, const char *path)
{
	if (!path)
		return -1;
	int *i = strmap_get(&e->path_index, path);
	return i ? *i : -1;
}

const char *atlas_engine_resolve(const atlas_engine *e, const char *in, char *buf, size_t cap)
{
	if (!in || atlas_engine_find(e, in) >= 0 || cap < 3)
		return in;
	const char *s = in;
	/* an absolute URL: the scheme and host (their case does not matter) left out */
	const char *colon = strstr(s, "://");
	if (colon) {
		bool scheme = colon > s;
		for (const char *c = s; c < colon && scheme; c++)
			scheme = isalpha((unsigned char)*c) || *c == '+' || *c == '-' || *c == '.';
		if (scheme) {
			const char *slash = strchr(colon + 3, '/');
			s = slash ? slash : "/";
		}
	}
	size_t n = strcspn(s, "?#");
	if (n + 2 > cap)
		return in;
	size_t o = 0;
	if (s[0] != '/')
		buf[o++] = '/';
	memcpy(buf + o, s, n);
	o += n;
	buf[o] = '\0';
	static const char *const index_names[] = { "index.html", "index.htm" };
	for (int k = 0; k < 2; k++) {
		size_t l = strlen(index_names[k]);
		if (o > l && strcmp(buf + o - l, index_names[k]) == 0 && buf[o - l - 1] == '/') {
			o -= l;
			buf[o] = '\0';
			break;
		}
	}
	while (o > 1 && buf[o - 1] == '/')
		buf[--o] = '\0';
	if (atlas_engine_find(e, buf) >= 0)
		return buf;
	if (o + 2 <= cap && o > 1) {
		buf[o] = '/';
		buf[o + 1] = '\0';
		if (atlas_engine_find(e, buf) >= 0)
			return buf;
	}
	return in;
}

int vocab_df(const atlas_engine *e, const char *w, size_t n)
{
	int *i = strmap_getn(&e->vocab_index, w, n);
	return i ? e->vocab[*i].df : 0;
}

int vocab_cf(const atlas_engine *e, const char *w, size_t n)
{
	int *i = strmap_getn(&e->vocab_index, w, n);
	return i ? e->vocab[*i].cf : 0;
}
