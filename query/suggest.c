/* suggest.c - typeahead: the reader's whole query with its last word completed from the
 * vocabulary (typo-tolerant), ranked by the pages each completion finds, then matching titles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edits.h"
#include "engine_internal.h"
#include "stopwords.h"
#include "utf8.h"

/* Completions of the last word counted (one search each), at most, beyond half the number asked
 * for. */
#define SUGGEST_EXTRA 4
/* Vocabulary entries looked at for one completion, at most (a one-letter prefix costs no more
 * than a long one). */
#define SUGGEST_VOCAB_SCAN 20000
/* Edits allowed between the typed last word and the start of a completion: none below 4 bytes,
 * one from 4, two from 8. */
#define SUGGEST_ONE_EDIT_LEN 4
#define SUGGEST_TWO_EDITS_LEN 8

/* A word that may complete the last one. */
typedef struct completion {
	const vocab_entry *v;
	int edits;
} completion;

/* qsort order of suggestions: higher score first, then by doc. */
static int cmp_sugg(const void *a, const void *b)
{
	const atlas_suggestion *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->doc - y->doc;
}

/* qsort order of completions: fewer edits first, then more frequent words. */
static int cmp_completion(const void *a, const void *b)
{
	const completion *x = a, *y = b;
	if (x->edits != y->edits)
		return x->edits - y->edits;
	return y->v->df - x->v->df;
}

/* Collects into c (cap entries) the vocabulary words that may complete last[0..n): with prefix,
 * those starting with it, else the word itself; when fuzzy, those within the allowed edits of it
 * instead (sharing its first byte). Returns the count, best first. */
static int collect(const atlas_engine *e, const char *last, int n, bool prefix, bool fuzzy,
		   completion *c, int cap)
{
	int nc = 0;
	int max = n >= SUGGEST_TWO_EDITS_LEN ? 2 : n >= SUGGEST_ONE_EDIT_LEN ? 1 : 0;
	if (fuzzy && (max == 0 || n > VOCAB_MAX_LEN))
		return 0;
	char first[2] = { last[0], '\0' };
	int lo = engine_vocab_from(e, fuzzy ? first : last);
	unsigned long long letters = fuzzy ? letter_set(last, n) : 0;
	for (int i = lo; i < e->nvocab && i < lo + SUGGEST_VOCAB_SCAN; i++) {
		const vocab_entry *v = &e->vocab[i];
		int edits = 0;
		if (fuzzy) {
			if (v->term[0] != last[0])
				break;
			if (v->len > VOCAB_MAX_LEN || v->len < n - max || (!prefix && v->len > n + max))
				continue;
			/* each letter of the typed word that the entry lacks (or holds once where the
			 * word holds it twice) takes an edit of its own: more of them than max, and the
			 * entry is passed over unread */
			if (__builtin_popcountll(letters & ~letter_set(v->term, v->len)) > max)
				continue;
			edits = atlas_edits(last, n, v->term, v->len, prefix, max);
			if (edits > max)
				continue;
		} else {
			if (strncmp(v->term, last, (size_t)n) != 0)
				break;
			if (!prefix && v->len != n)
				break;
		}
		bool same = v->len == n && edits == 0;
		if (v->df < 1)
			continue;
		if (!same && (v->len < 3 || atlas_is_stopword(v->term, (size_t)v->len)))
			continue;
		completion cand = { v, edits };
		if (nc < cap) {
			c[nc++] = cand;
			continue;
		}
		int worst = 0;
		for (int k = 1; k < nc; k++)
			if (cmp_completion(&c[k], &c[worst]) > 0)
				worst = k;
		if (cmp_completion(&cand, &c[worst]) < 0)
			c[worst] = cand;
	}
	qsort(c, (size_t)nc, sizeof(*c), cmp_completion);
	return nc;
}

/* Adds to out (up to max, *n so far) the pages whose title holds the words of before (folded,
 * space-separated, "" for none) and a word starting with word, best first. Returns the pages
 * added. */
static int title_pages(atlas_engine *e, const char *before, const char *word, atlas_suggestion *out,
		       int max, int *n)
{
	atlas_suggestion *pages = malloc((size_t)max * sizeof(*pages));
	if (!pages || max <= 0) {
		free(pages);
		return 0;
	}
	int npages = 0;
	size_t wlen = strlen(word);
	int lo = engine_title_index_from(e, word);
	for (int i = lo; i < e->ntitle_index && i < lo + SUGGEST_SCAN; i++) {
		if (strncmp(e->title_index[i].word, word, wlen) != 0)
			break;
		int d = e->title_index[i].doc;
		const atlas_doc *doc = &e->docs[d];
		bool dup = false;
		for (int k = 0; k < npages && !dup; k++)
			dup = pages[k].doc == d;
		if (dup)
			continue;
		const char *t = doc->title_words;
		bool ok = true;
		for (const char *w = before; ok && *w;) {
			size_t wl = strcspn(w, " ");
			char pat[256];
			snprintf(pat, sizeof(pat), " %.*s ", (int)wl, w);
			ok = strstr(t, pat) != NULL;
			w += wl;
			w += *w == ' ';
		}
		char pat[256];
		snprintf(pat, sizeof(pat), " %s", word);
		const char *at = ok ? strstr(t, pat) : NULL;
		if (!at)
			continue;
		/* earlier in the title and shorter titles first; explainers and guides over the rest */
		double score = 10.0 - (double)(at - t) / 20.0 - (double)strlen(t) / 200.0 + doc->priority;
		if (doc->type_id == ATLAS_TYPE_PAGE)
			score -= 2;
		atlas_suggestion s = { .doc = d, .text = "", .pages = 0, .score = score };
		if (npages < max) {
			pages[npages++] = s;
		} else {
			qsort(pages, (size_t)npages, sizeof(*pages), cmp_sugg);
			if (score > pages[npages - 1].score)
				pages[npages - 1] = s;
		}
	}
	qsort(pages, (size_t)npages, sizeof(*pages), cmp_sugg);
	memcpy(out + *n, pages, (size_t)npages * sizeof(*pages));
	*n += npages;
	free(pages);
	return npages;
}

/* Returns the pages a search for q finds holding all its words (0 when it fails). */
static int pages_found(atlas_engine *e, const char *q)
{
	atlas_search_params p = { q, 1, 0, NULL, NULL, false, false };
	atlas_results r;
	atlas_error err = { 0, "" };
	e->count_only = true;
	int rc = atlas_search(&r, e, &p, &err);
	e->count_only = false;
	if (rc)
		return 0;
	int total = r.total_all;
	atlas_results_free(&r);
	return total;
}

/* Whether byte c is part of a word as typed: ASCII letters and digits, and any byte of a UTF-8
 * sequence. */
static bool word_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Where the last word of prefix (qlen bytes) is, as typed: prefix[*start..*end), then what follows
 * it (a closing quote, spaces) up to *tail, where the spaces at the end start. Returns false when
 * prefix holds no word. */
static bool last_word(const char *prefix, size_t qlen, size_t *start, size_t *end, size_t *tail)
{
	*end = qlen;
	while (*end > 0 && !word_byte((unsigned char)prefix[*end - 1]))
		(*end)--;
	*start = *end;
	while (*start > 0 && word_byte((unsigned char)prefix[*start - 1]))
		(*start)--;
	*tail = qlen;
	while (*tail > *end && prefix[*tail - 1] == ' ')
		(*tail)--;
	return *start < *end;
}

/* Whether prefix[0..n) holds a word. */
static bool has_word(const char *prefix, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (word_byte((unsigned char)prefix[i]))
			return true;
	return false;
}

/* Whether byte c joins the parts of an identifier: "Json::Value", "yy_at_bol", "fs.readFile". */
static bool joiner_byte(unsigned char c)
{
	return c == '_' || c == '.' || c == ':';
}

/* The identifier the last word prefix[start..end) is part of, as typed: its parts before it joined
 * by joiner_byte, and the joiners after it up to tail ("yy_", "Json::V"), into
 * prefix[*run_start..*run_end) and, folded to lower case, run (cap bytes). Returns its length, or
 * 0 when the word is joined to nothing or the run does not fit. */
static int identifier_run(const char *prefix, size_t start, size_t end, size_t tail, size_t *run_start,
			  size_t *run_end, char *run, int cap)
{
	size_t a = start, b = end;
	while (a >= 2 && joiner_byte((unsigned char)prefix[a - 1])) {
		size_t j = a - 1;
		while (j > 0 && joiner_byte((unsigned char)prefix[j - 1]))
			j--;
		if (j == 0 || !word_byte((unsigned char)prefix[j - 1]))
			break;
		a = j;
		while (a > 0 && word_byte((unsigned char)prefix[a - 1]))
			a--;
	}
	while (b < tail && joiner_byte((unsigned char)prefix[b]))
		b++;
	*run_start = a;
	*run_end = b;
	if ((a == start && b == end) || (int)(b - a) >= cap)
		return 0;
	for (size_t i = a; i < b; i++)
		run[i - a] = (char)((unsigned char)prefix[i] < 0x80 && prefix[i] >= 'A' && prefix[i] <= 'Z'
					    ? prefix[i] - 'A' + 'a'
					    : prefix[i]);
	run[b - a] = '\0';
	return (int)(b - a);
}

int atlas_suggest(atlas_suggestion *out, int max, atlas_engine *e, const char *prefix)
{
	if (max <= 0 || !prefix)
		return 0;
	if (max > ATLAS_SUGGEST_MAX)
		max = ATLAS_SUGGEST_MAX;
	size_t qlen = strlen(prefix), start, end, tail;
	if (!last_word(prefix, qlen, &start, &end, &tail))
		return 0;
	bool typing = end == qlen || prefix[qlen - 1] != ' '; /* no space after it: still typing */
	char run[VOCAB_MAX_LEN + 1];
	size_t run_start, run_end;
	int nrun = identifier_run(prefix, start, end, tail, &run_start, &run_end, run, (int)sizeof(run));
	completion probe[1];
	/* an identifier being typed ("Json::V", "yy_", "fs.rea") that the pages write whole is
	 * completed whole ("json::value"), not its last part ("Json::void"); titles are still
	 * looked up by its parts */
	bool whole = typing && nrun > 0 && collect(e, run, nrun, true, false, probe, 1) > 0;
	strbuf before = STRBUF_INIT, lastw = STRBUF_INIT, raw = STRBUF_INIT;
	strbuf_append(&raw, prefix, start);
	engine_normalize(e, &before, strbuf_str(&raw), false);
	strbuf_free(&raw);
	strbuf_append(&raw, prefix + start, end - start);
	engine_normalize(e, &lastw, strbuf_str(&raw), false);
	strbuf_free(&raw);
	/* a word the analyzer splits ("k8s.io" is one run here) is completed from its last part,
	 * unless an identifier's run is completed whole */
	const char *last = strbuf_str(&lastw);
	const char *sp = strrchr(last, ' ');
	last = sp ? sp + 1 : last;
	const char *part = last;
	if (whole) {
		last = run;
		start = run_start;
		end = run_end;
	}
	int n = 0;
	int nlast = (int)strlen(last);
	if (nlast == 0 || before.oom || lastw.oom) {
		strbuf_free(&before);
		strbuf_free(&lastw);
		return 0;
	}
	/* no word before the last, and nothing after it: a completion is a single word */
	bool one_word = (whole ? !has_word(prefix, start) : before.len == 0) && tail == end;
	/* completions counted (a search each): enough for the half of the list they usually fill */
	int cap = (max + 1) / 2 + SUGGEST_EXTRA;
	completion *c = malloc((size_t)cap * sizeof(*c));
	atlas_suggestion *q = malloc((size_t)cap * sizeof(*q));
	char (*stems)[VOCAB_MAX_LEN + 24] = malloc((size_t)cap * sizeof(*stems)); /* of q's words */
	int nq = 0;
	const char *fix_word = part;
	if (c && q && stems) {
		/* an option being typed ("--exp") is completed from the options the pages write
		 * ("--expires"), when they write any, not from every word it starts */
		int nc = 0, dashes = !whole && last == strbuf_str(&lastw) ? atlas_option_dashes(prefix, (int)start) : 0;
		char opt[VOCAB_MAX_LEN + 3];
		if (dashes && nlast + dashes < (int)sizeof(opt)) {
			snprintf(opt, sizeof(opt), "%.*s%s", dashes, "--", last);
			nc = collect(e, opt, nlast + dashes, typing, false, c, cap);
			if (nc > 0) {
				start -= (size_t)dashes;
				one_word = false; /* the option's search finds its word's pages too */
			}
		}
		if (nc == 0)
			nc = collect(e, last, nlast, typing, false, c, cap);
		bool fuzzy = false;
		double best_fix = -1;
		for (int pass = 0; pass < 2 && nq < max; pass++) {
			if (pass == 1) {
				/* nothing (or too little) starts with what was typed: a typo */
				if (nq > 0)
					break;
				nc = collect(e, last, nlast, typing, true, c, cap);
				fuzzy = true;
			}
			for (int k = 0; k < nc && nq < cap; k++) {
				/* one form of a word: the others find the same pages (hash, hashes) */
				int ls = atlas_stem(e->analyzer, c[k].v->term, c[k].v->len, stems[nq],
						    (int)sizeof(stems[nq]) - 1);
				stems[nq][ls > 0 && ls < (int)sizeof(stems[nq]) ? ls : 0] = '\0';
				bool same_stem = false;
				for (int j = 0; j < nq && !same_stem; j++)
					same_stem = strcmp(stems[j], stems[nq]) == 0;
				if (same_stem)
					continue;
				/* the reader's text with the word replaced, what followed it kept */
				atlas_suggestion s = { .doc = -1, .text = "", .pages = 0, .score = 0 };
				int w = snprintf(s.text, sizeof(s.text), "%.*s%s%.*s", (int)start, prefix,
						 c[k].v->term, (int)(tail - end), prefix + end);
				if (w < 0 || (size_t)w >= sizeof(s.text))
					continue;
				atlas_utf8_clean(s.text, (size_t)w); /* shown, and sent as JSON */
				/* counted as a finished word: a trailing space, so no prefix search */
				char counted[ATLAS_SUGGEST_TEXT_MAX + 1];
				snprintf(counted, sizeof(counted), "%s ", s.text);
				/* one word alone: the pages holding it, known from the vocabulary */
				s.pages = one_word ? c[k].v->df : pages_found(e, counted);
				if (s.pages == 0)
					continue;
				bool dup = false;
				for (int j = 0; j < nq && !dup; j++)
					dup = strcmp(q[j].text, s.text) == 0;
				if (dup)
					continue;
				/* more pages first; among equals, the closer and the more frequent word */
				s.score = (double)s.pages - (double)c[k].edits * 1e-3 +
					  (double)c[k].v->df * 1e-9;
				q[nq++] = s;
				/* titles are then looked up by the best correction */
				if (fuzzy && s.score > best_fix) {
					best_fix = s.score;
					fix_word = c[k].v->term;
				}
			}
		}
		qsort(q, (size_t)nq, sizeof(*q), cmp_sugg);
	}
	/* the completed queries first (at most half when titles match too), then the titles */
	int want_pages = max / 2 > 0 ? max / 2 : (nq == 0);
	atlas_suggestion *pages = malloc((size_t)max * sizeof(*pages));
	int npages = 0;
	if (pages)
		title_pages(e, strbuf_str(&before), fix_word, pages, max, &npages);
	int take_q = nq < max - (npages < want_pages ? npages : want_pages) ? nq
		     : max - (npages < want_pages ? npages : want_pages);
	if (q)
		memcpy(out, q, (size_t)take_q * sizeof(*out));
	n = take_q;
	for (int k = 0; k < npages && n < max; k++)
		out[n++] = pages[k];
	free(pages);
	free(stems);
	free(q);
	free(c);
	strbuf_free(&before);
	strbuf_free(&lastw);
	return n;
}
