/* rank.h - every ranking weight and boost of the search engine, in one place.
 *
 * score = bm25 x coverage x title x keywords x path x proximity x type x priority, where
 *   bm25      BM25F over the weighted fields below (query/fts_functions.c: atlas_rank)
 *   coverage  RANK_COVERAGE_FLOOR + (1 - floor) * c^1.5 (c sqrt(c)), c = share of the query's
 *             content words the page matches (all-words matches rank first; partial matches still
 *             count: a question's answer may lack one of its words, "is exactly once delivery
 *             possible")
 *   title     1 + RANK_TITLE_WORDS * (share of content words found in the title, one found by
 *             its stem alone in no form of the word typed counting RANK_TITLE_STEM_ONLY),
 *             times RANK_TITLE_EXACT when the title is the query, give or take stop words
 *             the query does not have ("The while Statement" for "while statement"), and times
 *             1 + RANK_TITLE_FILL * (query's content words / title's) when it holds them all
 *   keywords  1 + RANK_KEYWORD_WORDS * (share of content words found in the keywords)
 *   path      1 + RANK_PATH_WORDS * (share of content words among the words of the page's path,
 *             which its author chose: "/orbax-model-surgery" for "Model Surgery: ...")
 *   proximity 1 + RANK_PROXIMITY * (share of neighbouring content words of the query found side
 *             by side, in the query's order, in one field: "paged attention" in "PagedAttention")
 * Path and proximity are computed only for pages they could bring into the page of results shown.
 * Coverage weighs each content word by its IDF, log(1 + N / (df + 1)), so a rare word decides
 * more than a common one.
 *   type      per page type, times RANK_CODE_LISTING for a code listing
 *   priority  RANK_PRIORITY_BASE + RANK_PRIORITY_SCALE * sitemap priority
 */
#ifndef ATLAS_RANK_H
#define ATLAS_RANK_H

/* BM25 field weights, in the column order of the fts table. */
#define RANK_W_TITLE 10.0
#define RANK_W_KEYWORDS 6.0
#define RANK_W_HEADINGS 3.0
#define RANK_W_DESCRIPTION 3.0
#define RANK_W_BODY 1.0
/* the names a page defines (a built site's definition terms and API signatures, dt with an id):
 * the page that defines "ArgumentParser" above the pages that only use it */
#define RANK_W_DEFS 12.0

/* BM25F saturation and length normalization (of the title and the keywords). */
#define RANK_BM25_K1 1.2
#define RANK_BM25_B 0.75
/* the length normalization of the fields that grow with the page (headings, description, body):
 * pages of a manual run from a paragraph to tens of thousands of words, and the
 * long reference page that defines a name should not lose to every short page naming it once */
#define RANK_BM25_B_LONG 0.3
/* length normalization of the defs column alone: none, a name defined on a page with hundreds of
 * definitions (a reference of every setting) is as defined there as on a page of one */
#define RANK_BM25_B_DEFS 0.0

/* Best-matching sections (query/snippet.c: fill_sections): each matched phrase counts its
 * IDF, times RANK_SEC_HEADING when it is in the heading, plus RANK_SEC_REPEAT of it for each of up
 * to RANK_SEC_REPEATS matches in the body. */
#define RANK_SEC_HEADING 3.0
/* A completion of the word being typed counts this much of its IDF in a section, at most this much
 * of the typed word's: the word typed whole matters more ("fs.readFile" shows the section headed
 * fs.readFile(...) before the one headed fs.readFileSync(...)). */
#define RANK_SEC_COMPLETION 0.25
#define RANK_SEC_REPEAT 0.25
#define RANK_SEC_REPEATS 4
/* A section's score is this many times more when the query's words are its whole heading: of
 * headings that hold them, the one that is them ("gnutls_handshake ()") first. */
#define RANK_SEC_WHOLE 3.0
/* Sections of a hit whose text is read, best first: for its snippet and up to 3 shown sections. */
#define SECTION_KEEP 4

#define RANK_COVERAGE_FLOOR 0.15
#define RANK_TITLE_WORDS 0.8
#define RANK_TITLE_EXACT 1.5
/* A word the title holds only as another form of its stem ("timing" for "time": no title word is
 * the word typed, starts with it, or is it without a plural's "s" or "es") counts this much of a
 * word found as typed, in the title's share above: "Time Zones" above "pg_test_timing" */
#define RANK_TITLE_STEM_ONLY 0.5
/* 1 + this x how much of a title that holds every content word of the query is those words (the
 * query's content words over the title's, at most 1): "Design a Distributed Cache" above
 * "JIT Cache Keys and Recompilation Triggers" for "cache", both holding the word */
#define RANK_TITLE_FILL 0.3
#define RANK_KEYWORD_WORDS 0.5 /* keywords: 1 + this x share of content words among them */
#define RANK_PATH_WORDS 0.15 /* path: 1 + this x share of content words among its words */
#define RANK_PROXIMITY 0.5 /* 1 + this x share of neighbouring query words side by side */
/* 1 + this x how much one section heading of the page is the query: the share of its content
 * words in the heading times the query's words over the heading's (at most 1), so a
 * heading that is the whole phrase counts fully, one word of a long heading little */
#define RANK_HEADING_MATCH 0.5
#define RANK_TYPE_EXPLAINER 1.0
#define RANK_TYPE_GUIDE 1.0
#define RANK_TYPE_TOPIC 0.85
#define RANK_TYPE_PAGE 0.6
/* Listing pages (tables of contents, indexes, home pages: many links to other pages for their
 * words) below content pages, unless the title holds every content word of the query (the reader
 * names the listing): a page's score times 1 - (1 - RANK_LISTING_PRIOR) x how much it is a
 * listing, which is 0 with fewer than RANK_LISTING_MIN_LINKS links or below
 * RANK_LISTING_DENSITY_FROM links per 100 words, 1 from RANK_LISTING_DENSITY_FULL, linear
 * between (query/engine.c: listing_of). */
#define RANK_LISTING_PRIOR 0.6
/* a program's source shown whole (docs.code_listing: Sphinx's viewcode, rustdoc's src/), besides
 * its type's factor: a reader looks for the page that explains a module before its code, whose
 * title is the module's name */
#define RANK_CODE_LISTING 0.5
#define RANK_LISTING_MIN_LINKS 8
#define RANK_LISTING_DENSITY_FROM 1.0
#define RANK_LISTING_DENSITY_FULL 4.0
#define RANK_PRIORITY_BASE 0.8
#define RANK_PRIORITY_SCALE 0.25

/* The word being typed: completed to this many vocabulary words (the most frequent that start
 * with it). A completion's IDF counts RANK_PREFIX_ONLY times its own; a page that holds the word
 * itself gets nothing for its completions (fts_functions.c), and a page matched only by a
 * completion counts RANK_PREFIX_ONLY times its score; when the word being typed is the query's
 * only content word, and on at least as many pages as each of its completions or a name a page
 * defines, such a page ranks below every page holding the word itself, whatever the scores (the
 * tier of search.c: rank_candidates). With other words, the pages matching more of them are not
 * put below one matching the word itself and nothing else. */
#define PREFIX_EXPANSIONS 4
/* completions of the word being typed taken first from the titles holding the query's other
 * words (a one-letter word gets those alone, up to PREFIX_EXPANSIONS) */
#define PREFIX_TITLE_COMPLETIONS 2
#define RANK_PREFIX_ONLY 0.7
/* A word being typed that is already a word of the vocabulary is completed only to words at least
 * this share as frequent: "cache" (on 77 pages) is not also "cacheconfig" (on 2) */
#define PREFIX_MIN_SHARE 0.1
/* A completion on more than this many pages (a guess at the word being typed that most pages
 * would match: "explainer" after "expl") is looked for in titles and keywords only, where a
 * reader typing it expects to find it; scoring every page that merely mentions it was most of the
 * slowest searches at 100,000 pages. */
#define PREFIX_TITLED_DF 1500

/* Bounds on the work of one query: at least this many candidates wanted before a broader pass is
 * skipped; how many pages the rarest content word (its most common alternative, by stems) may be
 * on before retrieval starts with the titles alone, then the important fields (retrieve.c:
 * match_tier); how many rows the any-word expression may be expected to match for it to run
 * alone, without the all-words pass first; and how many matches (for sections and snippets) the
 * candidate pass keeps, the hits of rows past it being looked up again one by one. */
#define RANK_MIN_CANDIDATES 50
#define RANK_BROAD_DF 1500
#define RANK_SINGLE_PASS_ROWS 2000
/* A search kept to a filter's pages (retrieve.c: type_allowed, topic_allowed) only when the rows it
 * would walk there, the words' rows times the share of the pages kept, are at most this many */
#define RANK_KEPT_ROWS 10000
#define RANK_RECORD_MAX (1 << 18)

/* Typo tolerance: edits allowed by word length (Damerau, optimal string alignment). */
#define TYPO_MIN_LEN 5         /* no correction below this length */
#define TYPO_TWO_EDITS_LEN 9   /* two edits from this length on */
#define TYPO_RARE_DF 2         /* a known word this rare is offered a correction ... */
#define TYPO_RARE_RATIO 20     /* ... when a neighbour is this many times more frequent */

/* Read next: each candidate's score is the sum over its stored rows of the signal's weight times
 * the row's own strength (1 for most graph facts; for links, how informative the link is, an
 * inverse in-degree weight like a word's IDF, so that a page every page links to counts little;
 * the cosine for "similar"; PageRank relative to the best for "graph"; 1 / distance for
 * "guide_after"), plus NEXT_W_CONTEXT times the same sums from the pages read just before (the
 * last NEXT_CONTEXT_PAGES of seen, common/next_rows.h, each half the one after it); then the
 * diversity penalty for every already chosen suggestion sharing its topic.
 * The weights marked "fitted" are the defaults: the indexer fits them on the site's guides (at
 * least NEXT_FIT_MIN_GUIDES of them, indexer/next_fit.c) and stores them in the index, which the
 * engine uses instead. */
#define NEXT_W_GUIDE_CHOSEN 100.0 /* the next unread step of the guide the reader follows: first,
				    * whatever the other candidates' scores */
#define NEXT_W_GUIDE_FOLLOWED 20.0 /* with no guide named, the same of each guide whose step before
				    * the page is the page read last, shared among them, times the
				    * share of the pages read that its steps before the page agree with */
#define NEXT_W_GUIDE_ALONE 10.0   /* with none named and nothing read, the same of the one guide the
				    * page is a step of */
#define NEXT_W_GUIDE_NEXT 3.0     /* fitted: the next step in another guide */
#define NEXT_W_GUIDE_AFTER 1.0    /* fitted: a later step (2..NEXT_AFTER_SPAN on) in another guide */
#define NEXT_W_GUIDE_START 3.0
#define NEXT_W_LIST_NEXT 0.1      /* fitted: the next page in another page's list of links */
#define NEXT_W_GUIDE_PREV 0.3     /* fitted */
#define NEXT_W_LINK_OUT 0.25      /* fitted */
#define NEXT_W_LINK_IN 0.0        /* fitted */
#define NEXT_W_BUILDS_ON 1.2      /* fitted */
#define NEXT_W_PREREQ 0.3         /* fitted */
#define NEXT_W_TOPIC 2.0          /* fitted: per shared topic */
#define NEXT_W_TOPIC_MEMBER 2.0
#define NEXT_W_TOPIC_NEXT 0.5     /* fitted: next to the page in a shared topic's order */
#define NEXT_W_NUMBER_NEXT 2.0    /* fitted: numbered after the page (9.2 after 9.1) */
#define NEXT_W_TOPIC_AFTER 0.5    /* fitted: right after the page in a shared topic's or folder's
				   * order by path, where a site's file names follow its reading
				   * order (ch01, ch02); the fit starts from NEXT_FIT_START_TOPIC_AFTER */
#define NEXT_W_PAGE_NEXT 50.0     /* not fitted: the page a built site's page names as its next
				   * (rel=next), the site's own reading order, across its chapters
				   * too. It comes first but for a chosen guide's next step (query/
				   * next.c's tiers), and its weight is not scaled by its type's
				   * factor. The routes fitted on are made of these links, so their
				   * cases do not have them (indexer/next_fit.c) */
#define NEXT_W_SIMILAR 2.0        /* fitted */
#define NEXT_W_GRAPH 0.0          /* fitted */
#define NEXT_W_CONTEXT 0.5        /* fitted */
/* The fit: at least this many guides and next steps to learn from, else the defaults above; at
 * most NEXT_FIT_MAX_CASES next steps (every k-th guide's, when there are more), NEXT_FIT_ROUNDS
 * rounds of coordinate ascent over the weights on the grid NEXT_FIT_GRID, judged by the mean
 * reciprocal rank of each step's next step with that step's own guide left out of its candidates. */
#define NEXT_FIT_MIN_GUIDES 2
#define NEXT_FIT_MIN_CASES 20
#define NEXT_FIT_MAX_CASES 3000
#define NEXT_FIT_ROUNDS 3
#define NEXT_FIT_START_TOPIC_AFTER 0.0 /* topic_after where the ascent starts: none until the
					* site's routes show that its file names follow them */
#define NEXT_FIT_GRID { 0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0 }
/* The figures stored with them include the MRR of a sample of at most NEXT_FIT_MAX_LINKS links
 * between explainers, each target ranked among its source's candidates without the link. */
#define NEXT_FIT_MAX_LINKS 1500
/* Links: a link into page t counts log((N + 1) / (1 + in-degree of t)) / log(N + 1), N the pages
 * whose links count (explainers and guides), at least NEXT_LINK_FLOOR; a backlink the same by the
 * linking page's out-degree. */
#define NEXT_LINK_FLOOR 0.05
#define NEXT_TYPE_TOPIC 0.5       /* fitted: topic pages as suggestions (a factor) */
#define NEXT_TYPE_GUIDE 0.6       /* fitted: guides as suggestions */
#define NEXT_DIVERSITY 0.8        /* per chosen suggestion with the same first topic */

#ifdef ATLAS_NEXT_ROWS_H
/* Fills w[NEXT_NWEIGHTS] (by signal code, then the context and the type factors) with the defaults
 * above. */
static inline void next_weights_defaults(double *w)
{
	w[NEXT_GUIDE_NEXT] = NEXT_W_GUIDE_NEXT;
	w[NEXT_GUIDE_PREV] = NEXT_W_GUIDE_PREV;
	w[NEXT_GUIDE_START] = NEXT_W_GUIDE_START;
	w[NEXT_GUIDE_AFTER] = NEXT_W_GUIDE_AFTER;
	w[NEXT_LIST_NEXT] = NEXT_W_LIST_NEXT;
	w[NEXT_LINK_OUT] = NEXT_W_LINK_OUT;
	w[NEXT_LINK_IN] = NEXT_W_LINK_IN;
	w[NEXT_BUILDS_ON] = NEXT_W_BUILDS_ON;
	w[NEXT_PREREQ] = NEXT_W_PREREQ;
	w[NEXT_TOPIC] = NEXT_W_TOPIC;
	w[NEXT_TOPIC_START] = NEXT_W_TOPIC_MEMBER;
	w[NEXT_TOPIC_NEXT] = NEXT_W_TOPIC_NEXT;
	w[NEXT_NUMBER_NEXT] = NEXT_W_NUMBER_NEXT;
	w[NEXT_TOPIC_AFTER] = NEXT_W_TOPIC_AFTER;
	w[NEXT_PAGE_NEXT] = NEXT_W_PAGE_NEXT;
	w[NEXT_SIMILAR] = NEXT_W_SIMILAR;
	w[NEXT_GRAPH] = NEXT_W_GRAPH;
	w[NEXT_W_CONTEXT_INDEX] = NEXT_W_CONTEXT;
	w[NEXT_W_TYPE_TOPIC_INDEX] = NEXT_TYPE_TOPIC;
	w[NEXT_W_TYPE_GUIDE_INDEX] = NEXT_TYPE_GUIDE;
}
#endif

#ifdef ATLAS_SCHEMA_H
/* BM25F's frequency of one phrase in a row: over the columns holding it, the column's weight times
 * its matches tf[c], normalized by the column's length len[c] against the average avg[c]. The
 * phrase then adds idf x t x (k1 + 1) / (t + k1) to the row's bm25 (query/fts_functions.c); the
 * indexer keeps the largest t of each block of a term's postings (common/blockpost.h). */
static inline double rank_bm25f_tf(const int *tf, const int *len, const double *avg)
{
	static const double w[FTS_NCOLS] = { RANK_W_TITLE, RANK_W_KEYWORDS, RANK_W_HEADINGS,
					     RANK_W_DESCRIPTION, RANK_W_BODY, RANK_W_DEFS };
	static const double b[FTS_NCOLS] = { RANK_BM25_B, RANK_BM25_B, RANK_BM25_B_LONG,
					     RANK_BM25_B_LONG, RANK_BM25_B_LONG, RANK_BM25_B_DEFS };
	double t = 0;
	for (int c = 0; c < FTS_NCOLS; c++)
		if (tf[c])
			t += w[c] * tf[c] / (1.0 - b[c] + b[c] * len[c] / avg[c]);
	return t;
}
#endif

#endif
