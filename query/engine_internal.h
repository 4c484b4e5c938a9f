/* engine_internal.h - the engine's state, shared by the files of query/ that search an open index
 * (not next.c: next.h is its interface) and by two white-box tests, tests/query/test_postings.c and
 * test_sections.c, that check the held postings and section texts against the index itself. */
#ifndef ATLAS_ENGINE_INTERNAL_H
#define ATLAS_ENGINE_INTERNAL_H

#include <stdint.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "analyzer.h"
#include "arena.h"
#include "compress.h"
#include "engine.h"
#include "fts_functions.h"
#include "spans.h"
#include "strbuf.h"
#include "strmap.h"

/* The bit of a word's first two bytes (c2 the NUL or space ending a one-byte word) in a word
 * signature. */
static inline unsigned long long atlas_word_bit(unsigned char c1, unsigned char c2)
{
	return 1ULL << ((c1 * 31u + (c2 == ' ' ? 0u : c2)) & 63u);
}

/* The signature of norm (words separated by single spaces): the atlas_word_bit of every word. A
 * word, or a word starting with a given two bytes, can only be in norm when its bit is set. */
unsigned long long atlas_word_sig(const char *norm);

typedef struct vocab_entry {
	char *term;
	int len;
	int df;
	int cf;     /* occurrences in all pages */
	int alpha;  /* lowercase ASCII letters, joiners between them: a candidate for spelling correction */
} vocab_entry;

typedef struct syn_term {
	int group;
	char *text;
	int words;
} syn_term;

/* Entries of the title index a typeahead or a completion looks at, at most. */
#define SUGGEST_SCAN 2000

typedef struct title_word {
	const char *word;       /* NUL-terminated copy owned by title_words_buf */
	int doc;
} title_word;

typedef struct candidate {
	double bm25;
	sqlite3_int64 phrases;  /* which phrases of the relaxed expression matched */
	sqlite3_int64 title_phrases, keyword_phrases; /* which matched in the title, in the keywords */
	sqlite3_int64 heading_phrases; /* which matched in a section heading (whole-pages rows) */
	sqlite3_int64 def_phrases; /* which matched in the names the page defines (whole-pages rows) */
	bool keywords_known;    /* a row beyond its title was taken: keyword_phrases says all */
	bool page_row;          /* a whole-pages row was taken: heading_phrases says all */
	bool strict;            /* matched every content word */
	double score;
	double title;           /* share of content words in the title */
	double keywords;        /* share of content words in the keywords */
	double path;            /* share of content words in the words of the path */
	double proximity;       /* share of neighbouring query words side by side in a field */
	double heading;         /* how much one section heading is the query (score.c: heading_match) */
	bool exact;             /* the title is the query */
	int inst_start, inst_n; /* its matches in the match record; inst_n -1: not recorded, or only
				   from the fields of a partial pass */
} candidate;

/* A section as the engine keeps it: where its tokens sit among its page's fts positions. */
typedef struct section_info {
	int doc;                /* page index */
	int ord, level;
	int head_pos, nhead;    /* positions in the headings column (the title column for ord 0) */
	int nlead;              /* ord 0: the description column's positions, all of them */
	int body_pos, nbody;    /* positions in the body column */
} section_info;

/* A section's text: heading, anchor, body (bytes, not NUL-terminated in general), and the spans of
 * its tokens (heading tokens, then lead and body tokens: the analyzer's aux mode over heading, then
 * over body), or NULL when they are not as many as the index counts. The body may be only a part
 * of the section's (the chunks read of a long one): it then starts at the section's body token
 * body_first, and the body spans, offsets into that part, are of the tokens from body_first on. */
typedef struct section_text {
	const char *heading, *anchor, *body;
	const atlas_span *decoded;
	int nheading, nanchor, nbody;
	int body_first;
} section_text;

/* The engine keeps a copy of every section's text, with its spans found (8 bytes a token), when
 * the texts take at most this many bytes in all (the index is then read into memory too), so that
 * a hit's sections cost no SQLite statement, no decompression and no analysis: about half of a
 * search of a manual of a thousand to two thousand pages, for memory about the texts' size
 * (docs/BENCHMARKS.md, "Section texts held"). */
#define SECTION_TEXTS_MAX (32 << 20)

/* Block size of the engine's arena: at least glibc's mmap threshold as atlas-serve sets it, so that
 * an engine freed after an index swap returns its strings to the system whole. */
#define ENGINE_ARENA_BLOCK (256 * 1024)

/* The slot of the n bytes of s in a table of nslots remembered answers (FNV-1a of the bytes):
 * the engine remembers what it looked up for a query's words, as typeahead's counts and later
 * searches ask again, in tables of a few slots each (a new answer takes its slot's place). */
static inline unsigned engine_slot(const char *s, size_t n, unsigned nslots)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h % nslots;
}

/* A stem's page count, remembered: len 0 for an empty slot. */
#define STEM_DF_SLOTS 256
#define STEM_DF_KEY 32          /* longer stems are always looked up */
typedef struct stem_df_slot {
	char stem[STEM_DF_KEY];
	int len;
	int df;
} stem_df_slot;

/* A word's spelling correction, remembered (plan.c: correct_word): len 0 for an empty slot, fix
 * NULL for a word with none. */
#define FIX_SLOTS 64
typedef struct fix_slot {
	char word[41];          /* correct_word looks at words of at most 40 bytes */
	int len;
	const char *fix;        /* a vocabulary entry's term */
} fix_slot;

/* An alternative's posting-list entries (retrieve.c: alt_postings), remembered by its text: len 0
 * for an empty slot. */
#define ALT_COST_SLOTS 128
#define ALT_COST_KEY 48         /* longer alternatives are always counted */
typedef struct alt_cost_slot {
	char alt[ALT_COST_KEY];
	int len;
	long sum;
} alt_cost_slot;

struct atlas_engine {
	sqlite3 *db;
	atlas_arena strings;    /* the documents' strings, the vocabulary, synonyms, meta, map keys */
	bool in_memory;         /* the index was read into memory when opened */
	struct index_image *image; /* those bytes, shared with other engines on the same file */
	atlas_analyzer *analyzer;
	sqlite3_stmt *st_match, *st_match_fields, *st_match_titles, *st_match_rows, *st_stem_df, *st_explain, *st_record, *st_section_text;
	atlas_doc *docs;
	int ndocs;
	strmap path_index;      /* path -> doc index */
	strmap topic_index;     /* topic path -> the doc index of its page */
	title_word *title_index; /* every folded title word with its page, sorted by word */
	int ntitle_index;
	char *title_words_buf;
	vocab_entry *vocab;     /* sorted by term */
	int nvocab;
	strmap vocab_index;     /* term -> vocab index */
#define VOCAB_MAX_LEN 40
	int *by_len;            /* indexes of letters-only vocabulary words, grouped by length */
	int by_len_start[VOCAB_MAX_LEN + 2]; /* by_len[by_len_start[l] .. by_len_start[l+1]) have length l */
	unsigned long long *by_len_letters; /* letter_set of each word of by_len, in its order */
	syn_term *syn;
	int nsyn;
	strmap syn_index;       /* folded words of a term -> syn index */
	strmap syn_stem_index;  /* stems of a term -> syn index */
	struct {
		char *key, *value;
	} meta[32];
	int nmeta;
	section_info *sections; /* sections[id - 1] */
	section_text *texts;    /* texts[id - 1], in the arena; NULL: read per query from the index */
	atlas_decompressor *body_z; /* the sections' bodies are stored compressed */
	strbuf body_buf;        /* the body read last, when the engine holds no copy */
	atlas_span_list row_spans; /* its spans */
	strbuf anchor_buf;      /* a section's anchor made from its heading */
	struct next_state *next;  /* read next over this index (next.h) */
	int nsections;
	match_record rec;       /* atlas_rank's matches of the current query */
	struct postings_query *postings; /* searches over the held full-text index, or NULL (postings.h) */
	const struct plan *held_plan; /* the plan whose phrases postings holds, or NULL (retrieve.c) */
	struct blockmax *blockmax; /* the postings table read (atlas_engine_read_postings_table), or NULL */
	/* the postings table read for a search kept to a filter's pages (retrieve.c: type_allowed,
	 * topic_allowed), made at the first such search; the pages of each type as bitsets (bit
	 * d + 1 for page d, as the table's rows), and of the topics such searches were kept to */
	struct blockmax *filter_blocks;
	bool type_sets_made;
	uint64_t *type_pages[ATLAS_TYPE_COUNT];
	int type_count[ATLAS_TYPE_COUNT];
	uint64_t *allowed;      /* the pages of the types searched */
	struct {
		char *topic;
		uint64_t *pages;
		int count;
	} topic_sets[16];
	int ntopic_sets;
	int *top_count;         /* by topic page: the pages it is a top-level topic of (NULL: not counted) */
	/* the facets of each page packed, so that counting them over thousands of candidates reads
	 * one small array: facet_type[d] its type_id; facet_bits[d] bit k for each of its top-level
	 * topics, topic page facet_topic[k]; NULL when the index has more top-level topics than
	 * FACET_BITS (search.c then reads the pages themselves) */
#define FACET_BITS 32
	unsigned char *facet_type;
	uint32_t *facet_bits;
	int facet_topic[FACET_BITS];
	int nfacet_topics;
	int *col_sizes;         /* tokens per fts column of every page, for atlas_rank */
	bool has_defs;          /* some page defines names (its defs column is not empty), or the
				   sizes are not all known */
	/* per-query scratch, sized ndocs */
	unsigned *mark;
	unsigned *excluded;     /* pages holding an excluded word, when this generation's */
	unsigned generation;
	bool count_only;        /* atlas_search counts (total, total_all) and builds no hits */
	fix_slot fixes[FIX_SLOTS]; /* spelling corrections remembered (plan.c: correct_word) */
	stem_df_slot stem_dfs[STEM_DF_SLOTS]; /* the stems table's answers remembered (retrieve.c:
	                                       * stem_df): a query's words are looked up by every pass,
	                                       * and typeahead searches the same words again */
	alt_cost_slot alt_costs[ALT_COST_SLOTS]; /* the same for an alternative's postings */
	candidate *cand;
	int *touched;           /* the pages marked this generation, in the order met */
	int ntouched;
};

/* Reads section sec (an index in e->sections) from the index with st_section_text into out:
 * heading and anchor from the row (valid until the statement is reset), and of the body (lead and
 * body tokens counted together) what holds its tokens [from, to): none when to is 0, else the
 * chunks holding them decompressed into e->body_buf (the whole body when it is not in chunks),
 * with the heading's spans and the spans of the body's tokens from out->body_first to to found in
 * e->row_spans (valid until the next call). Returns 0, or (no message: the callers say what could
 * not be shown) ATLAS_EINVAL when the row is missing or its body does not decompress, ATLAS_ESQL
 * when SQLite fails, ATLAS_ENOMEM when out of memory. */
int engine_section_row(atlas_engine *e, int sec, int from, int to, section_text *out);

/* Folded surface words (or stems) of text, space-separated, appended to out. */
void engine_normalize(atlas_engine *e, strbuf *out, const char *text, bool stem);

/* The index of the first entry of e's title index whose word is not before word (ntitle_index
 * when none): where the title words starting with word begin. */
int engine_title_index_from(const atlas_engine *e, const char *word);

/* The index of the first vocabulary entry of e whose term is not before word (nvocab when none). */
int engine_vocab_from(const atlas_engine *e, const char *word);
/* The letters a..z of w[0..n) as a set of bits: one per letter present, one more per letter present
 * twice or more. One edit changes the count of at most two letters by one, flipping at most two
 * bits, so words d edits apart differ in at most 2d bits. */
unsigned long long letter_set(const char *w, int n);
/* Document frequency of a folded surface word, 0 when unknown. */
int vocab_df(const atlas_engine *e, const char *w, size_t n);
/* Occurrences of vocabulary word w[0..n) in all pages (0 when unknown). */
int vocab_cf(const atlas_engine *e, const char *w, size_t n);

#endif
