/* plan.c - a search's terms and their MATCH expressions: the reader's words analyzed, with
 * synonyms, spelling corrections and the completions of the word being typed. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edits.h"
#include "rank.h"
#include "search_internal.h"
#include "stopwords.h"

/* Starts an empty plan: everything but the terms zeroed (15 KB a search, mostly unused). */
void plan_init(plan *pl)
{
	memset(pl, 0, offsetof(plan, terms));
	pl->typed = pl->typed_phrase = pl->kept_to_topic = -1;
}

void plan_free(plan *pl)
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

/* The spelling correction's scan, made twice where the compiler can: with the popcount
 * instruction (not in the baseline x86-64) and without it, the one the CPU has chosen when the
 * program loads. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SCAN_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define SCAN_CLONES
#endif

/* The vocabulary entry among by_len[from..to) nearest word w[0..len) (of letter set letters) within
 * max edits, more frequent than df (df x TYPO_RARE_RATIO when df > 0), the more frequent of equals;
 * NULL when none is. An entry whose letters differ from w's in more than 2 x max letters is passed
 * over unread: further than max edits. */
SCAN_CLONES static const vocab_entry *nearest_word(const atlas_engine *e, int from, int to, const char *w, int len,
						    unsigned long long letters, int df, int max)
{
	const vocab_entry *best = NULL;
	int best_d = max + 1;
	for (int j = from; j < to; j++) {
		if (__builtin_popcountll(letters ^ e->by_len_letters[j]) > 2 * max)
			continue;
		const vocab_entry *v = &e->vocab[e->by_len[j]];
		if (v->df <= df)
			continue;
		if (df > 0 && v->df < df * TYPO_RARE_RATIO)
			continue;
		int d = atlas_edits(w, len, v->term, v->len, false, max);
		if (d > max)
			continue;
		if (d < best_d || (d == best_d && v->df > best->df)) {
			best = v;
			best_d = d;
		}
	}
	return best;
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
static const char *correct_word(atlas_engine *e, const char *w, bool maybe_prefix, plan *pl)
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
	int lo_len = len - max < 0 ? 0 : len - max, hi_len = len + max > VOCAB_MAX_LEN ? VOCAB_MAX_LEN : len + max;
	unsigned long long letters = letter_set(w, len);
	/* the expansions budget: the words compared, checked before the scan */
	long scan = e->by_len_start[hi_len + 1] - e->by_len_start[lo_len];
	if (pl->work.expansions + scan > pl->budget.expansions) {
		pl->budget_hit = true;
		return NULL;
	}
	pl->work.expansions += scan;
	/* a known word's correction is only offered (did_you_mean), never searched: typeahead's
	 * counts (count_only) have no use for it, and the budget is charged all the same */
	if (df > 0 && e->count_only)
		return NULL;
	/* the scan's answer depends on the word alone: remembered, as typeahead's counts and every
	 * search of the same word ask it again (the budget is charged all the same) */
	fix_slot *slot = &e->fixes[engine_slot(w, (size_t)len, FIX_SLOTS)];
	if (slot->len == len && memcmp(slot->word, w, (size_t)len) == 0)
		return slot->fix;
	const vocab_entry *best = nearest_word(e, e->by_len_start[lo_len], e->by_len_start[hi_len + 1], w, len,
					       letters, df, max);
	const char *fix = best && !inflection_of(e, w, len, best->term, best->len) ? best->term : NULL;
	memcpy(slot->word, w, (size_t)len);
	slot->len = len;
	slot->fix = fix;
	return fix;
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

/* A clause typed as a command-line option ("--expires", "-k" alone, "--log-level=debug") also
 * asks for its first word with the dashes, as the analyzer writes an option beside its word: the
 * page that defines the option comes before those that only use the word. */
static void option_alt(qterm *t, const query_clause *cl, int nclauses)
{
	const char *w = cl->text;
	int d = 0;
	if (cl->negated)
		d = nclauses == 1; /* "-k" alone: an option's name, not an exclusion */
	else
		while (d < 2 && w[d] == '-')
			d++;
	if (!cl->negated)
		w += d;
	if (!d || !isalpha((unsigned char)w[0]))
		return;
	char buf[300];
	int n = snprintf(buf, sizeof(buf), "%.*s%s", d, "--", t->word);
	int k = t->nalts;
	if (n > 0 && n < (int)sizeof(buf))
		add_alt(t, buf, (size_t)n, false);
	if (t->nalts > k)
		t->option_alt = k;
}

static qterm *new_term(plan *pl)
{
	if (pl->nterms == MAX_TERMS)
		return NULL;
	qterm *t = &pl->terms[pl->nterms++];
	memset(t, 0, sizeof(*t));
	t->option_alt = -1;
	return t;
}

void analyze_query(atlas_engine *e, plan *pl, const parsed_query *q)
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
				if (i == 0)
					option_alt(t, cl, q->nclauses);
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
			if (t->option_alt < 0 || k == t->option_alt)
				pl->field_phrases[t - pl->terms] |= (sqlite3_int64)1 << pl->nphrases;
		}
		if (record)
			pl->nphrases++;
	}
	strbuf_putc(out, ')');
}

void build_expressions(plan *pl)
{
	int np = 0;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		pl->content[pl->ncontent++] = i;
		if (t->prefix && pl->typed < 0) {
			pl->typed = i;
			pl->typed_phrase = pl->nphrases;
		}
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

