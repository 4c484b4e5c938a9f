/* score.c - a candidate's score: the terms' weights, the title, keyword, path, proximity and
 * heading matches, coverage, the boosts of the page shown, and their explanation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"
#include "search_internal.h"
#include "stopwords.h"

double type_weight(const atlas_doc *doc)
{
	static const double w[] = { [ATLAS_TYPE_EXPLAINER] = RANK_TYPE_EXPLAINER, [ATLAS_TYPE_GUIDE] = RANK_TYPE_GUIDE,
				    [ATLAS_TYPE_TOPIC] = RANK_TYPE_TOPIC, [ATLAS_TYPE_PAGE] = RANK_TYPE_PAGE,
				    [ATLAS_TYPE_OTHER] = RANK_TYPE_PAGE };
	int t = doc->type_id;
	return (t >= 0 && t <= ATLAS_TYPE_OTHER ? w[t] : RANK_TYPE_PAGE) * (doc->code_listing ? RANK_CODE_LISTING : 1.0);
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
 * atlas_rank) and the title patterns of every content term (not for a count-only search, which
 * scores nothing). */
void term_weights(atlas_engine *e, plan *pl)
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
		if (t->prefix && t->prefix_from > 0 && pl->nidf + t->nalts <= FTS_MAX_PHRASES) {
			pl->word_from = pl->nidf;
			pl->complete_from = pl->nidf + t->prefix_from;
			pl->complete_to = pl->nidf + t->nalts;
		}
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
		t->prefix_pat = -1;
		if (e->count_only)
			continue; /* typeahead's counts score no title */
		if (t->option_alt >= 0)
			continue; /* an option is in a title as written (its phrase), or not at all */
		add_title_pat(e, t, w, false);
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

/* Whether one of term t's title patterns is in norm (stems between spaces) whose word signature
 * is sig. */
static bool has_title_pat(const qterm *t, const char *norm, unsigned long long sig)
{
	for (int k = 0; k < t->ntitle_pats; k++)
		if ((sig & t->title_pat_bits[k]) && strstr(norm, t->title_pats[k]))
			return true;
	return false;
}


/* Whether a title (norm: its stems between spaces, " the while statement ") says what the query
 * says (query_stems: every word's stem, stop words included, "while statement"): its words are the
 * query's, in order, give or take stop words the query does not have ("The while Statement" for
 * "while statement", not "Statements"). */
static bool title_is_query(const char *norm, const char *query_stems)
{
	const char *q = query_stems, *w = norm;
	if (!*q)
		return false;
	while (*w) {
		w += *w == ' ';
		size_t n = strcspn(w, " ");
		if (!n)
			break;
		size_t qn = strcspn(q, " ");
		if (qn == n && strncmp(w, q, n) == 0) {
			q += qn;
			q += *q == ' ';
		} else if (!atlas_is_stopword(w, n))
			return false;
		w += n;
	}
	return !*q;
}

/* Share of the content words found in a page's title or keywords: a word is there when one of its
 * phrases matched that column (mask: the candidate's title_phrases or keyword_phrases), or when a
 * pattern of it is in norm (the field's stems, of signature sig), looked for only where the mask
 * cannot tell (a word being typed, whose completions are not all phrases; phrases past the 63rd;
 * a mask not masked, whose column no row taken held: keywords of a page met in its title alone)
 * and the signature does not rule it out; a word typed as an option, only where its option's phrase
 * matched (plan.field_phrases; it has no patterns). When exact is not NULL, also whether the title is the
 * query (query_stems), give or take stop words (title_is_query). */
static double title_match(const plan *pl, sqlite3_int64 mask, bool masked, const char *norm,
			  unsigned long long sig, bool *exact, const char *query_stems)
{
	int hit = 0, n = pl->ncontent;
	bool masks = masked && pl->nphrases <= MAX_PHRASES;
	for (int j = 0; j < n; j++) {
		int i = pl->content[j];
		const qterm *t = &pl->terms[i];
		if (masks && (mask & pl->field_phrases[i])) {
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
	if (exact)
		*exact = hit == n && title_is_query(norm, query_stems);
	return n ? (double)hit / n : 0;
}

/* Share of the query's content words (or a word a prefix starts, or a synonym) among the stems of
 * a page's path: words no FTS5 column holds, so looked for by their title patterns alone. */
static double path_match(const plan *pl, const atlas_doc *d)
{
	int hit = 0, n = pl->ncontent;
	for (int j = 0; j < n; j++)
		hit += has_title_pat(&pl->terms[pl->content[j]], d->path_norm, d->path_sig);
	return n ? (double)hit / n : 0;
}

/* Matches of one word a proximity test remembers: a field holding the word that many times is
 * tested on its first ones. */
#define PROXIMITY_SLOTS 1024

/* The slot of key (non-zero) in an open-addressing table of size slots (a power of two, 2 or
 * more): where it is, or the empty slot where it would go. The hash is the top bits of the
 * multiplicative one (its low bits would hold only the key's low bits: the column, and the
 * position's last bits). */
static unsigned slot_of(const unsigned *slot, unsigned size, unsigned key)
{
	unsigned h = (key * 2654435761u) >> (32 - __builtin_ctz(size));
	while (slot[h] && slot[h] != key)
		h = (h + 1) & (size - 1);
	return h;
}

/* Sets [*p0, *p1) to the spans proximity_of reads for term i's matches: its phrases, which
 * build_expressions numbers one after another, when the matches are in spans (spans set), else
 * the one span of all (0, 1). */
static void term_spans(const plan *pl, int i, bool spans, int *p0, int *p1)
{
	unsigned long long m = (unsigned long long)pl->term_phrases[i];
	if (!spans) {
		*p0 = 0;
		*p1 = 1;
	} else if (!m) {
		*p0 = *p1 = 0;
	} else {
		*p0 = __builtin_ctzll(m);
		*p1 = 64 - __builtin_clzll(m);
	}
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
	int counts[MAX_TERMS] = { 0 }; /* the page's recorded matches of each term */
	/* a row's matches are recorded phrase by phrase, in the expression's order: a term's are then
	 * the spans of its phrases, [from[p], to[p]) (one span of all, should the order not hold) */
	int from[MAX_PHRASES], to[MAX_PHRASES];
	int span_phrases = pl->nphrases, last = -1;
	for (int p = 0; p < pl->nphrases; p++)
		from[p] = to[p] = 0;
	for (int k = 0; k < c->inst_n; k++) {
		int ph = in[k].phrase;
		int term = pl->phrase_term[ph];
		if (term >= 0 && term < MAX_TERMS)
			counts[term]++;
		if (ph < last || ph >= pl->nphrases)
			span_phrases = 0;
		else if (ph != last)
			from[ph] = k;
		if (ph >= 0 && ph < pl->nphrases)
			to[ph] = k + 1;
		last = ph;
	}
	if (!span_phrases) {
		from[0] = 0;
		to[0] = c->inst_n;
	}
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
			int count = counts[prev];
			if (count > PROXIMITY_SLOTS / 2)
				count = PROXIMITY_SLOTS / 2;
			unsigned size = 16;
			while (size < 2u * (unsigned)count)
				size *= 2;
			unsigned slot[PROXIMITY_SLOTS];
			memset(slot, 0, size * sizeof(*slot));
			int kept = 0;
			int p0, p1;
			term_spans(pl, prev, span_phrases, &p0, &p1);
			for (int p = p0; p < p1 && kept < count; p++) {
				for (int k = from[p]; k < to[p] && kept < count; k++) {
					if (pl->phrase_term[in[k].phrase] != prev)
						continue;
					unsigned key = (unsigned)in[k].off * 8u + (unsigned)in[k].col + 1u;
					slot[slot_of(slot, size, key)] = key;
					kept++;
				}
			}
			bool found = false;
			term_spans(pl, i, span_phrases, &p0, &p1);
			for (int p = p0; p < p1 && kept && !found; p++) {
				for (int k = from[p]; k < to[p] && !found; k++) {
					if (pl->phrase_term[in[k].phrase] != i)
						continue;
					for (int g = 1; g <= 1 + gap && g <= in[k].off && !found; g++) {
						unsigned key = (unsigned)(in[k].off - g) * 8u + (unsigned)in[k].col +
							       1u;
						found = slot[slot_of(slot, size, key)] == key;
					}
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
 * not recorded. words is query_words(pl), all the number of the query's content words: the same for
 * every page, so counted once a search. */
static double heading_match(const atlas_engine *e, const plan *pl, const candidate *c, int doc, int words,
			    double all)
{
	if (c->inst_n <= 0 || pl->nphrases > MAX_PHRASES || all <= 0)
		return 0;
	const fts_inst *in = e->rec.inst + c->inst_start;
	const atlas_doc *d = &e->docs[doc];
	int secs[HEADING_SLOTS];
	unsigned masks[HEADING_SLOTS];
	int ns = 0;
	for (int k = 0; k < c->inst_n; k++) {
		int sec, idx;
		bool head;
		int term = pl->phrase_term[in[k].phrase];
		if (in[k].col != FTS_HEADINGS || !(pl->field_phrases[term] >> in[k].phrase & 1) ||
		    !locate_match(e, d, in[k].col, in[k].off, &sec, &head, &idx))
			continue; /* a word typed as an option is in a heading as the option alone */
		int j = 0;
		while (j < ns && secs[j] != sec)
			j++;
		if (j == ns) {
			if (ns == HEADING_SLOTS)
				continue;
			secs[ns] = sec;
			masks[ns++] = 0;
		}
		masks[j] |= 1u << term;
	}
	if (!ns)
		return 0;
	double best = 0;
	for (int j = 0; j < ns; j++) {
		double got = __builtin_popcount(masks[j]);
		int nhead = e->sections[secs[j]].nhead;
		double tight = nhead > words ? (double)words / nhead : 1.0;
		if (got / all * tight > best)
			best = got / all * tight;
	}
	return best;
}

double coverage_of(const plan *pl, candidate *c)
{
	if (c->strict || pl->npositive <= 1)
		return 1.0;
	bool seen[MAX_TERMS] = { false };
	for (int p = 0; p < pl->nphrases && p < MAX_PHRASES; p++)
		if (c->phrases & ((sqlite3_int64)1 << p))
			seen[pl->phrase_term[p]] = true;
	double got = 0, all = 0;
	bool every = true;
	for (int j = 0; j < pl->ncontent; j++) {
		int i = pl->content[j];
		const qterm *t = &pl->terms[i];
		all += t->idf;
		if (seen[i])
			got += t->idf;
		else
			every = false;
	}
	c->strict = every;
	return all > 0 ? got / all : 1.0;
}

/* How candidate c matched the word being typed: PREFIX_NONE when the query has no such word
 * (or only completions of it) or c matched neither it nor a completion, PREFIX_EXACT when c
 * matched the word itself, PREFIX_COMPLETION when only a completion. */
enum { PREFIX_NONE, PREFIX_EXACT, PREFIX_COMPLETION };
static int prefix_match(const plan *pl, const candidate *c)
{
	if (pl->typed < 0)
		return PREFIX_NONE;
	const qterm *t = &pl->terms[pl->typed];
	int p = pl->typed_phrase;
	if (t->prefix_from == 0)
		return PREFIX_NONE; /* completions alone: no word itself to prefer */
	bool exact = false, pre = false;
	for (int k = 0; k < t->nalts && p + k < MAX_PHRASES; k++) {
		bool m = c->phrases & ((sqlite3_int64)1 << (p + k));
		if (k >= t->prefix_from)
			pre |= m;
		else
			exact |= m;
	}
	return exact ? PREFIX_EXACT : pre ? PREFIX_COMPLETION : PREFIX_NONE;
}

bool prefix_only(const plan *pl, const candidate *c)
{
	return prefix_match(pl, c) == PREFIX_COMPLETION;
}

bool prefix_word_leads(const plan *pl)
{
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop || !t->prefix || t->prefix_from == 0)
			continue;
		for (int k = t->prefix_from; k < t->nalts; k++)
			if (t->alt_idf[k] / RANK_PREFIX_ONLY < t->alt_idf[0])
				return false;
		return true;
	}
	return false;
}

bool prefix_exact(const plan *pl, const candidate *c)
{
	return prefix_match(pl, c) == PREFIX_EXACT;
}

bool prefix_defined(const plan *pl, const candidate *c)
{
	if (pl->typed < 0)
		return false;
	const qterm *t = &pl->terms[pl->typed];
	for (int k = 0; k < t->prefix_from && pl->typed_phrase + k < MAX_PHRASES; k++)
		if (c->def_phrases & ((sqlite3_int64)1 << (pl->typed_phrase + k)))
			return true;
	return false;
}

int cmp_ranked(const void *a, const void *b, void *ctx)
{
	const ranked *x = a, *y = b;
	const atlas_engine *e = ctx;
	if (x->tier != y->tier)
		return x->tier < y->tier ? -1 : 1;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(e->docs[x->doc].path, e->docs[y->doc].path);
}

/* Newest first (lastmod, YYYY-MM-DD, compares as text; pages without one last), then as
 * cmp_ranked. */
int cmp_lastmod(const void *a, const void *b, void *ctx)
{
	const ranked *x = a, *y = b;
	const atlas_engine *e = ctx;
	int c = strcmp(e->docs[y->doc].lastmod, e->docs[x->doc].lastmod);
	return c ? c : cmp_ranked(a, b, ctx);
}

/* Whether proximity_of can be above 0 for some page: the query has two neighbouring content
 * words outside quoted phrases (the pairs proximity_of counts). */
static bool proximity_possible(const plan *pl)
{
	if (pl->nphrases > MAX_PHRASES)
		return false;
	bool prev = false; /* the content word before is a word, not a quoted phrase */
	for (int j = 0; j < pl->ncontent; j++) {
		bool word = !pl->terms[pl->content[j]].phrase;
		if (word && prev)
			return true;
		prev = word;
	}
	return false;
}

/* The most proximity_of can give a page whose whole-pages row matched phrases (its positions
 * unread): the share of the pairs it counts whose two terms both have a phrase among them. 1 when
 * the phrases do not all have a bit. */
static double proximity_most(const plan *pl, sqlite3_int64 phrases)
{
	if (pl->nphrases >= 63)
		return 1;
	int pairs = 0, both = 0, prev = -1;
	for (int i = 0; i < pl->nterms; i++) {
		const qterm *t = &pl->terms[i];
		if (t->negated || t->stop)
			continue;
		if (t->phrase) {
			prev = -1;
			continue;
		}
		if (prev >= 0) {
			pairs++;
			both += (pl->term_phrases[prev] & phrases) && (pl->term_phrases[i] & phrases);
		}
		prev = i;
	}
	return pairs ? (double)both / pairs : 0;
}

/* The most heading_match can give a page whose whole-pages row matched heading_phrases in its
 * section headings (its positions unread): its terms with a phrase there over all, the query's
 * content words, at most 1. 1 when the phrases do not all have a bit. */
static double heading_most(const plan *pl, sqlite3_int64 heading_phrases, double all)
{
	if (pl->nphrases >= 63)
		return 1;
	if (all <= 0)
		return 0;
	unsigned long long terms = 0;
	for (unsigned long long m = (unsigned long long)heading_phrases; m; m &= m - 1) {
		int term = pl->phrase_term[__builtin_ctzll(m)];
		if (term >= 0 && term < 64)
			terms |= 1ULL << term;
	}
	double most = __builtin_popcountll(terms) / all;
	return most < 1 ? most : 1;
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

/* The order of (tier, score) as one number, greater first: a score of tier 0 as it is, one of
 * tier 1 mapped into (-1, 0), below every score of tier 0 (scores are not negative). */
static double rank_key(int tier, double score)
{
	return tier ? -1.0 / (1.0 + score) : score;
}

/* Applies the path, proximity and heading boosts to the ranked pages rk[0..n), whose first shown
 * are the best by score, sorted: to those first, then to each other page that, boosted the most
 * this query's boosts can (a query without content words has none; proximity
 * needs two neighbouring words), would pass the least of the shown best boosted scores so far (a
 * heap of them), until none can; the others keep their scores, which cannot reach the page shown.
 * Pages from the postings table (whose matches are read for their boosts) are taken best first,
 * which raises the least shown score soonest, so that fewer have their matches read; rk[shown..n)
 * is then left in another order. */
void boost_shown(atlas_engine *e, const plan *pl, ranked *rk, int n, size_t shown)
{
	double heap[ATLAS_OFFSET_MAX + ATLAS_LIMIT_MAX];
	int nh = 0, cap = shown < sizeof(heap) / sizeof(*heap) ? (int)shown : (int)(sizeof(heap) / sizeof(*heap));
	int words = query_words(pl);
	double all = pl->ncontent; /* the query's content words */
	/* the most the proximity and heading boosts can give, and with the path's */
	const bool near = proximity_possible(pl), headed = all > 0 && pl->nphrases <= MAX_PHRASES;
	const double near_most = (near ? 1 + RANK_PROXIMITY : 1) * (headed ? 1 + RANK_HEADING_MATCH : 1);
	const double most = (all > 0 ? 1 + RANK_PATH_WORDS : 1) * near_most;
	int first = (size_t)n < shown ? n : (int)shown, end = n;
	for (int i = 0; i < end; i++) {
		if (i == first && nh == cap && pl->table_rows) {
			/* the pages past those shown that could pass, best first: a page from the
			 * postings table has its matches read (a search of FTS5) before its boosts */
			int m = first;
			for (int j = first; j < n; j++)
				if (rank_key(rk[j].tier, rk[j].score * most) >= heap[0]) {
					ranked t = rk[m];
					rk[m++] = rk[j];
					rk[j] = t;
				}
			qsort_r(rk + first, (size_t)(m - first), sizeof(*rk), cmp_ranked, e);
			end = m;
		}
		candidate *c = &e->cand[rk[i].doc];
		if (nh == cap && rank_key(rk[i].tier, rk[i].score * most) < heap[0]) {
			if (i >= first && pl->table_rows)
				break; /* every page after it scores less */
			continue;
		}
		c->path = path_match(pl, &e->docs[rk[i].doc]);
		if (nh == cap &&
		    rank_key(rk[i].tier, rk[i].score * (1 + RANK_PATH_WORDS * c->path) * near_most) < heap[0]) {
			c->path = 0;
			continue;
		}
		/* pages from the postings table come without positions (an engine reading it): read
		 * only for a page that, boosted the most its matched phrases allow, could pass; a page
		 * of the titles or fields alone has none, as from FTS5 */
		if (pl->table_rows && c->inst_n < 0 && c->page_row) {
			if (nh == cap) {
				double page_most =
					(1 + RANK_PATH_WORDS * c->path) *
					(near ? 1 + RANK_PROXIMITY * proximity_most(pl, c->phrases) : 1) *
					(headed ? 1 + RANK_HEADING_MATCH * heading_most(pl, c->heading_phrases, all) : 1);
				if (rank_key(rk[i].tier, rk[i].score * page_most) < heap[0]) {
					c->path = 0;
					continue;
				}
			}
			ensure_recorded(e, rk[i].doc, pl);
		}
		c->proximity = proximity_of(e, pl, c);
		c->heading = heading_match(e, pl, c, rk[i].doc, words, all);
		c->score *= (1 + RANK_PATH_WORDS * c->path) * (1 + RANK_PROXIMITY * c->proximity) *
			    (1 + RANK_HEADING_MATCH * c->heading);
		rk[i].score = c->score;
		double key = rank_key(rk[i].tier, c->score);
		if (nh < cap) {
			heap[nh++] = key;
			if (nh == cap)
				for (int k = nh / 2 - 1; k >= 0; k--)
					min_heap_down(heap, nh, k);
		} else if (key > heap[0]) {
			heap[0] = key;
			min_heap_down(heap, nh, 0);
		}
	}
}


/* The priority factor of page doc (RANK_PRIORITY_*). */
double priority_weight(const atlas_doc *doc)
{
	return RANK_PRIORITY_BASE + RANK_PRIORITY_SCALE * doc->priority;
}

/* Whether a title word (words: the folded title words between spaces) is word, starts with it, or
 * is it without a plural's ending ("cache" for "caches"), or two words side by side are ("Web
 * Socket", "WebSocket" folded in two, for "websocket" or "websock"): the word as typed, not another
 * form of its stem ("timing" for "time"). */
static bool title_has_form(const char *words, const char *word)
{
	size_t n = strlen(word);
	for (const char *w = words; (w = strchr(w, ' ')) && w[1]; w++) {
		const char *t = w + 1;
		size_t tn = strcspn(t, " ");
		if (tn >= n ? strncmp(t, word, n) == 0
			    : n - tn <= 2 && strncmp(t, word, tn) == 0 && word[n - 1] == 's')
			return true;
		/* the word's first part this word, its rest the start of the next */
		const char *u = t + tn;
		if (tn < n && *u == ' ' && u[1] && strncmp(t, word, tn) == 0) {
			size_t un = strcspn(u + 1, " "), rest = n - tn;
			if (un >= rest && strncmp(u + 1, word + tn, rest) == 0)
				return true;
		}
	}
	return false;
}

/* Share of the query's content words found in a field (the title, or the keywords) by their stem
 * alone, in no form of the word as typed (title_has_form): "timing" in a title for "time".
 * mask: the phrases matched in the field; norm, sig, words: its stems, their signature, its folded
 * words. Words of phrases, synonyms and corrections are not counted. */
static double stem_only_share(const plan *pl, sqlite3_int64 mask, const char *norm, unsigned long long sig,
			      const char *words)
{
	int n = pl->ncontent, only = 0;
	if (!n || !words)
		return 0;
	for (int j = 0; j < n; j++) {
		const qterm *t = &pl->terms[pl->content[j]];
		if (t->phrase || t->syn_group || t->correction || strchr(t->word, ' ') || t->option_alt >= 0)
			continue;
		bool in_field = (pl->nphrases <= MAX_PHRASES && (mask & pl->term_phrases[pl->content[j]])) ||
				has_title_pat(t, norm, sig);
		if (in_field && !title_has_form(words, t->word))
			only++;
	}
	return (double)only / n;
}

/* Scores candidate c of page doc before the boosts of the page shown: its BM25 times its coverage,
 * title, keyword, type, priority and prefix factors (qstems: the query's stems, for the exact-title
 * test). Sets c's title, keywords, exact, strict and score, clears its boosts. Returns the score. */
double score_candidate(const plan *pl, candidate *c, const atlas_doc *doc, const char *qstems)
{
	bool exact = false;
	double title = title_match(pl, c->title_phrases, true, doc->title_norm, doc->title_sig, &exact, qstems);
	/* a word the title holds in another form of its stem alone counts RANK_TITLE_STEM_ONLY */
	double title_w = title > 0 ? title - (1 - RANK_TITLE_STEM_ONLY) *
						    stem_only_share(pl, c->title_phrases, doc->title_norm,
								    doc->title_sig, doc->title_words)
				   : 0;
	double kw = title_match(pl, c->keyword_phrases, c->keywords_known, doc->keywords_norm, doc->keywords_sig,
				NULL, NULL);
	/* and a word the keywords hold so, likewise */
	double kw_w = kw > 0 ? kw - (1 - RANK_TITLE_STEM_ONLY) *
					    stem_only_share(pl, c->keyword_phrases, doc->keywords_norm,
							    doc->keywords_sig, doc->keywords_words)
			     : 0;
	double cov = coverage_of(pl, c);
	double tw = type_weight(doc);
	double pw = priority_weight(doc);
	bool ponly = prefix_only(pl, c);
	if (doc->listing > 0 && title < 1.0)
		tw *= 1 - (1 - RANK_LISTING_PRIOR) * doc->listing;
	double fill = 0;
	if (title >= 1.0 && doc->title_content > 0) {
		int n = pl->ncontent;
		fill = n >= doc->title_content ? 1.0 : (double)n / doc->title_content;
	}
	c->title = title;
	c->keywords = kw;
	c->exact = exact;
	c->path = c->proximity = c->heading = 0;
	c->score = c->bm25 * (RANK_COVERAGE_FLOOR + (1 - RANK_COVERAGE_FLOOR) * cov * sqrt(cov)) *
		   (1 + RANK_TITLE_WORDS * title_w) * (exact ? RANK_TITLE_EXACT : 1.0) * (1 + RANK_TITLE_FILL * fill) *
		   (1 + RANK_KEYWORD_WORDS * kw_w) * tw * pw * (ponly ? RANK_PREFIX_ONLY : 1.0);
	return c->score;
}

void fill_explain(atlas_engine *e, atlas_hit *h, const plan *pl, const candidate *c,
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
