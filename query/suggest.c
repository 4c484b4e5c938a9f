/* suggest.c - typeahead: page titles whose words start with what the reader typed, then
 * vocabulary terms with that prefix, most frequent first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "stopwords.h"


static int cmp_sugg(const void *a, const void *b)
{
	const atlas_suggestion *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->doc - y->doc;
}

int atlas_suggest(atlas_suggestion *out, int max, atlas_engine *e, const char *prefix)
{
	if (max <= 0 || !prefix)
		return 0;
	strbuf words = STRBUF_INIT;
	engine_normalize(e, &words, prefix, false);
	if (words.len == 0) {
		strbuf_free(&words);
		return 0;
	}
	/* the last word is a prefix; the words before it must appear in the title */
	const char *all = strbuf_str(&words);
	const char *last = strrchr(all, ' ');
	last = last ? last + 1 : all;
	size_t last_len = strlen(last);
	int n = 0;
	atlas_suggestion *pages = malloc((size_t)max * sizeof(*pages));
	int npages = 0;
	/* candidate pages: those with a title word starting with the last word, found in the sorted
	 * index of title words (bounded, so a one-letter prefix costs no more than a long one) */
	int lo = engine_title_index_from(e, last);
	for (int i = lo; i < e->ntitle_index && i < lo + SUGGEST_SCAN && pages; i++) {
		if (strncmp(e->title_index[i].word, last, last_len) != 0)
			break;
		int d = e->title_index[i].doc;
		const atlas_doc *doc = &e->docs[d];
		bool dup = false;
		for (int k = 0; k < npages && !dup; k++)
			dup = pages[k].doc == d;
		if (dup)
			continue;
		const char *t = doc->title_words;
		size_t tlen = strlen(t);
		bool ok = true;
		for (const char *w = all; ok && w < last;) {
			const char *sp = strchr(w, ' ');
			size_t wl = sp ? (size_t)(sp - w) : strlen(w);
			char pat[256];
			snprintf(pat, sizeof(pat), " %.*s ", (int)wl, w);
			ok = strstr(t, pat) != NULL;
			w += wl + 1;
		}
		char pat[256];
		snprintf(pat, sizeof(pat), " %s", last);
		const char *at = ok ? strstr(t, pat) : NULL;
		if (at) {
			/* earlier in the title and shorter titles first; explainers and guides over the rest */
			double score = 10.0 - (double)(at - t) / 20.0 - (double)tlen / 200.0 + doc->priority;
			if (strcmp(doc->type, "page") == 0)
				score -= 2;
			if (npages < max)
				pages[npages++] = (atlas_suggestion){ d, NULL, score };
			else {
				qsort(pages, (size_t)npages, sizeof(*pages), cmp_sugg);
				if (score > pages[npages - 1].score)
					pages[npages - 1] = (atlas_suggestion){ d, NULL, score };
			}
		}
	}
	if (pages) {
		qsort(pages, (size_t)npages, sizeof(*pages), cmp_sugg);
		int take = npages < (max + 1) / 2 + 2 ? npages : (max + 1) / 2 + 2;
		if (take > max)
			take = max;
		memcpy(out, pages, (size_t)take * sizeof(*out));
		n = take;
		free(pages);
	}
	/* terms: the first vocabulary entry with the prefix */
	lo = engine_vocab_from(e, last);
	int first_term = n;
	for (int i = lo; i < e->nvocab && i < lo + 20000; i++) {
		const vocab_entry *v = &e->vocab[i];
		if (strncmp(v->term, last, last_len) != 0)
			break;
		if (v->len < 3 || v->df < 2 || atlas_is_stopword(v->term, (size_t)v->len))
			continue;
		atlas_suggestion s = { -1, v->term, (double)v->df };
		if (n < max) {
			out[n++] = s;
		} else {
			int worst = first_term;
			for (int k = first_term; k < n; k++)
				if (out[k].score < out[worst].score)
					worst = k;
			if (worst < n && s.score > out[worst].score)
				out[worst] = s;
		}
	}
	qsort(out + first_term, (size_t)(n - first_term), sizeof(*out), cmp_sugg);
	strbuf_free(&words);
	return n;
}
