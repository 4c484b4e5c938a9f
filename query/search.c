/* search.c - one search: the reader's text into terms (with synonyms, corrections and a prefix
 * word), terms into MATCH expressions, candidates into a ranked, filtered, faceted page of hits
 * with snippets and best-matching sections. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"
#include "parse.h"
#include "postings.h"
#include "rank.h"
#include "spans.h"
#include "stopwords.h"
#include "topk.h"

#define MAX_TERMS 32
#define MAX_ALTS 12
#define ADMIT_TERMS 8    /* content words a search looks for, at most (rarest first) */
#define ADMIT_ALTS 24    /* their alternatives (stems, synonyms, completions), at most */
#define MAX_PHRASES 63
/* Bytes of a block of the results' text: a page of ten hits mostly fits in one */
#define RESULTS_TEXT_BLOCK (16 * 1024)

/**************************************************************************************************
** Terms.
*/

typedef struct qterm {
	char *word;              /* folded surface text (words of a phrase joined by spaces) */
	char *alts[MAX_ALTS];    /* MATCH fragments: quoted strings */
	double alt_idf[MAX_ALTS]; /* IDF of each alternative, from the vocabulary */
	int prefix_from;         /* alts from this index on are completions of a prefix word */
	bool alt_titled[MAX_ALTS]; /* a completion looked for in titles and keywords only */
	int nalts;
	bool phrase, negated, stop, prefix;
	char *correction;        /* spelling correction applied, or NULL */
	int syn_group;           /* synonym group expanded, or 0 */
	double idf;              /* weight of the term in the coverage of a page */
	char *title_pats[MAX_ALTS]; /* " stem " patterns looked for in a title (" prefix" for a prefix) */
	unsigned long long title_pat_bits[MAX_ALTS]; /* the atlas_word_bit each pattern needs in a field */
	int ntitle_pats;
	int prefix_pat;          /* index of the prefix pattern in title_pats, or -1 */
	/* a prefix word every vocabulary word starting with which is matched by one of its phrases
	 * (itself, a completion taken, or a part of an identifier): its phrases' matches say all */
	bool prefix_covered;
} qterm;

typedef struct plan {
	int nterms;
	int npositive;           /* terms that decide matching (content words and phrases) */
	strbuf strict, relaxed;
	/* the same two over the titles table, without column filters (its one column is the title);
	 * their phrases are numbered alike */
	strbuf titles_strict, titles_relaxed;
	strbuf excluded;         /* the negated terms' groups, any of them, for the fts table */
	int phrase_term[MAX_PHRASES + 1];  /* relaxed expression: phrase index -> term */
	sqlite3_int64 term_phrases[MAX_TERMS]; /* term -> its phrases in the relaxed expression */
	int est_df;              /* pages the rarest content word's alternatives are on, at most (by
				    stems): the work of step 1, counted as far as it passes
				    RANK_BROAD_DF or not */
	int est_any;             /* at most this many pages hold any content word: the work of step 2 */
	bool partial;            /* retrieval stopped at the titles or the important fields */
	atlas_work budget, work; /* the search's work budget, the work done (see engine.h) */
	bool budget_hit;         /* a bound was reached: the results are partial */
	long step_cost;          /* postings a retrieval step may read: the admitted words' */
	char *unquoted[8];       /* phrases of stop words only, searched as separate words */
	int nunquoted;
	int nphrases;
	bool corrected;
	bool replaced;           /* an unknown word was searched as its correction */
	bool no_correct;         /* atlas_search_params.no_correct: words are searched as typed */
	double idf[FTS_MAX_PHRASES]; /* IDF per phrase of the expressions, for atlas_rank */
	int nidf;
	qterm terms[MAX_TERMS];  /* last: plan_init leaves them, new_term clears each one taken */
} plan;

/* Starts an empty plan: everything but the terms zeroed (15 KB a search, mostly unused). */
static void plan_init(plan *pl)
{
	memset(pl, 0, offsetof(plan, terms));
}

static void plan_free(plan *pl)
{
	for (int i = 0; i < pl->nterms; i++) {
		free(pl->terms[i].word);
		free(pl->terms[i].correction);
		for (int k = 0; k < pl->terms[i].nalts; k++)
			free(pl->terms[i].alts[k]);
		for (int k = 0; k < pl->terms[i].ntitle_pats; k++)
			free(pl->terms[i].title_pats[k]);
	}
	strbuf_free(&pl->strict);
	strbuf_free(&pl->relaxed);
	strbuf_free(&pl->titles_strict);
	strbuf_free(&pl->titles_relaxed);
	strbuf_free(&pl->excluded);
	for (int i = 0; i < pl->nunquoted; i++)
		free(pl->unquoted[i]);
}

static void add_alt(qterm *t, const char *text, size_t n, bool prefix)
{
	if (t->nalts == MAX_ALTS || n == 0)
		return;
	strbuf sb = STRBUF_INIT;
	fts_quote(&sb, text, n);
	if (prefix)
		strbuf_putc(&sb, '*');
	for (int k = 0; k < t->nalts; k++)
		if (strcmp(t->alts[k], strbuf_str(&sb)) == 0) {
			strbuf_free(&sb);
			return;
		}
	t->alts[t->nalts++] = strbuf_detach(&sb);
}

/* Units of a clause: its folded surface words and identifiers, in order. */
typedef struct units_ctx {
	char *w[MAX_TERMS];
	int n;
} units_ctx;

static int unit_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	units_ctx *u = ctx;
	(void)tflags;
	(void)start;
	(void)end;
	if (u->n == MAX_TERMS)
		return 1;
	char *w = malloc((size_t)n + 1);
	if (!w)
		return 1;
	memcpy(w, tok, (size_t)n);
	w[n] = '\0';
	u->w[u->n++] = w;
	return 0;
}

/* Damerau-Levenshtein (optimal string alignment) distance of a and b, or max+1 past max. */
static int edit_distance(const char *a, int la, const char *b, int lb, int max)
{
	if (abs(la - lb) > max)
		return max + 1;
	int rows[3][64];
	if (la >= 63 || lb >= 63)
		return max + 1;
	int *pp = rows[0], *prev = rows[1], *cur = rows[2];
	for (int j = 0; j <= lb; j++)
		prev[j] = j;
	for (int i = 1; i <= la; i++) {
		cur[0] = i;
		int best = cur[0];
		for (int j = 1; j <= lb; j++) {
			int cost = a[i - 1] != b[j - 1];
			int v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (prev[j - 1] + cost < v)
				v = prev[j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
				v = pp[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > max)
			return max + 1;
		int *t = pp;
		pp = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/* Whether x has more than k bits set: the bits counted in parallel, in a dozen steps without a
 * branch (a popcount instruction is not in the baseline x86-64, and the library call for it, or
 * a loop clearing one bit a step, cost more in the spelling correction's scan). */
static bool more_bits_than(unsigned long long x, int k)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (int)((x * 0x0101010101010101ULL) >> 56) > k;
}

/* Whether word a[0..na) and word b[0..nb) are forms of one word, not a misspelling of it: one
 * starts with the other and both have the same stem ("decorators" and "decorator", "caches" and
 * "cache"; not "limitting" and "limiting"). Both then match the same pages, so there is nothing
 * to correct. */
static bool inflection_of(const atlas_engine *e, const char *a, int na, const char *b, int nb)
{
	int n = na < nb ? na : nb;
	if (strncmp(a, b, (size_t)n) != 0)
		return false;
	char sa[64], sb[64];
	int la = atlas_stem(e->analyzer, a, na, sa, (int)sizeof(sa));
	int lb = atlas_stem(e->analyzer, b, nb, sb, (int)sizeof(sb));
	return la == lb && memcmp(sa, sb, (size_t)la) == 0;
}

/* The best correction of a word or identifier not in the vocabulary (or much rarer than a
 * neighbour), or NULL:
 * never another form of the same word, which matches the same pages. */
static const char *correct_word(const atlas_engine *e, const char *w, bool maybe_prefix, plan *pl)
{
	int len = (int)strlen(w);
	if (len < TYPO_MIN_LEN || len > 40)
		return NULL;
	/* words, and identifiers of words and joiners ("os.path.jion", "max_wal_sendres") */
	for (int i = 0; i < len; i++)
		if ((w[i] < 'a' || w[i] > 'z') && !(i > 0 && i < len - 1 && strchr("_.-/:", w[i])))
			return NULL;
	int df = vocab_df(e, w, (size_t)len);
	if (df > TYPO_RARE_DF)
		return NULL;
	if (maybe_prefix && df == 0) {
		/* the reader may still be typing: a word that starts some vocabulary term is no typo */
		int lo = engine_vocab_from(e, w);
		if (lo < e->nvocab && strncmp(e->vocab[lo].term, w, (size_t)len) == 0)
			return NULL;
	}
	int max = len >= TYPO_TWO_EDITS_LEN ? 2 : 1;
	if (df > 0)
		max = 1;
	const vocab_entry *best = NULL;
	int best_d = max + 1;
	int lo_len = len - max < 0 ? 0 : len - max, hi_len = len + max > VOCAB_MAX_LEN ? VOCAB_MAX_LEN : len + max;
	unsigned long long letters = letter_set(w, len);
	/* the expansions budget: the words compared, checked before the scan */
	long scan = e->by_len_start[hi_len + 1] - e->by_len_start[lo_len];
	if (pl->work.expansions + scan > pl->budget.expansions) {
		pl->budget_hit = true;
		return NULL;
	}
	pl->work.expansions += scan;
	for (int j = e->by_len_start[lo_len]; j < e->by_len_start[hi_len + 1]; j++) {
		if (more_bits_than(letters ^ e->by_len_letters[j], 2 * max))
			continue; /* too many letters in one word only: further than max edits */
		const vocab_entry *v = &e->vocab[e->by_len[j]];
		if (v->df <= df)
			continue;
		if (df > 0 && v->df < df * TYPO_RARE_RATIO)
			continue;
		int d = edit_distance(w, len, v->term, v->len, max);
		if (d > max)
			continue;
		if (d < best_d || (d == best_d && v->df > best->df)) {
			best = v;
			best_d = d;
		}
	}
	if (best && inflection_of(e, w, len, best->term, best->len))
		return NULL;
	return best ? best->term : NULL;
}

/* Looks for a synonym term spanning units[i..i+len), by folded words then by stems. */
static int find_synonym(atlas_engine *e, char **units, int i, int len)
{
	strbuf k = STRBUF_INIT;
	for (int j = i; j < i + len; j++) {
		if (j > i)
			strbuf_putc(&k, ' ');
		strbuf_puts(&k, units[j]);
	}
	int *s = strmap_get(&e->syn_index, strbuf_str(&k));
	if (!s) {
		strbuf st = STRBUF_INIT;
		char *spaced = strdup(strbuf_str(&k));
		for (char *c = spaced; c && *c; c++)
			if (strchr("-_./:", *c))
				*c = ' ';
		if (spaced)
			engine_normalize(e, &st, spaced, true);
		s = strmap_get(&e->syn_stem_index, strbuf_str(&st));
		free(spaced);
		strbuf_free(&st);
	}
	strbuf_free(&k);
	return s ? *s : -1;
}

static void expand_synonyms(atlas_engine *e, qterm *t, int syn)
{
	t->syn_group = e->syn[syn].group;
	for (int k = 0; k < e->nsyn; k++)
		if (e->syn[k].group == t->syn_group && k != syn)
			add_alt(t, e->syn[k].text, strlen(e->syn[k].text), false);
}

/* Alternatives of a single word or identifier, before synonyms. */
static void word_alts(qterm *t, const char *w)
{
	add_alt(t, w, strlen(w), false);
	if (strpbrk(w, "-_./:")) {
		/* an identifier also matches its parts written as prose, and a hyphenated word its
		 * closed form ("fan-out": "fan out", "fanout") */
		char *spaced = strdup(w), *closed = strdup(w);
		size_t o = 0;
		for (size_t i = 0; spaced && closed && w[i]; i++) {
			if (strchr("-_./:", w[i]))
				spaced[i] = ' ';
			else
				closed[o++] = w[i];
		}
		if (spaced)
			add_alt(t, spaced, strlen(spaced), false);
		if (closed && strchr(w, '-') && !strpbrk(w, "_./:")) {
			closed[o] = '\0';
			add_alt(t, closed, o, false);
		}
		free(spaced);
		free(closed);
	}
}

/* An identifier of one word's humps ("HashMap", "getElementById", "XMLHttpRequest") also matches
 * its parts written as prose ("hash map"), as one of its joiners does (word_alts): text, the
 * clause as typed, is analyzed again for its parts; t's word is their compound. */
static void hump_alts(atlas_engine *e, qterm *t, const char *text)
{
	if (strpbrk(t->word, "-_./:"))
		return; /* word_alts has its parts */
	bool hump = false; /* a capital after a letter or digit: a hump may be there */
	for (const char *c = text + 1; *c && !hump; c++)
		hump = *c >= 'A' && *c <= 'Z' && ((c[-1] >= 'a' && c[-1] <= 'z') || (c[-1] >= 'A' && c[-1] <= 'Z'));
	if (!hump)
		return;
	units_ctx u = { { 0 }, 0 };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX | ATLAS_ANALYZE_PARTS, text,
		      (int)strlen(text), unit_token, &u);
	if (u.n > 1) {
		strbuf sb = STRBUF_INIT;
		for (int i = 0; i < u.n; i++) {
			if (i)
				strbuf_putc(&sb, ' ');
			strbuf_puts(&sb, u.w[i]);
		}
		add_alt(t, strbuf_str(&sb), sb.len, false);
		strbuf_free(&sb);
	}
	for (int i = 0; i < u.n; i++)
		free(u.w[i]);
}

/* A plural acronym typed in lowercase or capitals ("gpus", "LLMS") is also its singular, as the
 * analyzer makes of "GPUs" in a page: added when the stemmer keeps the word's s (it took "apis"
 * to "api" already) and the index knows the singular better than the plural. */
static void plural_alt(atlas_engine *e, qterm *t)
{
	size_t n = strlen(t->word);
	if (n < 3 || n > 8 || t->word[n - 1] != 's' || t->word[n - 2] == 's' || strpbrk(t->word, "-_./: "))
		return;
	char st[64];
	atlas_stem(e->analyzer, t->word, (int)n, st, sizeof(st));
	if (strcmp(st, t->word) != 0)
		return;
	int plural = vocab_df(e, t->word, n), singular = vocab_df(e, t->word, n - 1);
	if (singular > plural)
		add_alt(t, t->word, n - 1, false);
}

/* Completions of the word being typed: the most frequent vocabulary words that start with it,
 * found in the sorted in-memory vocabulary (cheaper and more predictable than an FTS5 prefix
 * query, which merges the lists of every term with the prefix), one per stem: a completion that
 * stems like the word itself or like a completion already taken ("cache": "caching", "caches")
 * would match the same pages again and only count them twice. */
/* Whether completion v of a typed word of len bytes is an identifier whose first parts, cut at a
 * separator at or past the typed text ("tpu" of "tpu_lowering_rule", "jax.numpy" of
 * "jax.numpy.einsum"), are a vocabulary word themselves: pages holding v hold that word too (the
 * tokenizer indexes an identifier's parts beside it), so v would find nothing the shorter word
 * does not, at the cost of one more phrase for FTS5 to merge. */
static bool subsumed(const atlas_engine *e, const vocab_entry *v, size_t len)
{
	for (int i = v->len - 1; i >= (int)len; i--)
		if (strchr("-_./:", v->term[i]) && v->term[i] && (i == (int)len || vocab_df(e, v->term, (size_t)i) > 0))
			return true;
	return false;
}

/* Whether a term of pl before t is a content word (not excluded, not a stop word). */
static bool has_content_term(const plan *pl, const qterm *t)
{
	for (const qterm *o = pl->terms; o < t; o++)
		if (!o->negated && !o->stop)
			return true;
	return false;
}

/* Completions of the word being typed that titles hold along with every earlier content word
 * of the query ("consistent h": "hashing", from "Consistent Hashing"), those of the most such
 * titles first (ties in the alphabet's order): what the reader is most likely typing, whatever
 * its frequency in the whole index. Looks at no more than SUGGEST_SCAN entries of the title index
 * (sorted, so a word's entries are together). Writes at most max of them (words in the engine's
 * title index) into out and returns how many. */
static int title_completions(const atlas_engine *e, const plan *pl, const qterm *t, const char **out,
			     int max)
{
	size_t len = strlen(t->word);
	int counts[PREFIX_EXPANSIONS], n = 0;
	if (max > PREFIX_EXPANSIONS)
		max = PREFIX_EXPANSIONS;
	if (max <= 0)
		return 0;
	int lo = engine_title_index_from(e, t->word), end = lo;
	while (end < e->ntitle_index && end < lo + SUGGEST_SCAN && strncmp(e->title_index[end].word, t->word, len) == 0)
		end++;
	/* the earlier content words as " word " patterns, made once: a title holds a word when it
	 * holds its pattern (title_words is space-separated with spaces around) */
	char pats[MAX_TERMS][256];
	int npats = 0;
	for (const qterm *o = pl->terms; o < t; o++) {
		if (o->negated || o->stop)
			continue;
		const char *ow = o->correction ? o->correction : o->word;
		if (snprintf(pats[npats], sizeof(pats[0]), " %s ", ow) >= (int)sizeof(pats[0]))
			return 0; /* no title holds a word that long */
		npats++;
	}
	for (int i = lo; i < end;) {
		const char *w = e->title_index[i].word;
		int run = i, count = 0;
		for (; i < end && strcmp(e->title_index[i].word, w) == 0; i++) {
			const char *title = e->docs[e->title_index[i].doc].title_words;
			bool all = true;
			for (int k = 0; k < npats && all; k++)
				all = strstr(title, pats[k]) != NULL;
			count += all;
		}
		if (count == 0 || strlen(w) == len || (n == max && count <= counts[n - 1]))
			continue;
		/* kept most titles first */
		int k = n < max ? n++ : n - 1;
		while (k > 0 && counts[k - 1] < count) {
			counts[k] = counts[k - 1];
			out[k] = out[k - 1];
			k--;
		}
		counts[k] = count;
		out[k] = e->title_index[run].word;
	}
	return n;
}

/* Finishes the completion of a word of one letter: with completions, the letter itself is
 * dropped from the term's alternatives (they alone decide); with none, the term ranks only, as a
 * stop word does. */
static void one_letter_done(qterm *t)
{
	t->prefix_covered = false;
	if (t->nalts == t->prefix_from) {
		t->stop = true;
		return;
	}
	for (int k = 0; k < t->prefix_from; k++)
		free(t->alts[k]);
	memmove(t->alts, t->alts + t->prefix_from, (size_t)(t->nalts - t->prefix_from) * sizeof(*t->alts));
	memmove(t->alt_titled, t->alt_titled + t->prefix_from,
		(size_t)(t->nalts - t->prefix_from) * sizeof(*t->alt_titled));
	t->nalts -= t->prefix_from;
	t->prefix_from = 0;
}

static void expand_prefix(atlas_engine *e, plan *pl, qterm *t)
{
	size_t len = strlen(t->word);
	int lo = engine_vocab_from(e, t->word);
	/* the most frequent few, more than needed, best first */
	enum { POOL = PREFIX_EXPANSIONS * 4 };
	const vocab_entry *top[POOL];
	int ntop = 0, i;
	bool dropped = false; /* a word with the prefix that no phrase of the term will match */
	int min_df = (int)(vocab_df(e, t->word, len) * PREFIX_MIN_SHARE);
	/* at most 5,000 words, fewer when the expansions budget has less left */
	long left = pl->budget.expansions - pl->work.expansions;
	int scan = left < 5000 ? (left > 0 ? (int)left : 0) : 5000;
	for (i = lo; i < e->nvocab && i < lo + scan; i++) {
		const vocab_entry *v = &e->vocab[i];
		if (strncmp(v->term, t->word, len) != 0)
			break;
		if ((size_t)v->len == len)
			continue;
		if (subsumed(e, v, len)) {
			/* the word itself is a part of v, or only a longer part is */
			dropped |= !strchr("-_./:", v->term[len]);
			continue;
		}
		if (v->df < min_df) {
			dropped = true;
			continue;
		}
		int k;
		if (ntop < POOL)
			k = ntop++;
		else if (v->df > top[POOL - 1]->df)
			k = POOL - 1, dropped = true;
		else {
			dropped = true;
			continue;
		}
		while (k > 0 && top[k - 1]->df < v->df) {
			top[k] = top[k - 1];
			k--;
		}
		top[k] = v;
	}
	pl->work.expansions += i - lo;
	char stems[2 * PREFIX_EXPANSIONS + 1][64];
	int nstems = 0;
	atlas_stem(e->analyzer, t->word, (int)len, stems[nstems++], sizeof(stems[0]));
	/* the completions the query's other words point to, first */
	const char *titled[PREFIX_EXPANSIONS];
	int ntitled = 0;
	if (has_content_term(pl, t))
		ntitled = title_completions(e, pl, t, titled, len < 2 ? PREFIX_EXPANSIONS : PREFIX_TITLE_COMPLETIONS);
	for (int k = 0; k < ntitled && t->nalts < MAX_ALTS; k++) {
		char st[64];
		atlas_stem(e->analyzer, titled[k], (int)strlen(titled[k]), st, sizeof(st));
		bool dup = false;
		for (int j = 0; j < nstems && !dup; j++)
			dup = strcmp(st, stems[j]) == 0;
		if (dup)
			continue;
		memcpy(stems[nstems++], st, sizeof(st));
		int before = t->nalts;
		add_alt(t, titled[k], strlen(titled[k]), false);
		/* after one letter, a guess: looked for where it was found, in titles (and keywords) */
		if (t->nalts > before)
			t->alt_titled[before] = len < 2 || vocab_df(e, titled[k], strlen(titled[k])) > PREFIX_TITLED_DF;
	}
	/* one letter (after other words): the titles' completions alone, looked for in titles and
	 * keywords (there are too many by frequency), and not the letter itself (the "o" of "O(1)"
	 * for "exactly o", the "s" of every "it's") */
	if (len < 2) {
		one_letter_done(t);
		return;
	}
	int nfrequent = 0;
	bool more = i == lo + scan && i < e->nvocab && strncmp(e->vocab[i].term, t->word, len) == 0;
	dropped |= more;
	if (more && scan < 5000)
		pl->budget_hit = true;
	for (int k = 0; k < ntop; k++) {
		char st[64];
		atlas_stem(e->analyzer, top[k]->term, top[k]->len, st, sizeof(st));
		bool dup = false;
		for (int j = 0; j < nstems && !dup; j++)
			dup = strcmp(st, stems[j]) == 0;
		if (dup)
			continue; /* matched by the phrase of the same stem */
		if (nfrequent == PREFIX_EXPANSIONS || t->nalts == MAX_ALTS) {
			dropped = true;
			break;
		}
		memcpy(stems[nstems++], st, sizeof(st));
		nfrequent++;
		int before = t->nalts;
		add_alt(t, top[k]->term, (size_t)top[k]->len, false);
		if (t->nalts > before)
			t->alt_titled[before] = top[k]->df > PREFIX_TITLED_DF;
	}
	t->prefix_covered = !dropped;
}

/* Whether every word of a phrase's units is a stop word. */
static bool stop_phrase(const units_ctx *u)
{
	for (int i = 0; i < u->n; i++)
		if (!atlas_is_stopword(u->w[i], strlen(u->w[i])))
			return false;
	return u->n > 0;
}

static qterm *new_term(plan *pl);

/* A quoted phrase of nothing but stop words: matching it intersects position lists that cover
 * nearly every page, so it is searched as its words, each once, as stop words (the query's
 * content words decide; with none, the stop words are the query), or left out when excluded.
 * The phrase is recorded, quoted, for the results (atlas_results.unquoted). */
static void unquote(plan *pl, const query_clause *cl, const units_ctx *u)
{
	if (pl->nunquoted < 8) {
		strbuf q = STRBUF_INIT;
		strbuf_printf(&q, "%s\"", cl->negated ? "-" : "");
		for (int i = 0; i < u->n; i++)
			strbuf_printf(&q, "%s%s", i ? " " : "", u->w[i]);
		strbuf_putc(&q, '"');
		if (!q.oom)
			pl->unquoted[pl->nunquoted++] = strbuf_detach(&q);
		strbuf_free(&q);
	}
	for (int i = 0; i < u->n && !cl->negated; i++) {
		bool known = false;
		for (int k = 0; k < pl->nterms && !known; k++)
			known = !pl->terms[k].negated && !pl->terms[k].phrase &&
				strcmp(pl->terms[k].word, u->w[i]) == 0;
		qterm *t = known ? NULL : new_term(pl);
		if (!t)
			continue;
		t->word = strdup(u->w[i]);
		if (!t->word) {
			pl->nterms--;
			continue;
		}
		t->stop = true;
		word_alts(t, t->word);
		t->prefix_from = t->nalts;
	}
}

static qterm *new_term(plan *pl)
{
	if (pl->nterms == MAX_TERMS)
		return NULL;
	qterm *t = &pl->terms[pl->nterms++];
	memset(t, 0, sizeof(*t));
	return t;
}

static void analyze_query(atlas_engine *e, plan *pl, const parsed_query *q)
{
	for (int c = 0; c < q->nclauses; c++) {
		const query_clause *cl = &q->clauses[c];
		units_ctx u = { { 0 }, 0 };
		atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY | FTS5_TOKENIZE_PREFIX, cl->text,
			      (int)strlen(cl->text), unit_token, &u);
		if (u.n == 0)
			goto next_clause;
		if (cl->phrase && stop_phrase(&u)) {
			unquote(pl, cl, &u);
			goto next_clause;
		}
		if (cl->phrase) {
			qterm *t = new_term(pl);
			if (!t)
				goto next_clause;
			strbuf w = STRBUF_INIT;
			for (int i = 0; i < u.n; i++) {
				if (i)
					strbuf_putc(&w, ' ');
				strbuf_puts(&w, u.w[i]);
			}
			t->word = strbuf_detach(&w);
			t->phrase = true;
			t->negated = cl->negated;
			add_alt(t, t->word, strlen(t->word), false);
			goto next_clause;
		}
		for (int i = 0; i < u.n;) {
			qterm *t = new_term(pl);
			if (!t)
				break;
			t->negated = cl->negated;
			int span = 1, syn = -1;
			for (int len = u.n - i < 4 ? u.n - i : 4; len >= 1 && syn < 0; len--) {
				syn = find_synonym(e, u.w, i, len);
				if (syn >= 0)
					span = len;
			}
			strbuf w = STRBUF_INIT;
			for (int j = i; j < i + span; j++) {
				if (j > i)
					strbuf_putc(&w, ' ');
				strbuf_puts(&w, u.w[j]);
			}
			t->word = strbuf_detach(&w);
			bool last = c == q->nclauses - 1 && i + span == u.n;
			t->stop = span == 1 && atlas_is_stopword(t->word, strlen(t->word));
			/* one letter typed after other words is the start of a word too, completed from
			 * the titles that hold those words (expand_prefix) */
			t->prefix = last && span == 1 && !q->trailing_space && !cl->negated &&
				    (strlen(t->word) >= 2 || (!t->stop && has_content_term(pl, t)));
			if (span > 1)
				add_alt(t, t->word, strlen(t->word), false);
			else {
				word_alts(t, t->word);
				if (u.n == 1)
					hump_alts(e, t, cl->text);
				plural_alt(e, t);
			}
			if (syn >= 0)
				expand_synonyms(e, t, syn);
			else if (!t->stop && !cl->negated && !pl->no_correct) {
				const char *fix = correct_word(e, t->word, t->prefix, pl);
				if (fix) {
					/* an unknown word is replaced in the search; a known but rare one
					 * ("election" beside "selection") is only offered as did_you_mean */
					t->correction = strdup(fix);
					if (vocab_df(e, t->word, strlen(t->word)) == 0) {
						add_alt(t, fix, strlen(fix), false);
						pl->replaced = true;
					}
					pl->corrected = true;
				}
			}
			t->prefix_from = t->nalts;
			if (t->prefix)
				expand_prefix(e, pl, t);
			i += span;
		}
	next_clause:
		for (int i = 0; i < u.n; i++)
			free(u.w[i]);
	}
	/* a query of one excluded word alone excludes from nothing: it is an option's name ("-j",
	 * "--verbose"), what the reader looks for */
	for (int i = 0; i < pl->nterms && q->nclauses == 1 && q->clauses[0].negated && !q->clauses[0].phrase; i++)
		pl->terms[i].negated = false;
	/* if every word is a stop word, they are the query */
	int content = 0;
	for (int i = 0; i < pl->nterms; i++)
		content += !pl->terms[i].negated && !pl->terms[i].stop;
	for (int i = 0; i < pl->nterms && !content; i++)
		pl->terms[i].stop = false;
	for (int i = 0; i < pl->nterms; i++)
		pl->npositive += !pl->terms[i].negated && !pl->terms[i].stop;
}

/* Writes term t's alternatives to out as one group; a completion kept to titles and keywords gets
 * its column filter when filters is set (the fts and fields tables), not over the titles table. */
static void term_group(strbuf *out, const qterm *t, plan *pl, bool record, bool filters)
{
	strbuf_putc(out, '(');
	for (int k = 0; k < t->nalts; k++) {
		if (k)
			strbuf_puts(out, " OR ");
		if (t->alt_titled[k] && filters)
			strbuf_puts(out, "{title keywords} : "); /* same names in the fts and fields tables */
		strbuf_puts(out, t->alts[k]);
		if (record && pl->nphrases < MAX_PHRASES) {
			pl->phrase_term[pl->nphrases] = (int)(t - pl->terms);
			pl->term_phrases[t - pl->terms] |= (sqlite3_int64)1 << pl->nphrases;
		}
		if (record)
			pl->nphrases++;
	}
	strbuf_putc(out, ')');
}

static void build_expressions(plan *pl)
{
	int np = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		if (np) {
			strbuf_puts(&pl->strict, " AND ");
			strbuf_puts(&pl->relaxed, " OR ");
			strbuf_puts(&pl->titles_strict, " AND ");
			strbuf_puts(&pl->titles_relaxed, " OR ");
		}
		term_group(&pl->strict, t, pl, false, true);
		term_group(&pl->relaxed, t, pl, true, true);
		term_group(&pl->titles_strict, t, pl, false, false);
		term_group(&pl->titles_relaxed, t, pl, false, false);
		np++;
	}
	if (!np)
		return;
	int nneg = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (!t->negated)
			continue;
		strbuf *exprs[4] = { &pl->strict, &pl->relaxed, &pl->titles_strict, &pl->titles_relaxed };
		for (int k = 0; k < 4; k++) {
			if (!nneg) {
				strbuf wrapped = STRBUF_INIT;
				strbuf_printf(&wrapped, "(%s)", strbuf_str(exprs[k]));
				strbuf_free(exprs[k]);
				*exprs[k] = wrapped;
			}
			strbuf_puts(exprs[k], " NOT ");
			term_group(exprs[k], t, pl, false, k < 2);
		}
		if (nneg)
			strbuf_puts(&pl->excluded, " OR ");
		term_group(&pl->excluded, t, pl, false, true);
		nneg++;
	}
}

/**************************************************************************************************
** Retrieval and ranking.
*/

/* Where a MATCH expression is looked for, narrowest first: the titles table, the fields table
 * (titles, keywords, headings, descriptions), the fts table (whole pages). */
typedef enum { TIER_TITLES, TIER_FIELDS, TIER_PAGES } match_tier;

static const char *const tier_names[] = { "titles", "important fields", "whole pages" };

/* Takes one row a MATCH expression gave, scored b, with the match record's row_* describing it:
 * the page becomes a candidate of the query, keeping its best score and what it matched. */
typedef struct row_sink {
	atlas_engine *e;
	bool strict;
	match_tier tier;
	int rows;
} row_sink;

static void take_row(void *ctx, sqlite3_int64 rowid, double b)
{
	row_sink *s = ctx;
	atlas_engine *e = s->e;
	s->rows++;
	int d = (int)rowid - 1; /* doc ids are 1..ndocs in order */
	if (d < 0 || d >= e->ndocs || e->excluded[d] == e->generation)
		return;
	candidate *c = &e->cand[d];
	if (e->mark[d] != e->generation) {
		e->mark[d] = e->generation;
		e->touched[e->ntouched++] = d;
		memset(c, 0, sizeof(*c));
		c->inst_n = -1;
	}
	/* the all-words and any-word expressions number their phrases alike */
	c->strict |= s->strict;
	c->phrases |= e->rec.row_phrases;
	c->title_phrases |= e->rec.row_title;
	c->keyword_phrases |= e->rec.row_keywords;
	c->keywords_known |= s->tier != TIER_TITLES;
	if (s->tier == TIER_PAGES && e->rec.row_n >= 0) {
		c->inst_start = e->rec.row_start;
		c->inst_n = e->rec.row_n;
	}
	if (b > c->bm25)
		c->bm25 = b;
}

/* Whether the plan's expressions are evaluated over the postings the engine holds: its phrases
 * added to them in the order build_expressions writes them (the positive terms' alternatives, then
 * the negated terms'), one group per term. False when the engine holds none or a phrase is not one
 * they evaluate as FTS5 would. */
static bool held_expression(atlas_engine *e, const plan *pl)
{
	if (!e->postings)
		return false;
	postings_reset(e->postings);
	for (int neg = 0; neg < 2; neg++)
		for (int i = 0; i < pl->nterms; i++) {
			const qterm *t = &pl->terms[i];
			if (neg ? !t->negated : t->negated || t->stop)
				continue;
			for (int k = 0; k < t->nalts; k++) {
				unsigned cols = t->alt_titled[k] ? (1u << FTS_TITLE) | (1u << FTS_KEYWORDS)
								 : POSTINGS_ALL_COLUMNS;
				if (postings_add(e->postings, e->analyzer, t->alts[k], cols, i, neg))
					return false;
			}
		}
	return true;
}

/* Runs one MATCH expression over tier's table: the whole pages (fts), their important fields (the
 * fields table: the fts columns but body, same rowids and column order, so atlas_rank scores them
 * alike) or their titles (the titles table: the title column alone), scoring every row and keeping
 * what it matched; matches kept from a narrower tier are not all of the page's. With held, the
 * expression (whole pages only) is evaluated over the engine's postings instead, to the same rows,
 * scores and matches. Takes at most cap rows from SQLite (the held postings, small, are taken
 * whole). Adds to *rows the rows seen. Returns 0 or ATLAS_ESQL. */
static int run_match(atlas_engine *e, const char *expr, bool strict, match_tier tier, bool held,
		     long cap, int *rows, atlas_error *err)
{
	row_sink sink = { e, strict, tier, 0 };
	if (held && tier == TIER_PAGES && postings_run(e->postings, &e->rec, strict, take_row, &sink) >= 0) {
		*rows += sink.rows;
		return 0;
	}
	sqlite3_stmt *st = tier == TIER_TITLES ? e->st_match_titles
			   : tier == TIER_FIELDS ? e->st_match_fields
						 : e->st_match;
	sqlite3_bind_text(st, 1, expr, -1, SQLITE_STATIC);
	int rc = SQLITE_DONE;
	/* at most cap rows: the candidates budget (a step stopped there keeps what it found) */
	while (sink.rows < cap && (rc = sqlite3_step(st)) == SQLITE_ROW)
		take_row(&sink, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
	if (rc == SQLITE_ROW)
		rc = SQLITE_DONE;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	*rows += sink.rows;
	if (rc != SQLITE_DONE)
		return atlas_error_set(err, ATLAS_ESQL, "search failed: %s", sqlite3_errmsg(e->db));
	return 0;
}

/* Marks the pages expr matches over whole pages as excluded for this generation. Returns 0 or
 * ATLAS_ESQL. */
static int exclude_pages(atlas_engine *e, const char *expr, atlas_error *err)
{
	sqlite3_stmt *st = e->st_match_rows;
	sqlite3_bind_text(st, 1, expr, -1, SQLITE_STATIC);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 rowid = sqlite3_column_int64(st, 0);
		if (rowid >= 1 && rowid <= e->ndocs)
			e->excluded[rowid - 1] = e->generation;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE)
		return atlas_error_set(err, ATLAS_ESQL, "search failed: %s", sqlite3_errmsg(e->db));
	return 0;
}

/* The pages holding stem s[0..n), from the index's stem table (0 when unknown). */
static int stem_df(atlas_engine *e, const char *s, int n)
{
	sqlite3_stmt *st = e->st_stem_df;
	sqlite3_bind_text(st, 1, s, n, SQLITE_STATIC);
	int df = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return df;
}

/* Pages of a phrase, at most those of its rarest position; a position's tokens stand for one
 * another (colocated), so it has the pages of its most common one. */
typedef struct phrase_df {
	atlas_engine *e;
	int df;       /* so far, over the positions closed; -1 before the first */
	int pos_df;   /* the open position's */
	bool open;
} phrase_df;

static void phrase_df_close(phrase_df *x)
{
	if (x->open && (x->df < 0 || x->pos_df < x->df))
		x->df = x->pos_df;
	x->open = false;
}

static int phrase_df_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	phrase_df *x = ctx;
	(void)start;
	(void)end;
	int df = stem_df(x->e, tok, n);
	if (!(tflags & FTS5_TOKEN_COLOCATED)) {
		phrase_df_close(x);
		x->pos_df = 0;
		x->open = true;
	}
	if (df > x->pos_df)
		x->pos_df = df;
	return SQLITE_OK;
}

/* The pages of alternative alt (an FTS5 string: quoted, quotes doubled inside). */
static int alt_df(atlas_engine *e, const char *alt)
{
	size_t n = strlen(alt);
	char *text = malloc(n + 1);
	if (!text)
		return 0;
	size_t o = 0;
	for (size_t i = 1; i < n; i++) {
		if (alt[i] == '"' && alt[i + 1] == '"')
			text[o++] = alt[i++];
		else if (alt[i] != '"' && alt[i] != '*')
			text[o++] = alt[i];
	}
	text[o] = '\0';
	phrase_df x = { e, -1, 0, false };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY, text, (int)o, phrase_df_token, &x);
	phrase_df_close(&x);
	free(text);
	return x.df > 0 ? x.df : 0;
}

/* Adds the posting entries of each token (colocated ones included: each has a list of its own) to
 * the sum at ctx. */
static int postings_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	struct { atlas_engine *e; long sum; } *x = ctx;
	(void)tflags;
	(void)start;
	(void)end;
	/* a page's entry holds each position, and every one is scored: a word's occurrences when
	 * the vocabulary knows it, else its stem's pages (stop words have no stem entry) */
	int df = stem_df(x->e, tok, n);
	int cf = vocab_cf(x->e, tok, (size_t)n);
	x->sum += df > cf ? df : cf;
	return SQLITE_OK;
}

/* The posting-list entries a step may read for alternative alt (an FTS5 string): the page count
 * of every token of it, summed. */
static long alt_postings(atlas_engine *e, const char *alt)
{
	size_t n = strlen(alt);
	char *text = malloc(n + 1);
	if (!text)
		return 0;
	size_t o = 0;
	for (size_t i = 1; i < n; i++) {
		if (alt[i] == '"' && alt[i + 1] == '"')
			text[o++] = alt[i++];
		else if (alt[i] != '"' && alt[i] != '*')
			text[o++] = alt[i];
	}
	text[o] = '\0';
	struct { atlas_engine *e; long sum; } x = { e, 0 };
	atlas_analyze(e->analyzer, FTS5_TOKENIZE_QUERY, text, (int)o, postings_token, &x);
	free(text);
	return x.sum;
}

/* Admits the plan's positive terms rarest first (by the postings of their alternatives) while
 * their sum fits half the postings budget (two steps, the all-words and any-word passes, fit),
 * and while they are at most ADMIT_TERMS words of ADMIT_ALTS alternatives, the first one always;
 * the others become stop words (left
 * out of the expressions) and mark the search partial. Sets pl->step_cost to the admitted sum. */
static void budget_terms(atlas_engine *e, plan *pl)
{
	long cost[MAX_TERMS];
	int order[MAX_TERMS], n = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		cost[i] = 0;
		for (int k = 0; k < t->nalts; k++)
			cost[i] += alt_postings(e, t->alts[k]);
		int j = n++;
		while (j > 0 && cost[order[j - 1]] > cost[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	long sum = 0;
	int alts = 0, admitted = 0;
	for (int j = 0; j < n; j++) {
		qterm *t = &pl->terms[order[j]];
		long c = cost[order[j]];
		/* a step's cost grows with the words and alternatives scored on every row, as well
		 * as with their postings: at most ADMIT_TERMS words and ADMIT_ALTS alternatives on
		 * any page (a word on none costs nothing) */
		if (j == 0 || c == 0 ||
		    (admitted < ADMIT_TERMS && alts + t->nalts <= ADMIT_ALTS &&
		     sum + c <= pl->budget.postings / 2)) {
			sum += c;
			if (c) {
				alts += t->nalts;
				admitted++;
			}
			continue;
		}
		t->stop = true;
		pl->npositive--;
		pl->budget_hit = true;
	}
	pl->step_cost = sum;
}

/* Estimates the pages holding any content word of the plan and no excluded word, from the page
 * counts of the stems, as if words (and a word's alternatives) fell on pages independently:
 * N (1 - prod(1 - df/N)) prod(1 - df_excluded/N). The few lookups stand in for counting every
 * page of the expression, which for the most common words walks lists as long as the index. */
static int estimate_total(atlas_engine *e, const plan *pl)
{
	double n = e->ndocs > 0 ? e->ndocs : 1, none = 1.0, kept = 1.0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated) {
			for (int k = 0; k < t->nalts; k++) {
				double df = alt_df(e, t->alts[k]);
				kept *= 1.0 - (df < n ? df : n) / n;
			}
			continue;
		}
		if (t->stop)
			continue;
		for (int k = 0; k < t->nalts; k++) {
			/* a completion kept to titles and keywords is left out (its pages there are not
			 * counted); the total is never below the pages found */
			if (t->alt_titled[k])
				continue;
			double df = alt_df(e, t->alts[k]);
			none *= 1.0 - (df < n ? df : n) / n;
		}
	}
	return (int)(n * (1.0 - none) * kept + 0.5);
}

static bool has_topic(const atlas_doc *d, const char *topic)
{
	size_t n = strlen(topic);
	for (int k = 0; k < d->ntopics; k++)
		if (strncmp(d->topics[k], topic, n) == 0 && (d->topics[k][n] == '\0' || d->topics[k][n] == '/'))
			return true;
	return false;
}

/* Whether the search filters by type (type or types). */
static bool type_filtered(const atlas_search_params *p, const atlas_search_more *m)
{
	return p->type || m->ntypes > 0;
}

/* Whether the search filters by topic (topic or topics) or by the caller's accept. */
static bool topic_filtered(const atlas_search_params *p, const atlas_search_more *m)
{
	return p->topic || m->ntopics > 0 || m->accept;
}

/* Whether page d passes the search's type filter: type, or any of types. */
static bool type_passes(const atlas_search_params *p, const atlas_search_more *m, const atlas_doc *d)
{
	if (!type_filtered(p, m))
		return true;
	if (p->type && strcmp(d->type, p->type) == 0)
		return true;
	for (int k = 0; k < m->ntypes; k++)
		if (strcmp(d->type, m->types[k]) == 0)
			return true;
	return false;
}

/* Whether page d passes the search's other filters: topic, any of topics, and accept. */
static bool topic_passes(const atlas_search_params *p, const atlas_search_more *m, const atlas_doc *d)
{
	if (m->accept && !m->accept(d, m->accept_ctx))
		return false;
	if (!p->topic && m->ntopics == 0)
		return true;
	if (p->topic && has_topic(d, p->topic))
		return true;
	for (int k = 0; k < m->ntopics; k++)
		if (has_topic(d, m->topics[k]))
			return true;
	return false;
}

static double type_weight(int type_id)
{
	static const double w[] = { [ATLAS_TYPE_EXPLAINER] = RANK_TYPE_EXPLAINER, [ATLAS_TYPE_GUIDE] = RANK_TYPE_GUIDE,
				    [ATLAS_TYPE_TOPIC] = RANK_TYPE_TOPIC, [ATLAS_TYPE_PAGE] = RANK_TYPE_PAGE,
				    [ATLAS_TYPE_OTHER] = RANK_TYPE_PAGE };
	return type_id >= 0 && type_id <= ATLAS_TYPE_OTHER ? w[type_id] : RANK_TYPE_PAGE;
}

static void add_title_pat(atlas_engine *e, qterm *t, const char *text, bool prefix)
{
	if (t->ntitle_pats == MAX_ALTS)
		return;
	strbuf sb = STRBUF_INIT;
	strbuf_putc(&sb, ' ');
	if (prefix)
		strbuf_puts(&sb, text);
	else {
		engine_normalize(e, &sb, text, true);
		strbuf_putc(&sb, ' ');
	}
	/* a pattern of one byte after its space is a prefix of words of any second byte */
	const char *pat = strbuf_str(&sb);
	t->title_pat_bits[t->ntitle_pats] = pat[1] && pat[1] != ' ' && pat[2]
						    ? atlas_word_bit((unsigned char)pat[1], (unsigned char)pat[2])
						    : ~0ULL;
	t->title_pats[t->ntitle_pats++] = strbuf_detach(&sb);
}

/* Computes, once per query, the IDF of every content term and alternative (in phrase order, for
 * atlas_rank) and the title patterns of every content term. */
static void term_weights(atlas_engine *e, plan *pl)
{
	for (int i = 0; i < pl->nterms; i++) {
		qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		/* rarer words decide more of a page's coverage than common ones */
		const char *w = t->correction && vocab_df(e, t->word, strlen(t->word)) == 0 ? t->correction : t->word;
		int df = 0;
		for (const char *c = w; *c;) {
			size_t n = strcspn(c, " ");
			int wdf = vocab_df(e, c, n);
			if (!df || (wdf && wdf < df))
				df = wdf;
			c += n;
			c += *c == ' ';
		}
		t->idf = log(1.0 + (double)e->ndocs / (df + 1.0));
		/* the work of the term: the pages of its most common alternative, counted by stems
		 * ("idempot", typed, is no word of the text, but the stem of every page saying
		 * idempotency; a synonym may be far more common than the word typed) */
		int work = df;
		/* only whether the rarest term's work passes RANK_BROAD_DF matters: looked up only
		 * when it could (never on an index of fewer pages) */
		bool settled = pl->est_df && pl->est_df <= RANK_BROAD_DF;
		for (int k = 0; k < t->nalts && !settled && e->ndocs > RANK_BROAD_DF && work <= RANK_BROAD_DF; k++)
			if (!t->alt_titled[k]) {
				int adf = alt_df(e, t->alts[k]);
				if (adf > work)
					work = adf;
			}
		if (!pl->est_df || work < pl->est_df)
			pl->est_df = work ? work : 1;
		int any_df = 0;
		for (int k = 0; k < t->nalts; k++) {
			/* the alternative's own rarity: its least frequent word */
			const char *a = t->alts[k] + 1;
			size_t alen = strlen(a);
			while (alen && (a[alen - 1] == '"' || a[alen - 1] == '*'))
				alen--;
			int adf = 0;
			for (size_t at = 0; at < alen;) {
				size_t n = strcspn(a + at, " \"");
				if (n > alen - at)
					n = alen - at;
				int wdf = n ? vocab_df(e, a + at, n) : 0;
				if (n && (!adf || (wdf && wdf < adf)))
					adf = wdf;
				at += n + 1;
			}
			any_df += adf;
			double aidf = adf ? log(1.0 + (double)e->ndocs / (adf + 1.0)) : t->idf;
			t->alt_idf[k] = (k >= t->prefix_from ? RANK_PREFIX_ONLY : 1.0) * aidf;
			if (pl->nidf < FTS_MAX_PHRASES)
				pl->idf[pl->nidf++] = t->alt_idf[k];
		}
		pl->est_any += any_df < e->ndocs ? any_df : e->ndocs;
		add_title_pat(e, t, w, false);
		t->prefix_pat = -1;
		if (t->prefix && !t->prefix_covered) {
			t->prefix_pat = t->ntitle_pats;
			add_title_pat(e, t, t->word, true);
			if (t->prefix_pat == t->ntitle_pats)
				t->prefix_pat = -1;
		}
		for (int k = 0; t->syn_group && k < e->nsyn; k++)
			if (e->syn[k].group == t->syn_group)
				add_title_pat(e, t, e->syn[k].text, false);
	}
}

/* Share of the content words found in a page's title or keywords: a word is there when one of its
 * phrases matched that column (mask: the candidate's title_phrases or keyword_phrases), or when a
 * pattern of it is in norm (the field's stems, of signature sig), looked for only where the mask
 * cannot tell (a word being typed, whose completions are not all phrases; phrases past the 63rd;
 * a mask not masked, whose column no row taken held: keywords of a page met in its title alone)
 * and the signature does not rule it out. When exact is not NULL, also whether the title is the
 * query (query_stems). */
/* Whether one of term t's title patterns is in norm (stems between spaces) whose word signature
 * is sig. */
static bool has_title_pat(const qterm *t, const char *norm, unsigned long long sig)
{
	for (int k = 0; k < t->ntitle_pats; k++)
		if ((sig & t->title_pat_bits[k]) && strstr(norm, t->title_pats[k]))
			return true;
	return false;
}

/* Adds to found the pages touched from *from on that pass the search's type and topic filters, and
 * moves *from past them. Returns the new count. */
static int count_matching(const atlas_engine *e, const atlas_search_params *p, const atlas_search_more *m,
			  int *from, int found)
{
	if (!type_filtered(p, m) && !topic_filtered(p, m)) {
		found += e->ntouched - *from;
		*from = e->ntouched;
		return found;
	}
	for (; *from < e->ntouched; (*from)++) {
		const atlas_doc *doc = &e->docs[e->touched[*from]];
		found += type_passes(p, m, doc) && topic_passes(p, m, doc);
	}
	return found;
}

static double title_match(const plan *pl, sqlite3_int64 mask, bool masked, const char *norm,
			  unsigned long long sig, bool *exact, const char *query_stems)
{
	int hit = 0, n = 0;
	bool masks = masked && pl->nphrases <= MAX_PHRASES;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		n++;
		if (masks && (mask & pl->term_phrases[i])) {
			hit++;
			continue;
		}
		if (masks) {
			/* the word's own phrase missed: only a word it starts may still be there */
			hit += t->prefix_pat >= 0 && (sig & t->title_pat_bits[t->prefix_pat]) &&
			       strstr(norm, t->title_pats[t->prefix_pat]) != NULL;
			continue;
		}
		hit += has_title_pat(t, norm, sig);
	}
	if (exact) {
		size_t ql = strlen(query_stems);
		*exact = hit == n && ql > 0 && strlen(norm) == ql + 2 && strncmp(norm + 1, query_stems, ql) == 0;
	}
	return n ? (double)hit / n : 0;
}

/* Share of the query's content words (or a word a prefix starts, or a synonym) among the stems of
 * a page's path: words no FTS5 column holds, so looked for by their title patterns alone. */
static double path_match(const plan *pl, const atlas_doc *d)
{
	int hit = 0, n = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		n++;
		hit += has_title_pat(t, d->path_norm, d->path_sig);
	}
	return n ? (double)hit / n : 0;
}

/* Matches of one word a proximity test remembers: a field holding the word that many times is
 * tested on its first ones. */
#define PROXIMITY_SLOTS 1024

/* The slot of key (non-zero) in an open-addressing table of size slots (a power of two): where it
 * is, or the empty slot where it would go. */
static unsigned slot_of(const unsigned *slot, unsigned size, unsigned key)
{
	unsigned h = (key * 2654435761u) & (size - 1);
	while (slot[h] && slot[h] != key)
		h = (h + 1) & (size - 1);
	return h;
}

/* Share of the neighbouring pairs of the query's content words (quoted phrases aside) that the
 * page holds side by side, in the query's order, in one of its fields ("paged attention" in
 * "PagedAttention", not in "paged KV caches ... attention"); a stop word between two query words
 * lets one word more between them. Read from the matches atlas_rank recorded for the page: 0 when
 * they were not recorded, or when the query has no such pair. */
static double proximity_of(const atlas_engine *e, const plan *pl, const candidate *c)
{
	if (c->inst_n <= 0 || pl->nphrases > MAX_PHRASES)
		return 0;
	const fts_inst *in = e->rec.inst + c->inst_start;
	int pairs = 0, near = 0, prev = -1, gap = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated)
			continue;
		if (t->stop) {
			gap++;
			continue;
		}
		if (t->phrase) {
			prev = -1;
			continue;
		}
		if (prev >= 0) {
			/* the positions of the earlier word, open addressing on (position, field) in a
			 * table at least twice their number */
			int count = 0;
			for (int k = 0; k < c->inst_n; k++)
				count += pl->phrase_term[in[k].phrase] == prev;
			if (count > PROXIMITY_SLOTS / 2)
				count = PROXIMITY_SLOTS / 2;
			unsigned size = 16;
			while (size < 2u * (unsigned)count)
				size *= 2;
			unsigned slot[PROXIMITY_SLOTS];
			memset(slot, 0, size * sizeof(*slot));
			int kept = 0;
			for (int k = 0; k < c->inst_n && kept < count; k++) {
				if (pl->phrase_term[in[k].phrase] != prev)
					continue;
				unsigned key = (unsigned)in[k].off * 8u + (unsigned)in[k].col + 1u;
				slot[slot_of(slot, size, key)] = key;
				kept++;
			}
			bool found = false;
			for (int k = 0; k < c->inst_n && kept && !found; k++) {
				if (pl->phrase_term[in[k].phrase] != i)
					continue;
				for (int g = 1; g <= 1 + gap && g <= in[k].off && !found; g++) {
					unsigned key = (unsigned)(in[k].off - g) * 8u + (unsigned)in[k].col + 1u;
					found = slot[slot_of(slot, size, key)] == key;
				}
			}
			pairs++;
			near += found;
		}
		prev = i;
		gap = 0;
	}
	return pairs ? (double)near / pairs : 0;
}

static bool locate(const atlas_engine *e, const atlas_doc *d, int col, int off, int *sec, bool *head,
		   int *idx);

/* Words of the query a heading would hold to be the query: every word that is not excluded (stop
 * words too), an identifier counting its parts. */
static int query_words(const plan *pl)
{
	int n = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated)
			continue;
		n++;
		for (const char *c = t->word; *c; c++)
			n += strchr(" -_./:", *c) != NULL && c[1] && !strchr(" -_./:", c[1]);
	}
	return n;
}

/* Sections of a page a heading match looks at, at most. */
#define HEADING_SLOTS 64

/* How much one section heading of the page is the query: the best, over its headings, of the
 * share of the query's content words the heading holds times how much of the heading
 * they make (the query's words over the heading's, at most 1). 1 for a heading that is the query
 * ("When to Log" for "when to log"); 0 when no heading holds a content word or the matches were
 * not recorded. */
static double heading_match(const atlas_engine *e, const plan *pl, const candidate *c, int doc)
{
	if (c->inst_n <= 0 || pl->nphrases > MAX_PHRASES)
		return 0;
	const fts_inst *in = e->rec.inst + c->inst_start;
	const atlas_doc *d = &e->docs[doc];
	int secs[HEADING_SLOTS];
	unsigned masks[HEADING_SLOTS];
	int ns = 0;
	for (int k = 0; k < c->inst_n; k++) {
		int sec, idx;
		bool head;
		if (in[k].col != FTS_HEADINGS || !locate(e, d, in[k].col, in[k].off, &sec, &head, &idx))
			continue;
		int j = 0;
		while (j < ns && secs[j] != sec)
			j++;
		if (j == ns) {
			if (ns == HEADING_SLOTS)
				continue;
			secs[ns] = sec;
			masks[ns++] = 0;
		}
		masks[j] |= 1u << pl->phrase_term[in[k].phrase];
	}
	if (!ns)
		return 0;
	double all = 0;
	for (int i = 0; i < pl->nterms; i++)
		all += !pl->terms[i].negated && !pl->terms[i].stop;
	int words = query_words(pl);
	double best = 0;
	for (int j = 0; j < ns && all > 0; j++) {
		double got = 0;
		for (int i = 0; i < pl->nterms; i++)
			got += (masks[j] >> i) & 1u;
		int nhead = e->sections[secs[j]].nhead;
		double tight = nhead > words ? (double)words / nhead : 1.0;
		if (got / all * tight > best)
			best = got / all * tight;
	}
	return best;
}

static double coverage_of(const plan *pl, candidate *c)
{
	if (c->strict || pl->npositive <= 1)
		return 1.0;
	bool seen[MAX_TERMS] = { false };
	for (int p = 0; p < pl->nphrases && p < MAX_PHRASES; p++)
		if (c->phrases & ((sqlite3_int64)1 << p))
			seen[pl->phrase_term[p]] = true;
	double got = 0, all = 0;
	bool every = true;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		all += t->idf;
		if (seen[i])
			got += t->idf;
		else
			every = false;
	}
	c->strict = every;
	return all > 0 ? got / all : 1.0;
}

/* Whether a candidate matched only through the prefix alternative of the prefix word. */
static bool prefix_only(const plan *pl, const candidate *c)
{
	int p = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		if (t->prefix) {
			if (t->prefix_from == 0)
				return false; /* completions alone: no word itself to prefer */
			bool exact = false, pre = false;
			for (int k = 0; k < t->nalts && p + k < MAX_PHRASES; k++) {
				bool m = c->phrases & ((sqlite3_int64)1 << (p + k));
				if (k >= t->prefix_from)
					pre |= m;
				else
					exact |= m;
			}
			return pre && !exact;
		}
		p += t->nalts;
	}
	return false;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

typedef struct ranked {
	int doc;
	double score;
} ranked;

static int cmp_ranked(const void *a, const void *b, void *ctx)
{
	const ranked *x = a, *y = b;
	const atlas_engine *e = ctx;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(e->docs[x->doc].path, e->docs[y->doc].path);
}

/* Newest first (lastmod, YYYY-MM-DD, compares as text; pages without one last), then as
 * cmp_ranked. */
static int cmp_lastmod(const void *a, const void *b, void *ctx)
{
	const ranked *x = a, *y = b;
	const atlas_engine *e = ctx;
	int c = strcmp(e->docs[y->doc].lastmod, e->docs[x->doc].lastmod);
	return c ? c : cmp_ranked(a, b, ctx);
}

/* Restores the heap order of h[0..n) (least first) from index i down. */
static void min_heap_down(double *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, m = i;
		if (l < n && h[l] < h[m])
			m = l;
		if (l + 1 < n && h[l + 1] < h[m])
			m = l + 1;
		if (m == i)
			return;
		double t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Applies the path and proximity boosts to the ranked pages rk[0..n), whose first shown are the
 * best by score, sorted: to those first, then to each other page that, boosted the most the two
 * can, would pass the least of the shown best boosted scores so far (a heap of them); the others
 * keep their scores, which cannot reach the page shown. */
static void boost_shown(atlas_engine *e, const plan *pl, ranked *rk, int n, size_t shown)
{
	const double most = (1 + RANK_PATH_WORDS) * (1 + RANK_PROXIMITY) * (1 + RANK_HEADING_MATCH);
	double heap[ATLAS_OFFSET_MAX + ATLAS_LIMIT_MAX];
	int nh = 0, cap = shown < sizeof(heap) / sizeof(*heap) ? (int)shown : (int)(sizeof(heap) / sizeof(*heap));
	for (int i = 0; i < n; i++) {
		candidate *c = &e->cand[rk[i].doc];
		if (nh == cap && rk[i].score * most < heap[0])
			continue;
		c->path = path_match(pl, &e->docs[rk[i].doc]);
		c->proximity = proximity_of(e, pl, c);
		c->heading = heading_match(e, pl, c, rk[i].doc);
		c->score *= (1 + RANK_PATH_WORDS * c->path) * (1 + RANK_PROXIMITY * c->proximity) *
			    (1 + RANK_HEADING_MATCH * c->heading);
		rk[i].score = c->score;
		if (nh < cap) {
			heap[nh++] = c->score;
			if (nh == cap)
				for (int k = nh / 2 - 1; k >= 0; k--)
					min_heap_down(heap, nh, k);
		} else if (c->score > heap[0]) {
			heap[0] = c->score;
			min_heap_down(heap, nh, 0);
		}
	}
}

/**************************************************************************************************
** Snippets and sections.
*/

/* A match inside one section: the token index in the section's heading or body part (see the
 * sections table in common/schema.c) and the phrase. */
typedef struct sec_match {
	int idx;
	int phrase;
} sec_match;

/* Where a match at position off of fts column col of page d falls: the section (its index in
 * e->sections), whether in the heading part, and the token index in that part. Returns false for
 * the keywords column and for positions no section holds. */
static bool locate(const atlas_engine *e, const atlas_doc *d, int col, int off, int *sec, bool *head,
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
	for (int i = 0; i < nm && !whole; i++) {
		int f = m[i].idx > 2 ? m[i].idx - 2 : 0;
		sqlite3_int64 seen = 0;
		int score = 0;
		for (int k = 0; k < nm; k++) {
			if (m[k].idx < f)
				continue;
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

/* Appends to sb, as HTML, the tokens [from, to) of the nsp tokens of text (sp: their spans, valid
 * from index from on) with the matches m[0..nm) in <mark> and "…" where the text is cut; when whole,
 * the text around the tokens too. Returns false, writing nothing, when there is nothing to show or
 * the spans do not fit the text. */
static bool render_snippet(strbuf *sb, const char *text, int ntext, const atlas_span *sp, int nsp, int from,
			   int to, const sec_match *m, int nm, const match_record *rec, bool whole)
{
	if (from >= to || to > nsp || to - from > 64)
		return false;
	unsigned char hit[64] = { 0 };
	for (int i = 0; i < nm; i++) {
		int size = m[i].phrase < FTS_MAX_PHRASES ? rec->phrase_size[m[i].phrase] : 1;
		for (int j = 0; j < (size > 0 ? size : 1); j++) {
			int k = m[i].idx + j - from;
			if (k >= 0 && k < to - from && (j == 0 || !hit[k]))
				hit[k] = j == 0 ? 1 : 2;
		}
	}
	for (int k = from; k < to; k++)
		if (sp[k].start < 0 || sp[k].end > ntext || sp[k].start > sp[k].end ||
		    (k > from && sp[k].start < sp[k - 1].start))
			return false;
	int cursor = whole ? 0 : sp[from].start;
	if (from > 0)
		strbuf_puts(sb, "…");
	bool open = false;
	for (int k = 0; k < to - from; k++) {
		const atlas_span *s = &sp[from + k];
		if (!open && (hit[k] == 1 || (hit[k] == 2 && (k == 0 || !hit[k - 1]))) && s->start >= cursor) {
			strbuf_append_html(sb, text + cursor, (size_t)(s->start - cursor));
			strbuf_puts(sb, "<mark>");
			cursor = s->start;
			open = true;
		}
		if (open && (k + 1 == to - from || hit[k + 1] != 2)) {
			if (s->end > cursor) {
				strbuf_append_html(sb, text + cursor, (size_t)(s->end - cursor));
				cursor = s->end;
			}
			strbuf_puts(sb, "</mark>");
			open = false;
		}
	}
	int stop = whole && to == nsp ? ntext : sp[to - 1].end;
	if (stop > cursor)
		strbuf_append_html(sb, text + cursor, (size_t)(stop - cursor));
	if (to < nsp)
		strbuf_puts(sb, "…");
	return true;
}

/* Makes sure the matches of page d are in the match record: the candidate pass keeps them unless
 * the record was full or the pass read only some fields; then one query on that page alone. */
static void ensure_recorded(atlas_engine *e, int d, const plan *pl)
{
	candidate *c = &e->cand[d];
	if (c->inst_n >= 0)
		return;
	c->inst_n = 0;
	int limit = e->rec.limit;
	e->rec.limit = e->rec.ninst + RANK_RECORD_MAX; /* one page always fits */
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

/* Grows *buf (of *cap elements of size sz) to hold n. Returns 0, or -1 leaving it as it was. */
static int grow(void **buf, int *cap, int n, size_t sz)
{
	if (n < 1)
		n = 1; /* a buffer, even for nothing: no arithmetic on a null pointer */
	if (n <= *cap)
		return 0;
	int c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	void *p = realloc(*buf, (size_t)c * sz);
	if (!p)
		return -1;
	*buf = p;
	*cap = c;
	return 0;
}

/* Grows the per-section arrays of x to hold n sections. Returns 0 or -1. */
static int grow_sections(sections_scratch *x, int n)
{
	if (n <= x->cap)
		return 0;
	sec_score *s = realloc(x->scores, (size_t)n * sizeof(*s));
	if (s)
		x->scores = s;
	int *h = realloc(x->head, (size_t)n * sizeof(int));
	if (h)
		x->head = h;
	int *b = realloc(x->body, (size_t)n * sizeof(int));
	if (b)
		x->body = b;
	int *t = realloc(x->touched, (size_t)n * sizeof(int));
	if (t)
		x->touched = t;
	if (!s || !h || !b || !t)
		return -1;
	x->cap = n;
	return 0;
}

/* Scores the sections of page d (ns of them, from section first) into x->scores, best first, from
 * its matches x->pm[0..np) in record order (phrase after phrase). */
static void score_sections(sections_scratch *x, int ns, const placed *pm, int np, const double *w)
{
	for (int s = 0; s < ns; s++) {
		x->scores[s] = (sec_score){ s, 0.0 };
		x->head[s] = x->body[s] = 0;
	}
	for (int i = 0; i < np;) {
		int phrase = pm[i].phrase, ntouched = 0;
		for (; i < np && pm[i].phrase == phrase; i++) {
			int s = pm[i].sec;
			if (!x->head[s] && !x->body[s])
				x->touched[ntouched++] = s;
			if (pm[i].idx < 0)
				x->head[s] = 1;
			else
				x->body[s]++;
		}
		double wp = phrase < FTS_MAX_PHRASES ? w[phrase] : 1.0;
		for (int k = 0; k < ntouched; k++) {
			int s = x->touched[k];
			int reps = x->body[s] > RANK_SEC_REPEATS ? RANK_SEC_REPEATS : x->body[s];
			x->scores[s].score += wp * (x->head[s] ? RANK_SEC_HEADING : 1.0) + wp * RANK_SEC_REPEAT * reps;
			x->head[s] = x->body[s] = 0;
		}
	}
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

/* The stored text of section sec (an index in e->sections), with the spans of at least its first
 * need tokens: the engine's copy when it holds one, else the row read by st_section_text and
 * decompressed, valid until that statement is reset (the caller resets it either way) and the next
 * row is read. Returns false when the row cannot be read. */
static bool section_row(atlas_engine *e, int sec, int need, section_text *out)
{
	if (e->texts) {
		*out = e->texts[sec];
		return true;
	}
	return engine_section_row(e, sec, need, out) == 0;
}

/* Best-matching sections of every hit on the page, from the matches the candidate pass recorded:
 * each section scored by the phrases it holds (the phrase's IDF, RANK_SEC_HEADING times in the
 * heading, RANK_SEC_REPEAT more for each of up to RANK_SEC_REPEATS repeats in the body), text read
 * and highlighted only for the best SECTION_KEEP. The hit's snippet is the first of those with a
 * match in its body; a hit that has none shows its description. */
/* Sets hit->title_html to the title with its matches (the lead section's heading matches among
 * x->pm[0..np)) in <mark>, in res->text; leaves it as it is when the title holds none or its text
 * cannot be read. Uses x->m and x->hb as scratch. */
static void mark_title(atlas_engine *e, atlas_results *res, atlas_hit *hit, sections_scratch *x, int np)
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
	if (section_row(e, sec, si->nhead, &row) && row.decoded && row.heading &&
	    render_snippet(&x->hb, row.heading, row.nheading, row.decoded, si->nhead, 0, si->nhead, x->m, nm,
			   &e->rec, true) &&
	    !x->hb.oom) {
		char *t = atlas_arena_strndup(&res->text, strbuf_str(&x->hb), x->hb.len);
		if (t)
			hit->title_html = t;
	}
	if (!e->texts)
		sqlite3_reset(e->st_section_text);
}

static void fill_sections(atlas_engine *e, atlas_results *res, const plan *pl)
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
			if (locate(e, d, in[i].col, in[i].off, &sec, &hd, &idx))
				x.pm[np++] = (placed){ sec - first, hd ? idx - e->sections[sec].nhead : idx, in[i].phrase };
		}
		score_sections(&x, ns, x.pm, np, w);
		mark_title(e, res, hit, &x, np);
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
			/* the spans found only as far as the body's window reaches, unless the engine holds
			 * them all */
			section_text row;
			if (section_row(e, sec, si->nhead + to, &row) && row.decoded) {
				const char *heading = row.heading, *anchor = row.anchor, *text = row.body;
				int nheading = row.nheading, ntext = row.nbody;
				const atlas_span *sp = row.decoded;
				strbuf *sn = &x.sn, *hb = &x.hb;
				strbuf_reset(sn);
				bool has_snippet = heading && text && anchor &&
						   render_snippet(sn, text, ntext, sp + si->nhead, parts[1], from, to, bm,
								  nbody_m, &e->rec, false);
				/* the hit's snippet and its first section's are one string */
				char *snippet = NULL;
				if (has_snippet && !sn->oom)
					snippet = atlas_arena_strndup(&res->text, strbuf_str(sn), sn->len);
				if (snippet && nbody_m && !hit->snippet)
					hit->snippet = snippet;
				if (snippet && si->level > 0 && hit->nsections < 3) {
					strbuf_reset(hb);
					snippet_window(x.m, nhead_m, si->nhead, 64, true, &from, &to);
					if (!render_snippet(hb, heading, nheading, sp, si->nhead, from, to, x.m, nhead_m,
							    &e->rec, true))
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
	free(x.pm);
	free(x.sm);
	free(x.m);
	free(x.sp);
}

static void fill_explain(atlas_engine *e, atlas_hit *h, const plan *pl, const candidate *c,
			 double title, bool exact, double cov, double tw, double pw, bool ponly)
{
	static const char *names[] = { "title", "keywords", "headings", "description", "body", "defs" };
	static const double w[] = { RANK_W_TITLE, RANK_W_KEYWORDS, RANK_W_HEADINGS, RANK_W_DESCRIPTION,
				    RANK_W_BODY, RANK_W_DEFS };
	strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st = e->st_explain;
	sqlite3_bind_text(st, 1, strbuf_str(&pl->relaxed), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, e->docs[h->doc].id);
	strbuf_printf(&sb, "bm25 %.3f; by field alone:", c->bm25);
	if (sqlite3_step(st) == SQLITE_ROW)
		for (int k = 0; k < FTS_NCOLS; k++)
			strbuf_printf(&sb, " %s %.3f (weight %g)%s", names[k], sqlite3_column_double(st, k), w[k],
				      k < FTS_NCOLS - 1 ? "," : "");
	sqlite3_reset(st);
	strbuf_printf(&sb, "; coverage %.2f%s; title words %.2f%s; keyword words %.2f; type x%.2f;"
		      " path words %.2f; words side by side %.2f; priority x%.3f%s", cov,
		      c->strict ? " (all words)" : "", title, exact ? " (exact title)" : "", c->keywords, tw,
		      c->path, c->proximity, pw,
		      ponly ? "; prefix only" : "");
	h->explain = strbuf_detach(&sb);
}

/**************************************************************************************************
** Search.
*/

static void did_you_mean(atlas_results *res, const plan *pl)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (i)
			strbuf_putc(&sb, ' ');
		if (t->negated)
			strbuf_putc(&sb, '-');
		if (t->phrase)
			strbuf_printf(&sb, "\"%s\"", t->word);
		else
			strbuf_puts(&sb, t->correction ? t->correction : t->word);
	}
	res->did_you_mean = strbuf_detach(&sb);
}

static void explain_plan(atlas_results *res, const plan *pl)
{
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		strbuf_printf(&sb, "term '%s'%s%s%s%s:", t->word, t->negated ? " excluded" : "",
			      t->stop ? " (stop word, ranks only)" : "", t->phrase ? " phrase" : "",
			      t->prefix ? " prefix" : "");
		for (int k = 0; k < t->nalts; k++)
			strbuf_printf(&sb, " %s", t->alts[k]);
		if (t->correction)
			strbuf_printf(&sb, " [corrected to '%s']", t->correction);
		if (t->syn_group)
			strbuf_printf(&sb, " [synonym group %d]", t->syn_group);
		strbuf_putc(&sb, '\n');
	}
	strbuf_printf(&sb, "all words: %s\nany word:  %s\n", strbuf_str(&pl->strict), strbuf_str(&pl->relaxed));
	res->explain = strbuf_detach(&sb);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int atlas_parse_work_budget(const char *s, atlas_work *out)
{
	long v[3] = { 0, 0, 0 };
	int k = 0;
	const char *p = s;
	for (; k < 3; k++) {
		char *end = (char *)p;
		if (*p != ',' && *p) {
			if (*p < '0' || *p > '9')
				return ATLAS_EINVAL;
			v[k] = strtol(p, &end, 10);
			if (v[k] <= 0 || v[k] > 1000000000L)
				return ATLAS_EINVAL;
		}
		if (*end == '\0')
			break;
		if (*end != ',')
			return ATLAS_EINVAL;
		p = end + 1;
	}
	if (k == 3 || !*s)
		return ATLAS_EINVAL;
	*out = (atlas_work){ v[0], v[1], v[2] };
	return 0;
}

/* The work budget of every search (atlas_set_work_budget). */
static atlas_work work_budget = { ATLAS_WORK_POSTINGS, ATLAS_WORK_CANDIDATES, ATLAS_WORK_EXPANSIONS };

void atlas_set_work_budget(const atlas_work *b)
{
	work_budget = (atlas_work){ ATLAS_WORK_POSTINGS, ATLAS_WORK_CANDIDATES, ATLAS_WORK_EXPANSIONS };
	if (b && b->postings > 0)
		work_budget.postings = b->postings;
	if (b && b->candidates > 0)
		work_budget.candidates = b->candidates;
	if (b && b->expansions > 0)
		work_budget.expansions = b->expansions;
}

int atlas_search(atlas_results *res, atlas_engine *e, const atlas_search_params *p, atlas_error *err)
{
	return atlas_search_with(res, e, p, NULL, err);
}

int atlas_search_with(atlas_results *res, atlas_engine *e, const atlas_search_params *p,
		      const atlas_search_more *more, atlas_error *err)
{
	static const atlas_search_more none;
	const atlas_search_more *m = more ? more : &none;
	double t0 = now_ms();
	memset(res, 0, sizeof(*res));
	res->text = (atlas_arena)ATLAS_ARENA_INIT(RESULTS_TEXT_BLOCK);
	res->total_exact = true;
	int limit = p->limit ? p->limit : 10;
	res->offset = p->offset;
	res->limit = limit;
	if (limit < 1 || limit > ATLAS_LIMIT_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "limit must be from 1 to %d", ATLAS_LIMIT_MAX);
	if (p->offset < 0 || p->offset > ATLAS_OFFSET_MAX)
		return atlas_error_set(err, ATLAS_EINVAL, "offset must be from 0 to %d", ATLAS_OFFSET_MAX);
	if (p->type && strcmp(p->type, "explainer") && strcmp(p->type, "guide") &&
	    strcmp(p->type, "topic") && strcmp(p->type, "page"))
		return atlas_error_set(err, ATLAS_EINVAL, "type must be explainer, guide, topic or page");
	if (m->sort != ATLAS_SORT_RELEVANCE && m->sort != ATLAS_SORT_LASTMOD)
		return atlas_error_set(err, ATLAS_EINVAL, "sort must be relevance or lastmod");
	parsed_query q;
	if (query_parse(&q, p->q, p->q ? strlen(p->q) : 0, ATLAS_QUERY_MAX_BYTES))
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	res->query = strdup(q.clean);
	plan pl;
	plan_init(&pl);
	pl.no_correct = p->no_correct;
	pl.budget = work_budget;
	analyze_query(e, &pl, &q);
	budget_terms(e, &pl);
	build_expressions(&pl);
	term_weights(e, &pl);
	parsed_query_free(&q);
	if (p->explain)
		explain_plan(res, &pl);
	if (pl.corrected) {
		did_you_mean(res, &pl);
		res->corrected = pl.replaced && res->did_you_mean;
	}

	int rc = 0;
	ranked *rk = NULL;
	int nrk = 0;
	if (pl.strict.len == 0)
		goto facets; /* nothing to look for: an empty result, not an error */
	if (++e->generation == 0)
		e->generation = 1, memset(e->mark, 0, (size_t)e->ndocs * sizeof(*e->mark)),
		memset(e->excluded, 0, (size_t)e->ndocs * sizeof(*e->excluded));
	e->ntouched = 0;
	/* Retrieval, with the work bounded however common the words are:
	 * 1. with several content words, the pages holding all of them (FTS5 walks the rarest list);
	 * 2. when those are fewer than the page of results needs, the pages holding any of them,
	 *    ranked by coverage;
	 * 3. when the words are so common that scoring every page holding one would cost too much,
	 *    the titles first, then the fields that matter most (title, keywords, headings,
	 *    description), the body only when those give too few: each a list far shorter than the
	 *    next, walked only when the one before gave too few; the total is then estimated from the
	 *    words' page counts (counting the pages of such words walked lists as long as the index,
	 *    half the work).
	 * Pages met in an earlier step keep what they matched there; a step is enough when it has
	 * found enough pages of the type and topic asked for. */
	int want = p->offset + limit;
	if (want < RANK_MIN_CANDIDATES)
		want = RANK_MIN_CANDIDATES;
	int found = 0, counted = 0, nrows = 0; /* found: pages that pass the filters */
	bool broad = pl.est_df > RANK_BROAD_DF;
	const char *passes[2] = { strbuf_str(&pl.strict), strbuf_str(&pl.relaxed) };
	/* the all-words pass only when the any-word pass alone could be large */
	bool all_first = pl.npositive > 1 && pl.est_any > RANK_SINGLE_PASS_ROWS;
	e->rec.ninst = 0;
	memcpy(e->rec.idf, pl.idf, sizeof(pl.idf));
	e->rec.nidf = pl.nidf;
	bool held = held_expression(e, &pl);
	const char *titled[2] = { strbuf_str(&pl.titles_strict), strbuf_str(&pl.titles_relaxed) };
	/* a narrower table's NOT leaves out only the pages whose titles or fields hold the word: the
	 * pages holding it anywhere are found first and left out of every step */
	if (broad && pl.excluded.len && (rc = exclude_pages(e, strbuf_str(&pl.excluded), err)))
		goto out;
	strbuf trace = STRBUF_INIT; /* the steps taken, for explain */
	int steps = 0;
	for (int pass = all_first ? 0 : 1; pass < 2 && found < want; pass++) {
		for (int tier = broad ? TIER_TITLES : TIER_PAGES; tier <= TIER_PAGES && found < want; tier++) {
			/* the work budget: a step after the first only when its postings and a row
			 * still fit; any step only when the caller's stop hook does not end the search */
			if ((m->stop && m->stop(m->stop_ctx)) ||
			    (steps && (pl.work.postings + pl.step_cost > pl.budget.postings ||
				       pl.work.candidates >= pl.budget.candidates))) {
				pl.budget_hit = true;
				pass = 2;
				break;
			}
			steps++;
			pl.work.postings += pl.step_cost;
			nrows = 0;
			rc = run_match(e, tier == TIER_TITLES ? titled[pass] : passes[pass], pass == 0, tier, held,
				       pl.budget.candidates - pl.work.candidates, &nrows, err);
			pl.work.candidates += nrows;
			if (nrows >= pl.budget.candidates - (pl.work.candidates - nrows))
				pl.budget_hit = true;
			if (rc) {
				strbuf_free(&trace);
				goto out;
			}
			found = count_matching(e, p, m, &counted, found);
			if (tier != TIER_PAGES && found >= want)
				pl.partial = true;
			if (p->explain)
				strbuf_printf(&trace, "retrieval: %s, %s: %d rows, %d pages so far\n",
					      pass == 0 ? "all words" : "any word", tier_names[tier], nrows, found);
		}
	}
	if (p->explain && res->explain) {
		strbuf all = STRBUF_INIT;
		strbuf_puts(&all, res->explain);
		strbuf_puts(&all, strbuf_str(&trace));
		if (!all.oom) {
			free(res->explain);
			res->explain = strbuf_detach(&all);
		}
		strbuf_free(&all);
	}
	if (p->explain && res->explain) {
		strbuf w = STRBUF_INIT;
		strbuf_printf(&w, "%swork: postings %ld of %ld, candidates %ld of %ld, expansions %ld of %ld%s\n",
			      res->explain, pl.work.postings, pl.budget.postings, pl.work.candidates,
			      pl.budget.candidates, pl.work.expansions, pl.budget.expansions,
			      pl.budget_hit ? ": partial" : "");
		if (!w.oom) {
			free(res->explain);
			res->explain = strbuf_detach(&w);
		}
		strbuf_free(&w);
	}
	strbuf_free(&trace);

	/* query stems for the exact-title test: every word, stop words included */
	strbuf qs = STRBUF_INIT;
	for (int i = 0; i < pl.nterms; i++) {
		if (pl.terms[i].negated)
			continue;
		if (qs.len)
			strbuf_putc(&qs, ' ');
		engine_normalize(e, &qs, pl.terms[i].correction ? pl.terms[i].correction : pl.terms[i].word, true);
	}
	rk = malloc((size_t)(e->ntouched ? e->ntouched : 1) * sizeof(ranked));
	res->topics = calloc(32, sizeof(atlas_facet));
	if (!rk || !res->topics) {
		strbuf_free(&qs);
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto out;
	}
	/* the pages found, in page order (the facets list topics in the order pages show them): the
	 * few sorted, the many read off the marks, either way without a walk of every page per step */
	if ((size_t)e->ntouched * 8 < (size_t)e->ndocs)
		qsort(e->touched, (size_t)e->ntouched, sizeof(int), cmp_int);
	else
		for (int d = 0, n = 0; d < e->ndocs; d++)
			if (e->mark[d] == e->generation)
				e->touched[n++] = d;
	int ntype[ATLAS_TYPE_OTHER] = { 0 };
	int topic_page[32];
	for (int i = 0; i < e->ntouched; i++) {
		int d = e->touched[i];
		candidate *c = &e->cand[d];
		const atlas_doc *doc = &e->docs[d];
		bool type_ok = type_passes(p, m, doc);
		bool topic_ok = topic_passes(p, m, doc);
		/* facets count with the other filter applied; with the caller's accept (any mix of
		 * types and topics), with every filter applied */
		if (m->accept && !type_ok)
			topic_ok = false;
		if (topic_ok && doc->type_id < ATLAS_TYPE_OTHER)
			ntype[doc->type_id]++;
		for (int k = 0; type_ok && (topic_ok || !m->accept) && k < doc->ntop_topics; k++) {
			/* topic facet: the top-level topics of the matching pages */
			int ti = doc->top_topics[k], f;
			for (f = 0; f < res->ntopics && topic_page[f] != ti; f++)
				;
			if (f == res->ntopics && res->ntopics < 32) {
				topic_page[f] = ti;
				res->topics[f] = (atlas_facet){ e->docs[ti].path + 3, e->docs[ti].title, 0 };
				res->ntopics++;
			}
			if (f < res->ntopics)
				res->topics[f].count++;
		}
		if (!type_ok || !topic_ok)
			continue;
		bool exact = false;
		double title = title_match(&pl, c->title_phrases, true, doc->title_norm, doc->title_sig, &exact,
					   strbuf_str(&qs));
		double kw = title_match(&pl, c->keyword_phrases, c->keywords_known, doc->keywords_norm,
					doc->keywords_sig, NULL, NULL);
		double cov = coverage_of(&pl, c);
		res->total_all += c->strict || pl.npositive <= 1;
		double tw = type_weight(doc->type_id);
		double pw = RANK_PRIORITY_BASE + RANK_PRIORITY_SCALE * doc->priority;
		bool ponly = prefix_only(&pl, c);
		if (doc->listing > 0 && title < 1.0)
			tw *= 1 - (1 - RANK_LISTING_PRIOR) * doc->listing;
		c->title = title;
		c->keywords = kw;
		c->exact = exact;
		c->path = c->proximity = c->heading = 0;
		c->score = c->bm25 * (RANK_COVERAGE_FLOOR + (1 - RANK_COVERAGE_FLOOR) * cov * sqrt(cov)) *
			   (1 + RANK_TITLE_WORDS * title) * (exact ? RANK_TITLE_EXACT : 1.0) *
			   (1 + RANK_KEYWORD_WORDS * kw) * tw * pw * (ponly ? RANK_PREFIX_ONLY : 1.0);
		rk[nrk++] = (ranked){ d, c->score };
	}
	strbuf_free(&qs);
	if (e->count_only)
		goto counted; /* typeahead: the counts only, no page of hits */
	/* only the page shown is sorted: a query may match tens of thousands of pages */
	size_t shown = (size_t)(p->offset + limit);
	if (m->sort == ATLAS_SORT_LASTMOD) {
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_lastmod, e);
	} else {
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_ranked, e);
		boost_shown(e, &pl, rk, nrk, shown);
		atlas_best_first(rk, (size_t)nrk, shown, sizeof(ranked), cmp_ranked, e);
	}
counted:
	res->total = nrk;
	res->total_exact = !pl.partial;
	if (pl.partial && !type_filtered(p, m) && !topic_filtered(p, m)) {
		/* the pages found are those whose important fields hold a word; the rest estimated */
		int estimate = estimate_total(e, &pl);
		if (estimate > nrk)
			res->total = estimate;
	}
	for (int k = 0; k < ATLAS_TYPE_OTHER; k++)
		if (ntype[k])
			res->types[res->ntypes++] = (atlas_facet){ atlas_type_names[k], atlas_type_names[k], ntype[k] };

	if (e->count_only)
		goto facets;
	int start = p->offset < nrk ? p->offset : nrk;
	int end = start + limit < nrk ? start + limit : nrk;
	res->hits = calloc((size_t)(end - start ? end - start : 1), sizeof(atlas_hit));
	if (!res->hits) {
		rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
		goto out;
	}
	strbuf tb = STRBUF_INIT;
	for (int i = start; i < end; i++) {
		atlas_hit *h = &res->hits[res->nhits++];
		h->doc = rk[i].doc;
		h->score = rk[i].score;
		strbuf_reset(&tb);
		strbuf_append_html(&tb, e->docs[h->doc].title, strlen(e->docs[h->doc].title));
		h->title_html = tb.oom ? NULL : atlas_arena_strndup(&res->text, strbuf_str(&tb), tb.len);
		if (p->explain) {
			const atlas_doc *doc = &e->docs[h->doc];
			candidate *c = &e->cand[h->doc];
			fill_explain(e, h, &pl, c, c->title, c->exact, coverage_of(&pl, c), type_weight(doc->type_id),
				     RANK_PRIORITY_BASE + RANK_PRIORITY_SCALE * doc->priority, prefix_only(&pl, c));
		}
	}
	strbuf_free(&tb);
	fill_sections(e, res, &pl);
	goto out;
facets:
	res->hits = calloc(1, sizeof(atlas_hit));
out:
	free(rk);
	res->partial = pl.budget_hit;
	res->work = pl.work;
	for (int i = 0; i < pl.nunquoted; i++)
		res->unquoted[res->nunquoted++] = pl.unquoted[i];
	pl.nunquoted = 0;
	plan_free(&pl);
	res->took_ms = now_ms() - t0;
	if (rc)
		atlas_results_free(res);
	return rc;
}

void atlas_results_free(atlas_results *res)
{
	if (!res)
		return;
	for (int i = 0; i < res->nhits; i++)
		free(res->hits[i].explain);
	atlas_arena_free(&res->text);
	free(res->hits);
	free(res->topics);
	free(res->query);
	free(res->did_you_mean);
	free(res->explain);
	for (int i = 0; i < res->nunquoted; i++)
		free(res->unquoted[i]);
	memset(res, 0, sizeof(*res));
}
