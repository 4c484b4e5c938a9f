/* analyzer.c - the "atlas" FTS5 tokenizer: unicode61 word splitting, identifier compounds, Snowball
 * English stemming. One libstemmer object per analyzer instance, since they are not thread-safe. */
#include "analyzer.h"
#include "grow.h"

#include <ctype.h>
#include <libstemmer.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/**************************************************************************************************
** Instances.
*/

/* The unicode61 tokenizer module, found once per registration through fts5_api. */
typedef struct u61_module {
	fts5_tokenizer tok;
	void *user;
} u61_module;

/* One token as unicode61 produced it: folded bytes (in the arena) and the source byte range. */
typedef struct raw_token {
	int off;   /* offset of the folded bytes in the arena */
	int len;
	int start; /* byte range in the analyzed text */
	int end;
	int shape; /* SHAPE_*: what the splitter already knows of its source bytes */
} raw_token;

/* A token from unicode61, whose bytes split_camel looks at; one from the ASCII splitter: letters
 * and digits only, with no capital after the first byte, or with one (a camelCase candidate). */
enum { SHAPE_UNKNOWN, SHAPE_ASCII_FLAT, SHAPE_ASCII_CAMEL };

/* One identifier part: a unicode61 token, or a camelCase hump of one. */
typedef struct part {
	int tok;        /* index of its raw_token */
	int o1, o2;     /* byte range inside the token's folded bytes */
	int start, end; /* byte range in the analyzed text */
} part;

/* The source bytes s[0..n) of a token end in the plural "s" of an all-capitals acronym ("GPUs",
 * "LLMs", "getTPUs"): at least two capitals, then one lowercase s. The s is no hump of its own, and
 * the acronym's word is its singular. */
static int acronym_plural(const char *s, int n)
{
	return n >= 3 && s[n - 1] == 's' && s[n - 2] >= 'A' && s[n - 2] <= 'Z' && s[n - 3] >= 'A' &&
	       s[n - 3] <= 'Z';
}

/* The folded word of part p: its bytes and length, without the s of an acronym's plural (a part
 * of at least two capitals and an s). */
static int part_word(const char *text, const char *arena_tok, const part *p, const char **out)
{
	int len = p->o2 - p->o1;
	*out = arena_tok + p->o1;
	if (len >= 3 && p->end - p->start == len && acronym_plural(text + p->start, len)) {
		int caps = 1;
		for (int i = p->start; i < p->end - 1 && caps; i++)
			caps = text[i] >= 'A' && text[i] <= 'Z';
		if (caps)
			len--;
	}
	return len;
}

/* A direct-mapped cache of recent stems: text repeats its words, and Snowball is the costliest
 * step of analysis. Its size is taken when it is first needed (atlas_analyzer_set_stem_cache). */
#define STEM_CACHE_SLOTS 4096
#define STEM_CACHE_WORD 24

typedef struct stem_slot {
	unsigned char wlen, slen;
	char word[STEM_CACHE_WORD];
	char stem[STEM_CACHE_WORD];
} stem_slot;

typedef struct module_ctx module_ctx;

struct atlas_analyzer {
	u61_module u61;
	module_ctx *module; /* the registration an FTS5 table's instance came from, else NULL */
	stem_slot *stems;
	unsigned nstems;  /* slots of stems, a power of two */
	Fts5Tokenizer *u61_inst;
	struct sb_stemmer *stemmer;
	/* scratch, reused across calls */
	raw_token *toks;
	int ntoks, captoks;
	char *arena;
	int narena, caparena;
	part *parts;
	int capparts;
};

static int fts5_api_of(sqlite3 *db, fts5_api **out)
{
	sqlite3_stmt *stmt = NULL;
	*out = NULL;
	int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_pointer(stmt, 1, (void *)out, "fts5_api_ptr", NULL);
	sqlite3_step(stmt);
	rc = sqlite3_finalize(stmt);
	if (rc == SQLITE_OK && !*out)
		rc = SQLITE_ERROR;
	return rc;
}

static int find_u61(sqlite3 *db, u61_module *m, atlas_error *err)
{
	fts5_api *api = NULL;
	if (fts5_api_of(db, &api) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "SQLite was built without FTS5");
	if (api->xFindTokenizer(api, "unicode61", &m->user, &m->tok) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "FTS5 has no unicode61 tokenizer");
	return 0;
}

static int analyzer_create(atlas_analyzer **out, const u61_module *m, atlas_error *err)
{
	static const char *args[] = { "remove_diacritics", "2" };
	atlas_analyzer *a = calloc(1, sizeof(*a));
	if (!a)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	a->u61 = *m;
	if (a->u61.tok.xCreate(a->u61.user, args, 2, &a->u61_inst) != SQLITE_OK) {
		atlas_error_set(err, ATLAS_ESQL, "cannot create the unicode61 tokenizer");
		goto fail_free;
	}
	a->stemmer = sb_stemmer_new("english", "UTF_8");
	if (!a->stemmer) {
		atlas_error_set(err, ATLAS_ENOMEM, "cannot create the Snowball English stemmer");
		goto fail_u61;
	}
	*out = a;
	return 0;

fail_u61:
	a->u61.tok.xDelete(a->u61_inst);
fail_free:
	free(a);
	*out = NULL;
	return err ? err->code : ATLAS_ESQL;
}

int atlas_analyzer_new(atlas_analyzer **out, sqlite3 *db, atlas_error *err)
{
	u61_module m;
	*out = NULL;
	int rc = find_u61(db, &m, err);
	if (rc)
		return rc;
	return analyzer_create(out, &m, err);
}

void atlas_analyzer_free(atlas_analyzer *a)
{
	if (!a)
		return;
	if (a->stemmer)
		sb_stemmer_delete(a->stemmer);
	if (a->u61_inst)
		a->u61.tok.xDelete(a->u61_inst);
	free(a->toks);
	free(a->arena);
	free(a->parts);
	free(a->stems);
	free(a);
}

/**************************************************************************************************
** Stemming.
*/

static int stem_uncached(atlas_analyzer *a, const char *word, int n, char *out, int cap);

static atomic_int stem_cache_slots = STEM_CACHE_SLOTS;

void atlas_analyzer_set_stem_cache(int slots)
{
	int n = 64;
	while (n < slots && n < (1 << 20))
		n *= 2;
	atomic_store(&stem_cache_slots, n);
}

int atlas_stem(atlas_analyzer *a, const char *word, int n, char *out, int cap)
{
	stem_slot *slot = NULL;
	if (n > 0 && n < STEM_CACHE_WORD && cap >= STEM_CACHE_WORD) {
		if (!a->stems) {
			a->nstems = (unsigned)atomic_load(&stem_cache_slots);
			a->stems = calloc(a->nstems, sizeof(stem_slot));
		}
		if (a->stems) {
			unsigned h = 2166136261u;
			for (int i = 0; i < n; i++)
				h = (h ^ (unsigned char)word[i]) * 16777619u;
			slot = &a->stems[h & (a->nstems - 1)];
			if (slot->wlen == n && memcmp(slot->word, word, (size_t)n) == 0) {
				memcpy(out, slot->stem, slot->slen);
				out[slot->slen] = '\0';
				return slot->slen;
			}
		}
	}
	int len = stem_uncached(a, word, n, out, cap);
	if (slot && len < STEM_CACHE_WORD) {
		slot->wlen = (unsigned char)n;
		memcpy(slot->word, word, (size_t)n);
		slot->slen = (unsigned char)len;
		memcpy(slot->stem, out, (size_t)len);
	}
	return len;
}

static int stem_uncached(atlas_analyzer *a, const char *word, int n, char *out, int cap)
{
	int has_digit = 0;
	for (int i = 0; i < n; i++)
		if (word[i] >= '0' && word[i] <= '9')
			has_digit = 1;
	if (!has_digit && n < 64) {
		const sb_symbol *s = sb_stemmer_stem(a->stemmer, (const sb_symbol *)word, n);
		if (s) {
			int len = sb_stemmer_length(a->stemmer);
			if (len < cap) {
				memcpy(out, s, (size_t)len);
				out[len] = '\0';
				return len;
			}
		}
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, word, (size_t)n);
	out[n] = '\0';
	return n;
}

/**************************************************************************************************
** Splitting: unicode61 tokens, grouped into identifiers, split at camelCase humps.
*/

/* Appends one raw token. Returns SQLITE_OK or SQLITE_NOMEM. */
static int push_token(atlas_analyzer *a, const char *tok, int ntok, int start, int end, int shape)
{
	if (atlas_grow(&a->toks, &a->captoks, a->ntoks, sizeof(*a->toks), 256))
		return SQLITE_NOMEM;
	if (a->narena + ntok > a->caparena) {
		int cap = a->caparena ? a->caparena : 4096;
		while (cap < a->narena + ntok)
			cap *= 2;
		char *ar = realloc(a->arena, (size_t)cap);
		if (!ar)
			return SQLITE_NOMEM;
		a->arena = ar;
		a->caparena = cap;
	}
	memcpy(a->arena + a->narena, tok, (size_t)ntok);
	a->toks[a->ntoks++] = (raw_token){ a->narena, ntok, start, end, shape };
	a->narena += ntok;
	return SQLITE_OK;
}

/* unicode61's token callback. */
static int collect_token(void *ctx, int tflags, const char *tok, int ntok, int start, int end)
{
	(void)tflags;
	return push_token(ctx, tok, ntok, start, end, SHAPE_UNKNOWN);
}

/* True when the bytes between two tokens join them into one identifier: one or two of _ . - / : */
static int is_joiner(const char *text, int from, int to)
{
	if (to - from < 1 || to - from > 2)
		return 0;
	for (int i = from; i < to; i++)
		if (!strchr("_.-/:", text[i]))
			return 0;
	return 1;
}

static int push_part(atlas_analyzer *a, int *np, part p)
{
	if (atlas_grow(&a->parts, &a->capparts, *np, sizeof(*a->parts), 64))
		return SQLITE_NOMEM;
	a->parts[(*np)++] = p;
	return SQLITE_OK;
}

/* Splits token t at camelCase humps of its source bytes ("RLCluster" -> RL|Cluster,
 * "pjrtClient" -> pjrt|Client). Only pure-ASCII tokens are split. */
static int split_camel(atlas_analyzer *a, const char *text, int t, int *np)
{
	const raw_token *rt = &a->toks[t];
	const char *s = text + rt->start;
	int n = rt->end - rt->start;
	int from = 0;
	if (rt->shape == SHAPE_ASCII_FLAT)
		return push_part(a, np, (part){ t, 0, rt->len, rt->start, rt->end });
	int ascii = rt->shape == SHAPE_ASCII_CAMEL || n == rt->len;
	for (int i = 0; rt->shape == SHAPE_UNKNOWN && ascii && i < n; i++)
		if ((unsigned char)s[i] >= 0x80 || !isalnum((unsigned char)s[i]))
			ascii = 0;
	int upper_inside = rt->shape == SHAPE_ASCII_CAMEL;
	for (int i = 1; ascii && i < n && !upper_inside; i++)
		upper_inside = s[i] >= 'A' && s[i] <= 'Z';
	if (ascii && upper_inside) {
		/* the s of "GPUs" starts no hump: the acronym keeps its last capital */
		int humps = acronym_plural(s, n) ? n - 1 : n;
		for (int i = 1; i < n; i++) {
			int up = isupper((unsigned char)s[i]);
			int prev_low = islower((unsigned char)s[i - 1]);
			int prev_up = isupper((unsigned char)s[i - 1]);
			int next_low = i + 1 < humps && islower((unsigned char)s[i + 1]);
			if (up && (prev_low || (prev_up && next_low))) {
				int rc = push_part(a, np, (part){ t, from, i, rt->start + from, rt->start + i });
				if (rc)
					return rc;
				from = i;
			}
		}
	}
	return push_part(a, np, (part){ t, from, rt->len, rt->start + from, rt->end });
}

/* Writes the compound of parts [p, q] (folded bytes, original joiners between tokens) into buf.
 * Returns its length, or -1 when it does not fit (a length, not an error code: the compound
 * is then not made). */
static int compound_of(const atlas_analyzer *a, const char *text, int p, int q, char *buf, int cap)
{
	int len = 0;
	for (int i = p; i <= q; i++) {
		const part *pt = &a->parts[i];
		const raw_token *rt = &a->toks[pt->tok];
		if (i > p && a->parts[i - 1].tok != pt->tok) {
			const raw_token *prev = &a->toks[a->parts[i - 1].tok];
			int glen = rt->start - prev->end;
			if (len + glen >= cap)
				return -1;
			memcpy(buf + len, text + prev->end, (size_t)glen);
			len += glen;
		}
		const char *w;
		int plen = part_word(text, a->arena + rt->off, pt, &w);
		if (len + plen >= cap)
			return -1;
		memcpy(buf + len, w, (size_t)plen);
		len += plen;
	}
	buf[len] = '\0';
	return len;
}

/* Stems the compound comp[0..len) (a buffer of cap bytes) in place. Returns the stem's length. */
static int stem_compound(atlas_analyzer *a, char *comp, int len, int cap)
{
	char stem[512];
	int slen = atlas_stem(a, comp, len, stem, cap < (int)sizeof(stem) ? cap : (int)sizeof(stem));
	memcpy(comp, stem, (size_t)slen + 1);
	return slen;
}

/* Emit an identifier's parts, never its compound (query strings of several words). */
#define ATLAS_TOKENIZE_PARTS ATLAS_ANALYZE_PARTS

/**************************************************************************************************
** Emitting tokens for one identifier group of parts [p0, p1).
*/

/* The forms written at one position so far: its stem, its surface form and its compounds, each a
 * copy (at most FORMS_MAX, the compounds of a part and the part's own two). */
#define FORMS_MAX (ATLAS_MAX_COMPOUND_PARTS + 2)
typedef struct form_set {
	int n, len[FORMS_MAX];
	char text[FORMS_MAX][512];
} form_set;

/* True when s[0..n) is one of f's forms. */
static bool form_has(const form_set *f, const char *s, int n)
{
	for (int i = 0; i < f->n; i++)
		if (f->len[i] == n && memcmp(f->text[i], s, (size_t)n) == 0)
			return true;
	return false;
}

/* Adds s[0..n) to f's forms (a form longer than a copy holds is not kept: it is then not known
 * as written, so it can be written again, never lost). */
static void form_add(form_set *f, const char *s, int n)
{
	if (f->n == FORMS_MAX || n < 0 || n >= (int)sizeof(f->text[0]))
		return;
	memcpy(f->text[f->n], s, (size_t)n);
	f->len[f->n++] = n;
}

int atlas_option_dashes(const char *text, int start)
{
	if (start < 1 || text[start - 1] != '-' || !isalpha((unsigned char)text[start]))
		return 0;
	int d = start >= 2 && text[start - 2] == '-' ? 2 : 1;
	char before = start - d > 0 ? text[start - d - 1] : ' ';
	return before && strchr(" \t\n\r([{\"'`,;=|>", before) ? d : 0;
}

/* Writes the option form of group [p0, p1) whose word is preceded by d dashes (atlas_option_dashes):
 * the dashes and the group's compound, folded, unstemmed ("--log-level", "-v"). Returns its
 * length, or -1 when it does not fit in buf of cap bytes (the form is then not made). */
static int option_form(const atlas_analyzer *a, const char *text, int p0, int p1, int d, char *buf, int cap)
{
	if (p1 - p0 > ATLAS_MAX_COMPOUND_PARTS || cap <= d)
		return -1;
	memset(buf, '-', (size_t)d);
	int len = compound_of(a, text, p0, p1 - 1, buf + d, cap - d);
	return len < 0 ? -1 : d + len;
}

static int emit_group(atlas_analyzer *a, int flags, const char *text, int p0, int p1,
		      atlas_token_fn fn, void *ctx)
{
	char stem[256], word[256], comp[512];
	int rc = 0;
	int nparts = p1 - p0;
	int query = (flags & FTS5_TOKENIZE_QUERY) != 0;
	int prefix = (flags & FTS5_TOKENIZE_PREFIX) != 0;

	if (flags & FTS5_TOKENIZE_AUX) {
		/* snippets and highlights take matches from the index and only need each position's
		 * byte range: no stems, no colocated forms */
		for (int i = p0; i < p1 && !rc; i++) {
			const part *pt = &a->parts[i];
			rc = fn(ctx, 0, a->arena + a->toks[pt->tok].off + pt->o1, pt->o2 - pt->o1, pt->start,
				pt->end);
		}
		return rc;
	}
	/* a compound of one word's humps is written as one word too ("hashmap" for "HashMap"), and
	 * as one word it is stemmed: both sides stem it, so that every way of typing it meets; one
	 * with joiners ("shard_map") is no word and stays as it is. The surface forms (what the
	 * vocabulary counts, what a query's words are looked up by) are never stemmed. */
	int stem_compounds = !prefix && !(flags & ATLAS_ANALYZE_SURFACE);
	/* an option ("--expires") is also written with its dashes, colocated, as a query phrase of
	 * it alone asks for it: the page that defines the option, not every page saying "expires" */
	int dashes = prefix || (flags & ATLAS_TOKENIZE_PARTS) ? 0 : atlas_option_dashes(text, a->parts[p0].start);
	char option[512];
	int olen = dashes ? option_form(a, text, p0, p1, dashes, option, sizeof(option)) : -1;
	if (query && olen > 0)
		return fn(ctx, 0, option, olen, a->parts[p0].start - dashes, a->parts[p1 - 1].end);
	if (query && nparts > 1 && nparts <= ATLAS_MAX_COMPOUND_PARTS && !(flags & ATLAS_TOKENIZE_PARTS)) {
		int len = compound_of(a, text, p0, p1 - 1, comp, sizeof(comp));
		if (len > 0 && stem_compounds && a->parts[p0].tok == a->parts[p1 - 1].tok)
			len = stem_compound(a, comp, len, sizeof(comp));
		if (len > 0)
			return fn(ctx, 0, comp, len, a->parts[p0].start, a->parts[p1 - 1].end);
	}
	for (int i = p0; i < p1 && !rc; i++) {
		const part *pt = &a->parts[i];
		const char *src;
		int wlen = part_word(text, a->arena + a->toks[pt->tok].off, pt, &src);
		if (wlen >= (int)sizeof(word)) {
			/* a very long word is cut, but between characters: never inside a UTF-8 sequence */
			wlen = (int)sizeof(word) - 1;
			while (wlen > 0 && ((unsigned char)src[wlen] & 0xC0) == 0x80)
				wlen--;
		}
		memcpy(word, src, (size_t)wlen);
		word[wlen] = '\0';
		if (query && prefix) {
			rc = fn(ctx, 0, word, wlen, pt->start, pt->end);
			continue;
		}
		int slen = atlas_stem(a, word, wlen, stem, sizeof(stem));
		rc = fn(ctx, 0, stem, slen, pt->start, pt->end);
		if (rc || query)
			continue;
		/* each form once at a position: compounds of different parts can stem alike ("abcDilL":
		 * "abcdil" and "abcdill" both "abcdil"), and a position held twice is a term counted
		 * twice */
		form_set done;
		done.n = 0;
		form_add(&done, stem, slen);
		if ((flags & ATLAS_ANALYZE_SURFACE) && !form_has(&done, word, wlen)) {
			rc = fn(ctx, FTS5_TOKEN_COLOCATED, word, wlen, pt->start, pt->end);
			form_add(&done, word, wlen);
		}
		if (!rc && i == p0 && olen > 0 && !form_has(&done, option, olen)) {
			rc = fn(ctx, FTS5_TOKEN_COLOCATED, option, olen, pt->start - dashes, a->parts[p1 - 1].end);
			form_add(&done, option, olen);
		}
		for (int j = i + 1; !rc && j < p1 && j - i < ATLAS_MAX_COMPOUND_PARTS; j++) {
			int len = compound_of(a, text, i, j, comp, sizeof(comp));
			if (len > 0 && stem_compounds && pt->tok == a->parts[j].tok)
				len = stem_compound(a, comp, len, sizeof(comp));
			if (len > 0 && !form_has(&done, comp, len)) {
				rc = fn(ctx, FTS5_TOKEN_COLOCATED, comp, len, pt->start, a->parts[j].end);
				form_add(&done, comp, len);
			}
		}
	}
	return rc;
}

/* True for code points unicode61 treats as separators that the fast path knows: Latin-1
 * punctuation and symbols, general punctuation (dashes, quotes, ellipsis), arrows, math operators,
 * box drawing and geometric shapes (▸). Anything else non-ASCII goes to unicode61. */
static int known_separator(unsigned cp)
{
	return (cp >= 0xA0 && cp <= 0xBF && cp != 0xAA && cp != 0xB2 && cp != 0xB3 && cp != 0xB5 &&
		cp != 0xB9 && cp != 0xBA && cp != 0xBC && cp != 0xBD && cp != 0xBE) ||
	       cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) ||
	       (cp >= 0x2190 && cp <= 0x22FF) || (cp >= 0x2500 && cp <= 0x25FF);
}

/* The length of the UTF-8 sequence at s[i] (i < n) when it is whole (its continuation bytes all
 * there) and encodes a separator the fast paths know, else 0: the text is then left to unicode61,
 * which reads a malformed sequence its own way. */
static int known_separator_at(const unsigned char *s, int i, int n)
{
	unsigned c = s[i];
	int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
	if (!len || i + len > n)
		return 0;
	unsigned cp = c & (0xFF >> (len + 1));
	for (int k = 1; k < len; k++) {
		if ((s[i + k] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i + k] & 0x3F);
	}
	return known_separator(cp) ? len : 0;
}

/* The ASCII splitter's byte classes: 0 a separator, 1 a lowercase letter or a digit, 2 a capital,
 * 3 not ASCII. */
static const unsigned char ascii_class[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
	0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 0,
	0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
	3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

/* Splits text the way unicode61 does (ASCII letters and digits are token characters, folded to
 * lowercase) without calling it, for text that is ASCII apart from known separators. Returns 0,
 * 1 when the text holds a character only unicode61 can classify, or SQLITE_NOMEM. */
static int fast_split(atlas_analyzer *a, const char *text, int n)
{
	const unsigned char *s = (const unsigned char *)text;
	int i = 0;
	char buf[256];
	while (i < n) {
		unsigned c = s[i];
		if (c >= 0x80) {
			int len = known_separator_at(s, i, n);
			if (!len)
				return 1;
			i += len;
			continue;
		}
		int cls = ascii_class[c];
		if (cls == 0) {
			i++;
			continue;
		}
		/* a run of letters and digits, folded; a capital after its first byte may be a hump */
		int start = i, len = 0, upper_inside = 0;
		do {
			int up = cls == 2;
			upper_inside |= up & (i > start);
			if (len < (int)sizeof(buf))
				buf[len++] = (char)(s[i] | (up << 5));
			i++;
		} while (i < n && (unsigned)((cls = ascii_class[s[i]]) - 1) <= 1u);
		if (i < n && cls == 3) {
			/* a letter run touching a non-ASCII character: is that character a separator? */
			if (!known_separator_at(s, i, n))
				return 1;
		}
		if (i - start > (int)sizeof(buf))
			return 1; /* unicode61 has its own rules for very long tokens */
		int rc = push_token(a, buf, len, start, i,
				    upper_inside ? SHAPE_ASCII_CAMEL : SHAPE_ASCII_FLAT);
		if (rc != SQLITE_OK)
			return rc;
	}
	return 0;
}

/* Aux mode over text that is ASCII apart from known separators: one token per position (letter
 * and digit runs, split at camelCase humps as split_camel does), emitted as they are found, so a
 * callback that stops early (a snippet window's end) saves the rest of the work. A run without a
 * capital is passed as it is (it is its own folded form); one with capitals is folded first.
 * Returns 1 when the text needs unicode61 (nothing emitted then), else 0, SQLITE_NOMEM, or the
 * callback's non-zero value. */
static int aux_stream(const char *text, int n, atlas_token_fn fn, void *ctx)
{
	const unsigned char *s = (const unsigned char *)text;
	/* every non-ASCII character a known separator: ASCII is skipped eight bytes at a time */
	for (int i = 0; i < n;) {
		if (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, s + i, sizeof(w));
			if (!(w & 0x8080808080808080ULL)) {
				i += 8;
				continue;
			}
		}
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		int len = known_separator_at(s, i, n);
		if (!len)
			return 1;
		i += len;
	}
#define LOWER(c) ((c) >= 'a' && (c) <= 'z')
#define UPPER(c) ((c) >= 'A' && (c) <= 'Z')
	/* ascii_class: 1 a lowercase letter or a digit, 2 a capital */
	int i = 0;
	char buf[256];
	while (i < n) {
		if ((unsigned)(ascii_class[s[i]] - 1) > 1) {
			i++;
			continue;
		}
		int start = i;
		unsigned classes = 0;
		while (i < n && (unsigned)(ascii_class[s[i]] - 1) <= 1)
			classes |= ascii_class[s[i++]];
		if (!(classes & 2)) {
			int rc = fn(ctx, 0, text + start, i - start, start, i);
			if (rc)
				return rc;
			continue;
		}
		char *low = i - start <= (int)sizeof(buf) ? buf : malloc((size_t)(i - start));
		if (!low)
			return SQLITE_NOMEM;
		for (int k = start; k < i; k++)
			low[k - start] = (char)(UPPER(s[k]) ? s[k] + 32 : s[k]);
		int from = start, rc = 0;
		int humps = acronym_plural(text + start, i - start) ? i - 1 : i; /* as split_camel */
		for (int k = start + 1; k < i && !rc; k++) {
			if (UPPER(s[k]) && (LOWER(s[k - 1]) || (UPPER(s[k - 1]) && k + 1 < humps && LOWER(s[k + 1])))) {
				rc = fn(ctx, 0, low + (from - start), k - from, from, k);
				from = k;
			}
		}
		if (!rc)
			rc = fn(ctx, 0, low + (from - start), i - from, from, i);
		if (low != buf)
			free(low);
		if (rc)
			return rc;
	}
#undef LOWER
#undef UPPER
	return 0;
}

/* The scratch an analyzer keeps between calls, at most: its arrays for as many tokens, and as many
 * bytes of folded tokens. A larger text's (a long page's body: 16,384 tokens, 650 KB of token and
 * part records) is given back once it is analyzed, not held while the build analyzes the rest. */
#define SCRATCH_KEEP_TOKENS 4096
#define SCRATCH_KEEP_BYTES 32768

/* Frees a's scratch arrays when they grew past what is kept between calls (they grow again as
 * needed). Cannot fail. */
static void trim_scratch(atlas_analyzer *a)
{
	if (a->captoks > SCRATCH_KEEP_TOKENS || a->capparts > SCRATCH_KEEP_TOKENS ||
	    a->caparena > SCRATCH_KEEP_BYTES) {
		free(a->toks);
		free(a->parts);
		free(a->arena);
		a->toks = NULL;
		a->parts = NULL;
		a->arena = NULL;
		a->ntoks = a->captoks = a->capparts = 0;
		a->narena = a->caparena = 0;
	}
}

static int analyze(atlas_analyzer *a, int flags, const char *text, int n, atlas_token_fn fn,
		   void *ctx);

int atlas_analyze(atlas_analyzer *a, int flags, const char *text, int n, atlas_token_fn fn,
		  void *ctx)
{
	int rc = analyze(a, flags, text, n, fn, ctx);
	trim_scratch(a);
	return rc;
}

/* atlas_analyze, but for the scratch it leaves as large as the text made it. */
static int analyze(atlas_analyzer *a, int flags, const char *text, int n, atlas_token_fn fn,
		   void *ctx)
{
	if ((flags & FTS5_TOKENIZE_AUX) && !(flags & ATLAS_ANALYZE_UNICODE61)) {
		int rc = aux_stream(text, n, fn, ctx);
		if (rc != 1)
			return rc;
	}
	a->ntoks = 0;
	a->narena = 0;
	int rc = flags & ATLAS_ANALYZE_UNICODE61 ? 1 : fast_split(a, text, n);
	if (rc == 1) {
		a->ntoks = 0;
		a->narena = 0;
		rc = a->u61.tok.xTokenize(a->u61_inst, a, FTS5_TOKENIZE_DOCUMENT, text, n, collect_token);
	}
	if (rc != SQLITE_OK)
		return rc;
	int nparts = 0;
	for (int t = 0; t < a->ntoks && rc == SQLITE_OK; t++)
		rc = split_camel(a, text, t, &nparts);
	if (rc != SQLITE_OK)
		return rc;
	/* a query string of several words is a phrase: identifiers in it are matched by their parts,
	 * which sit at consecutive positions in documents, so that positions line up */
	if (flags & FTS5_TOKENIZE_QUERY) {
		int groups = nparts > 0;
		for (int i = 1; i < nparts; i++) {
			const part *prev = &a->parts[i - 1], *cur = &a->parts[i];
			groups += !(prev->tok == cur->tok ||
				    is_joiner(text, a->toks[prev->tok].end, a->toks[cur->tok].start));
		}
		if (groups > 1)
			flags |= ATLAS_TOKENIZE_PARTS;
	}
	int p0 = 0;
	for (int i = 1; i <= nparts && rc == 0; i++) {
		int joined = 0;
		if (i < nparts) {
			const part *prev = &a->parts[i - 1], *cur = &a->parts[i];
			joined = prev->tok == cur->tok ||
				 is_joiner(text, a->toks[prev->tok].end, a->toks[cur->tok].start);
		}
		if (!joined) {
			rc = emit_group(a, flags, text, p0, i, fn, ctx);
			p0 = i;
		}
	}
	return rc;
}

/**************************************************************************************************
** FTS5 glue.
*/

typedef struct module_ctx {
	u61_module u61;
	atlas_tap *tap; /* set by atlas_analyzer_set_tap, NULL when none */
} module_ctx;

static int fts_create(void *user, const char **argv, int argc, Fts5Tokenizer **out)
{
	(void)argv;
	(void)argc;
	atlas_analyzer *a = NULL;
	if (analyzer_create(&a, &((module_ctx *)user)->u61, NULL))
		return SQLITE_ERROR;
	a->module = user;
	*out = (Fts5Tokenizer *)a;
	return SQLITE_OK;
}

/* FTS5's token callback and a tap's, each given each token (the tap no colocated ones). */
typedef struct tapped {
	int (*xToken)(void *, int, const char *, int, int, int);
	void *ctx;
	atlas_token_fn tap;
	void *tap_ctx;
} tapped;

static int tapped_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	tapped *t = ctx;
	int rc = t->xToken(t->ctx, tflags, tok, n, start, end);
	if (rc == SQLITE_OK && !(tflags & FTS5_TOKEN_COLOCATED))
		rc = t->tap(t->tap_ctx, tflags, tok, n, start, end);
	return rc;
}

static void fts_delete(Fts5Tokenizer *t)
{
	atlas_analyzer_free((atlas_analyzer *)t);
}

static int fts_tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n,
			int (*xToken)(void *, int, const char *, int, int, int))
{
	atlas_analyzer *a = (atlas_analyzer *)t;
	atlas_tap *tap = a->module ? a->module->tap : NULL;
	if (tap && flags == FTS5_TOKENIZE_DOCUMENT) {
		tapped x = { xToken, ctx, tap->begin(tap->ctx, text, n), tap->ctx };
		if (x.tap)
			return atlas_analyze(a, flags, text, n, tapped_token, &x);
	}
	return atlas_analyze(a, flags, text, n, xToken, ctx);
}

int atlas_analyzer_set_tap(sqlite3 *db, atlas_tap *tap, atlas_error *err)
{
	fts5_api *api = NULL;
	void *user = NULL;
	fts5_tokenizer tok;
	if (fts5_api_of(db, &api) != SQLITE_OK ||
	    api->xFindTokenizer(api, ATLAS_TOKENIZER_NAME, &user, &tok) != SQLITE_OK || !user)
		return atlas_error_set(err, ATLAS_ESQL, "the atlas tokenizer is not registered");
	((module_ctx *)user)->tap = tap;
	return 0;
}

int atlas_analyzer_register(sqlite3 *db, atlas_error *err)
{
	fts5_api *api = NULL;
	if (fts5_api_of(db, &api) != SQLITE_OK)
		return atlas_error_set(err, ATLAS_ESQL, "SQLite was built without FTS5");
	module_ctx *m = malloc(sizeof(*m));
	if (!m)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	int rc = find_u61(db, &m->u61, err);
	if (rc) {
		free(m);
		return rc;
	}
	m->tap = NULL;
	fts5_tokenizer tok = { fts_create, fts_delete, fts_tokenize };
	if (api->xCreateTokenizer(api, ATLAS_TOKENIZER_NAME, m, &tok, free) != SQLITE_OK) {
		free(m);
		return atlas_error_set(err, ATLAS_ESQL, "cannot register the atlas tokenizer: %s",
				       sqlite3_errmsg(db));
	}
	return 0;
}
