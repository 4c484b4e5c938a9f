/* snippet.c - the hits' best-matching sections, their snippets and marked titles, from the
 * matches atlas_rank recorded. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "postings.h"
#include "rank.h"
#include "error.h"
#include "grow.h"
#include "search_internal.h"

/* A match inside one section: the token index in the section's heading or body part (see the
 * sections table in common/schema.c) and the phrase. */
typedef struct sec_match {
	int idx;
	int phrase;
} sec_match;

/* Where a match at position off of fts column col of page d falls: the section (its index in
 * e->sections), whether in the heading part, and the token index in that part. Returns false for
 * the keywords column and for positions no section holds. */
bool locate_match(const atlas_engine *e, const atlas_doc *d, int col, int off, int *sec, bool *head,
		  int *idx)
{
	int first = d->first_section - 1, last = d->last_section - 1;
	const section_info *lead = &e->sections[first];
	if (col == 0 || col == 3) {
		/* the title is the lead's heading; the description starts the lead's body */
		*sec = first;
		*head = col == 0;
		*idx = off;
		return off >= 0 && off < (col == 0 ? lead->nhead : lead->nlead);
	}
	if (col != 2 && col != 4)
		return false;
	/* the last section starting at or before off, in the column's order */
	int lo = col == 2 ? first + 1 : first, hi = last;
	if (lo > hi)
		return false;
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;
		int pos = col == 2 ? e->sections[mid].head_pos : e->sections[mid].body_pos;
		if (pos <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	const section_info *x = &e->sections[lo];
	int from = col == 2 ? x->head_pos : x->body_pos, n = col == 2 ? x->nhead : x->nbody;
	if (off < from || off >= from + n)
		return false;
	*sec = lo;
	*head = col == 2;
	*idx = col == 2 ? off - from : x->nlead + off - from;
	return true;
}

/* The window of width tokens (of nsp) to show around the matches m[0..nm) (sorted by token): when
 * whole, from the first token; else the one holding the most distinct phrases, from two tokens
 * before its first match. Sets [*from, *to). */
static void snippet_window(const sec_match *m, int nm, int nsp, int width, bool whole, int *from, int *to)
{
	int best = -1;
	*from = 0;
	/* m is in token order, so each window's first match is at or after the one before's: lo */
	for (int i = 0, lo = 0; i < nm && !whole; i++) {
		int f = m[i].idx > 2 ? m[i].idx - 2 : 0;
		sqlite3_int64 seen = 0;
		int score = 0;
		while (lo < nm && m[lo].idx < f)
			lo++;
		for (int k = lo; k < nm; k++) {
			if (m[k].idx >= f + width)
				break;
			sqlite3_int64 bit = (sqlite3_int64)1 << (m[k].phrase % 63);
			if (!(seen & bit)) {
				seen |= bit;
				score++;
			}
		}
		if (score > best) {
			best = score;
			*from = f;
		}
	}
	*to = *from + width < nsp ? *from + width : nsp;
}

/* The words of a search's one-word phrases, by phrase: the folded word (as the reader wrote it,
 * or a correction, synonym or completion) and its stem, for marking a compound whole (see
 * compound_tokens). */
typedef struct phrase_words {
	atlas_analyzer *analyzer;
	const char *w[FTS_MAX_PHRASES];
	int len[FTS_MAX_PHRASES];
	char stem[FTS_MAX_PHRASES][64];
} phrase_words;

/* Sets pw from the plan's relaxed expression: a phrase's word is its alternative's text between
 * the quotes; a phrase of several words, a prefix or a quote within has none (NULL). */
static void find_phrase_words(phrase_words *pw, atlas_analyzer *a, const plan *pl)
{
	memset(pw->w, 0, sizeof(pw->w));
	pw->analyzer = a;
	for (int p = 0; p < pl->nphrases && p < MAX_PHRASES && p < FTS_MAX_PHRASES; p++) {
		int t = pl->phrase_term[p];
		if (t < 0 || t >= pl->nterms)
			continue;
		/* the term's alternatives are its phrases, in order */
		sqlite3_int64 below = pl->term_phrases[t] & (((sqlite3_int64)1 << p) - 1);
		int k = __builtin_popcountll((unsigned long long)below);
		if (k >= pl->terms[t].nalts)
			continue;
		const char *q = pl->terms[t].alts[k];
		if (q[0] != '"')
			continue;
		const char *end = strchr(q + 1, '"');
		int len = end ? (int)(end - q - 1) : 0;
		if (len < 2 || len >= (int)sizeof(pw->stem[0]) || memchr(q + 1, ' ', (size_t)len) || end[1])
			continue;
		pw->w[p] = q + 1;
		pw->len[p] = len;
		atlas_stem(a, q + 1, len, pw->stem[p], (int)sizeof(pw->stem[p]));
	}
}

/* Whether c joins the parts of an identifier (as the analyzer's joiners do). */
static bool is_joiner(char c)
{
	return c == '_' || c == '.' || c == '-' || c == '/' || c == ':';
}

/* The tokens after token k of the window w[0..n) that a match of phrase p at k covers too: a
 * compound ("fileset" for "FileSet", "junit" for "JUnit", "shard_map") is held at the position of
 * its first part, and a match of it goes on over the parts it joins. The parts that follow with
 * at most two joiners between are taken while their compound, ASCII letters lowered, is the
 * phrase's word (with joiners) or stems as it does (without). Returns 0 for a match of the part
 * alone. */
static int compound_tokens(phrase_words *pw, const char *text, const atlas_span *w, int n, int k, int p)
{
	char comp[64], stem[64];
	for (int extra = 1; k + extra < n && extra < ATLAS_MAX_COMPOUND_PARTS; extra++) {
		int gap = w[k + extra].start - w[k + extra - 1].end, len = w[k + extra].end - w[k].start;
		if (gap < 0 || gap > 2 || len >= (int)sizeof(comp))
			return 0;
		for (int i = 0; i < gap; i++)
			if (!is_joiner(text[w[k + extra - 1].end + i]))
				return 0;
		bool joined = false;
		for (int i = 0; i < len; i++) {
			comp[i] = (char)tolower((unsigned char)text[w[k].start + i]);
			joined |= is_joiner(comp[i]);
		}
		if (len == pw->len[p] && memcmp(comp, pw->w[p], (size_t)len) == 0)
			return extra;
		if (!joined) {
			int slen = atlas_stem(pw->analyzer, comp, len, stem, (int)sizeof(stem));
			if (strlen(pw->stem[p]) == (size_t)slen && memcmp(stem, pw->stem[p], (size_t)slen) == 0)
				return extra;
		}
	}
	return 0;
}

/* Makes each run of spaces in sb from byte from on one space: a code block's indentation and
 * line breaks (spaces once rendered) read as one in a line of text. */
static void collapse_spaces(strbuf *sb, size_t from)
{
	if (sb->oom || !sb->buf)
		return;
	size_t o = from;
	for (size_t i = from; i < sb->len; i++)
		if (sb->buf[i] != ' ' || o == from || sb->buf[o - 1] != ' ')
			sb->buf[o++] = sb->buf[i];
	sb->len = o;
	sb->buf[o] = '\0';
}

/* Appends to sb, as HTML, the tokens [from, to) of the nsp tokens of text (sp: the spans of the
 * tokens from first on, offsets into text, which holds those tokens) with the matches m[0..nm) in
 * <mark> (a compound's over its parts, with pw; NULL: token by token) and "…" where the text is
 * cut; when whole, the text around the tokens too (first must then be 0); runs of spaces as one.
 * Returns false, writing nothing, when there is nothing to show or the spans do not fit the text. */
static bool render_snippet(strbuf *sb, const char *text, int ntext, const atlas_span *sp, int first, int nsp,
			   int from, int to, const sec_match *m, int nm, const match_record *rec,
			   phrase_words *pw, bool whole)
{
	if (from >= to || to > nsp || to - from > 64 || from < first || (whole && first))
		return false;
	const atlas_span *w = sp + (from - first); /* the window's spans */
	int n = to - from;
	for (int k = 0; k < n; k++)
		if (w[k].start < 0 || w[k].end > ntext || w[k].start > w[k].end ||
		    (k > 0 && w[k].start < w[k - 1].start))
			return false;
	unsigned char hit[64] = { 0 };
	for (int i = 0; i < nm; i++) {
		int size = m[i].phrase < FTS_MAX_PHRASES ? rec->phrase_size[m[i].phrase] : 1;
		int k0 = m[i].idx - from;
		if (size <= 1 && pw && k0 >= 0 && k0 < n && m[i].phrase >= 0 && m[i].phrase < FTS_MAX_PHRASES &&
		    pw->w[m[i].phrase])
			size = 1 + compound_tokens(pw, text, w, n, k0, m[i].phrase);
		for (int j = 0; j < (size > 0 ? size : 1); j++) {
			int k = k0 + j;
			if (k >= 0 && k < n && (j == 0 || !hit[k]))
				hit[k] = j == 0 ? 1 : 2;
		}
	}
	int cursor = whole ? 0 : w[0].start;
	size_t start = sb->len;
	if (from > 0)
		strbuf_puts(sb, "…");
	bool open = false;
	for (int k = 0; k < n; k++) {
		const atlas_span *s = &w[k];
		if (!open && (hit[k] == 1 || (hit[k] == 2 && (k == 0 || !hit[k - 1]))) && s->start >= cursor) {
			strbuf_append_html(sb, text + cursor, (size_t)(s->start - cursor));
			strbuf_puts(sb, "<mark>");
			cursor = s->start;
			open = true;
		}
		if (open && (k + 1 == n || hit[k + 1] != 2)) {
			if (s->end > cursor) {
				strbuf_append_html(sb, text + cursor, (size_t)(s->end - cursor));
				cursor = s->end;
			}
			strbuf_puts(sb, "</mark>");
			open = false;
		}
	}
	int stop = whole && to == nsp ? ntext : w[n - 1].end;
	if (stop > cursor)
		strbuf_append_html(sb, text + cursor, (size_t)(stop - cursor));
	if (to < nsp)
		strbuf_puts(sb, "…");
	collapse_spaces(sb, start);
	return true;
}

void ensure_recorded(atlas_engine *e, int d, const plan *pl)
{
	candidate *c = &e->cand[d];
	if (c->inst_n >= 0)
		return;
	c->inst_n = 0;
	int limit = e->rec.limit;
	e->rec.limit = e->rec.ninst + RANK_RECORD_MAX; /* one page always fits */
	/* the held postings give the same record as FTS5, without a search of the index */
	if (e->postings && e->held_plan == pl && postings_record(e->postings, &e->rec, e->docs[d].id) == 0) {
		if (e->rec.row_n >= 0) {
			c->inst_start = e->rec.row_start;
			c->inst_n = e->rec.row_n;
		}
		e->rec.limit = limit;
		return;
	}
	sqlite3_stmt *st = e->st_record;
	sqlite3_bind_text(st, 1, strbuf_str(&pl->relaxed), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, e->docs[d].id);
	if (sqlite3_step(st) == SQLITE_ROW && e->rec.row_n >= 0) {
		c->inst_start = e->rec.row_start;
		c->inst_n = e->rec.row_n;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	e->rec.limit = limit;
}

typedef struct sec_score {
	int sec;
	double score;
} sec_score;

static int cmp_sec_score(const void *a, const void *b)
{
	const sec_score *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return (x->sec > y->sec) - (x->sec < y->sec);
}

/* A recorded match placed in its page: the section (index among the page's sections), the token
 * index in the section's spans (heading tokens first, then body tokens) and the phrase. */
typedef struct placed {
	int sec, idx, phrase;
} placed;

/* Orders a section's matches by token (heading ones first: their indexes are negative), then phrase. */
static int cmp_placed(const void *a, const void *b)
{
	const placed *x = a, *y = b;
	if (x->idx != y->idx)
		return (x->idx > y->idx) - (x->idx < y->idx);
	return (x->phrase > y->phrase) - (x->phrase < y->phrase);
}

/* Sorts the n matches of one section with cmp_placed: by insertion when few, the common case. */
static void sort_placed(placed *a, int n)
{
	if (n > 24) {
		qsort(a, (size_t)n, sizeof(*a), cmp_placed);
		return;
	}
	for (int i = 1; i < n; i++) {
		placed v = a[i];
		int j = i;
		while (j > 0 && cmp_placed(&a[j - 1], &v) > 0) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

/* Per-query scratch of fill_sections, grown as needed. */
typedef struct sections_scratch {
	sec_score *scores;
	int *head, *body, *touched;
	uint64_t *fit; /* per section, the positions of its heading (the first 64) a match is at */
	int cap;
	placed *pm;
	int pcap;
	placed *sm; /* the matches of the section being shown */
	int smcap;
	sec_match *m;
	int mcap;
	atlas_span *sp;
	int spcap;
	strbuf sn, hb; /* the snippet and the heading being written, copied into the results */
} sections_scratch;

/* Grows *buf (of *cap elements of size sz) to hold n. Returns 0, or ATLAS_ENOMEM leaving it as it
 * was. */
static int grow(void **buf, int *cap, int n, size_t sz)
{
	if (n < 1)
		n = 1; /* a buffer, even for nothing: no arithmetic on a null pointer */
	if (n <= *cap)
		return 0;
	int c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	if (atlas_resize(buf, (size_t)c, sz))
		return ATLAS_ENOMEM;
	*cap = c;
	return 0;
}

/* Grows the per-section arrays of x to hold n sections. Returns 0 or ATLAS_ENOMEM. */
static int grow_sections(sections_scratch *x, int n)
{
	if (n <= x->cap)
		return 0;
	int bad = atlas_resize(&x->scores, (size_t)n, sizeof(*x->scores));
	bad |= atlas_resize(&x->head, (size_t)n, sizeof(int));
	bad |= atlas_resize(&x->body, (size_t)n, sizeof(int));
	bad |= atlas_resize(&x->touched, (size_t)n, sizeof(int));
	bad |= atlas_resize(&x->fit, (size_t)n, sizeof(uint64_t));
	if (bad)
		return ATLAS_ENOMEM;
	x->cap = n;
	return 0;
}

/* Scores the sections of page d (ns of them, secs[0..ns)) into x->scores, best first, from its
 * matches x->pm[0..np) in record order (phrase after phrase; size: each phrase's tokens); a
 * section's score is RANK_SEC_WHOLE times more when its matches are every word of its heading
 * (the heading "gnutls_handshake ()" before "gnutls_handshake_set_hook_function ()" for
 * gnutls_handshake). */
static void score_sections(sections_scratch *x, const section_info *secs, int ns, const placed *pm, int np,
			   const double *w, const int *size)
{
	for (int s = 0; s < ns; s++) {
		x->scores[s] = (sec_score){ s, 0.0 };
		x->head[s] = x->body[s] = 0;
		x->fit[s] = 0;
	}
	for (int i = 0; i < np;) {
		int phrase = pm[i].phrase, ntouched = 0;
		for (; i < np && pm[i].phrase == phrase; i++) {
			int s = pm[i].sec;
			if (!x->head[s] && !x->body[s])
				x->touched[ntouched++] = s;
			if (pm[i].idx < 0) {
				/* the heading's positions the phrase covers */
				int at = pm[i].idx + secs[s].nhead;
				int n = phrase < FTS_MAX_PHRASES && size[phrase] > 1 ? size[phrase] : 1;
				x->head[s] = 1;
				for (int k = at; k >= 0 && k < at + n && k < 64; k++)
					x->fit[s] |= 1ULL << k;
			} else {
				x->body[s]++;
			}
		}
		double wp = phrase < FTS_MAX_PHRASES ? w[phrase] : 1.0;
		for (int k = 0; k < ntouched; k++) {
			int s = x->touched[k];
			int reps = x->body[s] > RANK_SEC_REPEATS ? RANK_SEC_REPEATS : x->body[s];
			x->scores[s].score += wp * (x->head[s] ? RANK_SEC_HEADING : 1.0) + wp * RANK_SEC_REPEAT * reps;
			x->head[s] = x->body[s] = 0;
		}
	}
	for (int s = 0; s < ns; s++)
		if (x->fit[s] && secs[s].nhead > 0 && secs[s].nhead <= 64 &&
		    __builtin_popcountll(x->fit[s]) == secs[s].nhead)
			x->scores[s].score *= RANK_SEC_WHOLE;
	if (ns > 32) {
		qsort(x->scores, (size_t)ns, sizeof(*x->scores), cmp_sec_score);
		return;
	}
	/* a page's sections are few: sorted by insertion */
	for (int i = 1; i < ns; i++) {
		sec_score v = x->scores[i];
		int j = i;
		for (; j > 0 && cmp_sec_score(&x->scores[j - 1], &v) > 0; j--)
			x->scores[j] = x->scores[j - 1];
		x->scores[j] = v;
	}
}

/* The stored text of section sec (an index in e->sections), with the spans of its heading and of
 * at least its body tokens [from, to) (none when to is 0): the engine's copy when it holds one,
 * else what engine_section_row reads of the row, valid until st_section_text is reset (the caller
 * resets it either way) and the next row is read. Returns false when the row cannot be read. */
static bool section_row(atlas_engine *e, int sec, int from, int to, section_text *out)
{
	if (e->texts) {
		*out = e->texts[sec];
		return true;
	}
	return engine_section_row(e, sec, from, to, out) == 0;
}

/* Sets hit->title_html to the title with its matches (the lead section's heading matches among
 * x->pm[0..np)) in <mark>, in res->text; leaves it as it is when the title holds none or its text
 * cannot be read. Uses x->m and x->hb as scratch. */
static void mark_title(atlas_engine *e, atlas_results *res, atlas_hit *hit, sections_scratch *x, int np,
		       phrase_words *pw)
{
	const atlas_doc *d = &e->docs[hit->doc];
	int sec = d->first_section - 1;
	const section_info *si = &e->sections[sec];
	int nm = 0;
	if (si->nhead < 1 || grow((void **)&x->m, &x->mcap, np, sizeof(*x->m)))
		return;
	for (int i = 0; i < np; i++)
		if (x->pm[i].sec == 0 && x->pm[i].idx < 0)
			x->m[nm++] = (sec_match){ x->pm[i].idx + si->nhead, x->pm[i].phrase };
	if (nm == 0)
		return;
	/* by token, as render_snippet wants them (a title holds a few) */
	for (int i = 1; i < nm; i++)
		for (int k = i; k > 0 && x->m[k].idx < x->m[k - 1].idx; k--) {
			sec_match t = x->m[k];
			x->m[k] = x->m[k - 1];
			x->m[k - 1] = t;
		}
	section_text row;
	strbuf_reset(&x->hb);
	if (section_row(e, sec, 0, 0, &row) && row.decoded && row.heading &&
	    render_snippet(&x->hb, row.heading, row.nheading, row.decoded, 0, si->nhead, 0, si->nhead, x->m, nm,
			   &e->rec, pw, true) &&
	    !x->hb.oom) {
		char *t = atlas_arena_strndup(&res->text, strbuf_str(&x->hb), x->hb.len);
		if (t)
			hit->title_html = t;
	}
	if (!e->texts)
		sqlite3_reset(e->st_section_text);
}

/* Best-matching sections of every hit on the page, from the matches the candidate pass recorded:
 * each section scored by the phrases it holds (the phrase's IDF, a completion of the word being
 * typed RANK_SEC_COMPLETION of it at most the word's; RANK_SEC_HEADING times in the heading,
 * RANK_SEC_REPEAT more for each of up to RANK_SEC_REPEATS repeats in the body), text read
 * and highlighted only for the best SECTION_KEEP. The hit's snippet is the first of those with a
 * match in its body; a hit that has none shows its description. */
void fill_sections(atlas_engine *e, atlas_results *res, const plan *pl)
{
	atlas_hit *hits = res->hits;
	int nhits = res->nhits;
	double w[FTS_MAX_PHRASES];
	for (int p = 0; p < FTS_MAX_PHRASES; p++)
		w[p] = 1.0;
	for (int i = 0, p = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		for (int k = 0; k < t->nalts && p < FTS_MAX_PHRASES; k++)
			w[p++] = t->alt_idf[k];
	}
	/* a completion of the word being typed weighs a part of the word itself (a longer word is
	 * rarer, but the reader typed this one) */
	double typed = pl->complete_to > pl->complete_from && pl->word_from < FTS_MAX_PHRASES ? w[pl->word_from] : 0;
	for (int p = pl->complete_from; p < pl->complete_to && p < FTS_MAX_PHRASES; p++)
		w[p] = RANK_SEC_COMPLETION * (w[p] < typed ? w[p] : typed);
	phrase_words pw;
	find_phrase_words(&pw, e->analyzer, pl);
	sections_scratch x;
	memset(&x, 0, sizeof(x));
	for (int h = 0; h < nhits; h++) {
		atlas_hit *hit = &hits[h];
		const atlas_doc *d = &e->docs[hit->doc];
		ensure_recorded(e, hit->doc, pl);
		const candidate *c = &e->cand[hit->doc];
		int first = d->first_section - 1, ns = d->last_section - d->first_section + 1;
		if (grow_sections(&x, ns) || grow((void **)&x.pm, &x.pcap, c->inst_n, sizeof(*x.pm)))
			goto describe;
		/* every match placed in its section once; heading matches get negative indexes for now */
		const fts_inst *in = c->inst_n > 0 ? e->rec.inst + c->inst_start : NULL;
		int np = 0;
		for (int i = 0; i < c->inst_n; i++) {
			int sec, idx;
			bool hd;
			if (locate_match(e, d, in[i].col, in[i].off, &sec, &hd, &idx))
				x.pm[np++] = (placed){ sec - first, hd ? idx - e->sections[sec].nhead : idx, in[i].phrase };
		}
		score_sections(&x, e->sections + first, ns, x.pm, np, w, e->rec.phrase_size);
		mark_title(e, res, hit, &x, np, &pw);
		for (int k = 0; k < SECTION_KEEP && k < ns && x.scores[k].score > 0; k++) {
			int sec = first + x.scores[k].sec;
			const section_info *si = &e->sections[sec];
			if (hit->snippet && (si->level == 0 || hit->nsections == 3))
				continue; /* nothing more this section could give */
			/* its matches, gathered from the page's (in record order: phrase after phrase) and
			 * sorted: heading ones (negative) first, then body ones, by token; only the few
			 * sections shown are ever sorted */
			int nsm = 0, nm = 0, nhead_m = 0;
			if (grow((void **)&x.m, &x.mcap, np, sizeof(*x.m)) ||
			    grow((void **)&x.sm, &x.smcap, np, sizeof(*x.sm)))
				continue;
			for (int i = 0; i < np; i++)
				if (x.pm[i].sec == x.scores[k].sec)
					x.sm[nsm++] = x.pm[i];
			sort_placed(x.sm, nsm);
			for (int i = 0; i < nsm; i++) {
				x.m[nm++] = (sec_match){ x.sm[i].idx < 0 ? x.sm[i].idx + si->nhead : x.sm[i].idx,
							 x.sm[i].phrase };
				nhead_m += x.sm[i].idx < 0;
			}
			int parts[2] = { si->nhead, si->nlead + si->nbody }, from, to;
			const sec_match *bm = x.m + nhead_m;
			int nbody_m = nm - nhead_m;
			snippet_window(bm, nbody_m, parts[1], 16, false, &from, &to);
			/* the body read and its spans found only where the window is, unless the engine
			 * holds them all */
			section_text row;
			if (section_row(e, sec, from, to, &row) && row.decoded) {
				const char *heading = row.heading, *anchor = row.anchor, *text = row.body;
				int nheading = row.nheading, ntext = row.nbody;
				const atlas_span *sp = row.decoded;
				strbuf *sn = &x.sn, *hb = &x.hb;
				strbuf_reset(sn);
				bool has_snippet = heading && text && anchor &&
						   render_snippet(sn, text, ntext, sp + si->nhead, row.body_first, parts[1], from, to, bm,
								  nbody_m, &e->rec, &pw, false);
				/* the hit's snippet and its first section's are one string */
				char *snippet = NULL;
				if (has_snippet && !sn->oom)
					snippet = atlas_arena_strndup(&res->text, strbuf_str(sn), sn->len);
				if (snippet && nbody_m && !hit->snippet)
					hit->snippet = snippet;
				if (snippet && si->level > 0 && hit->nsections < 3) {
					strbuf_reset(hb);
					snippet_window(x.m, nhead_m, si->nhead, 64, true, &from, &to);
					if (!render_snippet(hb, heading, nheading, sp, 0, si->nhead, from, to, x.m, nhead_m,
							    &e->rec, &pw, true))
						strbuf_append_html(hb, heading, (size_t)nheading);
					char *head = hb->oom ? NULL
							     : atlas_arena_strndup(&res->text, strbuf_str(hb), hb->len);
					char *anch = atlas_arena_strndup(&res->text, anchor, (size_t)row.nanchor);
					if (head && anch) {
						atlas_section_hit *out = &hit->sections[hit->nsections++];
						out->heading = head;
						out->anchor = anch;
						out->snippet = snippet;
					}
				}
			}
			if (!e->texts)
				sqlite3_reset(e->st_section_text);
		}
	describe:
		if (!hit->snippet) {
			strbuf_reset(&x.sn);
			strbuf_append_html(&x.sn, d->description, strlen(d->description));
			if (!x.sn.oom)
				hit->snippet = atlas_arena_strndup(&res->text, strbuf_str(&x.sn), x.sn.len);
		}
	}
	strbuf_free(&x.sn);
	strbuf_free(&x.hb);
	free(x.scores);
	free(x.head);
	free(x.body);
	free(x.touched);
	free(x.fit);
	free(x.pm);
	free(x.sm);
	free(x.m);
	free(x.sp);
}

