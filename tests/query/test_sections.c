/* test_sections.c - the spans the engine finds for each section's tokens: as many as the index
 * counts (heading, then lead and body), each covering a word of its text, in order; the same
 * whether the engine holds the texts (found once, at open) or reads a section's row per search;
 * and, with --chunked, the same tokens and text when a search reads only the chunks of a long
 * body that hold a window of its tokens (some window of the index must start past a chunk).
 *
 * usage: test_sections INDEX [--chunked] */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_PRINT_MAX 20
#include "check.h"
#include "engine.h"
#include "engine_internal.h"

/* One check of section sec (0-based; -1: the index as a whole), what saying what is expected. */
#define check(ok, what, sec) CHECK(ok, "section %d: %s", (sec) + 1, what)

/* Whether text[s, e) holds a letter or a digit (a word, or a word's part). */
static int is_word(const char *text, int s, int e)
{
	for (int i = s; i < e; i++)
		if (isalnum((unsigned char)text[i]) || (unsigned char)text[i] >= 0x80)
			return 1;
	return 0;
}

/* The spans of t, heading tokens first: in order, inside their text, each a word. */
static void check_spans(const atlas_engine *e, int sec, const section_text *t)
{
	const section_info *si = &e->sections[sec];
	check(t->decoded != NULL, "spans found", sec);
	if (!t->decoded)
		return;
	int n = si->nhead + si->nlead + si->nbody;
	for (int k = 0; k < n; k++) {
		const atlas_span *sp = &t->decoded[k];
		const char *text = k < si->nhead ? t->heading : t->body;
		int len = k < si->nhead ? t->nheading : t->nbody;
		int ok = sp->start >= 0 && sp->start < sp->end && sp->end <= len &&
			 is_word(text, sp->start, sp->end) &&
			 (k == 0 || k == si->nhead || sp->start >= t->decoded[k - 1].start);
		if (!ok) {
			char what[160];
			snprintf(what, sizeof(what),
				 "token %d of %d is [%d, %d), not a word in order", k, n, sp->start,
				 sp->end);
			check(0, what, sec);
			return;
		}
	}
	check(1, "spans", sec);
}

/* Reads every window of 16 body tokens of section sec, one every 7 tokens, as a search does (the
 * chunks holding it) and checks each token against held, the section's whole text. Returns the
 * windows read from a chunk after the first. */
static int check_windows(atlas_engine *e, int sec, const section_text *held)
{
	const section_info *si = &e->sections[sec];
	int nbody = si->nlead + si->nbody, later = 0;
	for (int from = 0; from < nbody; from += 7) {
		int to = from + 16 < nbody ? from + 16 : nbody;
		section_text row;
		int got = engine_section_row(e, sec, from, to, &row);
		sqlite3_reset(e->st_section_text);
		if (got || !row.decoded || row.body_first > from || row.body_first < 0) {
			check(0, "a window of its body reads", sec);
			return later;
		}
		later += row.body_first > 0;
		for (int k = from; k < to; k++) {
			const atlas_span *r = &row.decoded[si->nhead + k - row.body_first];
			const atlas_span *h = &held->decoded[si->nhead + k];
			if (r->end - r->start != h->end - h->start || r->end > row.nbody ||
			    memcmp(row.body + r->start, held->body + h->start, (size_t)(r->end - r->start)) != 0) {
				char what[160];
				snprintf(what, sizeof(what), "token %d of the window [%d, %d) is not the whole text's",
					 k, from, to);
				check(0, what, sec);
				return later;
			}
		}
	}
	return later;
}

int main(int argc, char **argv)
{
	bool chunked = argc == 3 && strcmp(argv[2], "--chunked") == 0;
	if (argc != 2 && !chunked) {
		fprintf(stderr, "usage: test_sections INDEX [--chunked]\n");
		return 2;
	}
	atlas_engine *e = NULL;
	atlas_error err = {0, ""};
	if (atlas_engine_open(&e, argv[1], &err)) {
		printf("FAIL  open: %s\n", err.msg);
		return 1;
	}
	check(e->texts != NULL, "the index's texts are held", -1);
	int later = 0;
	for (int s = 0; s < e->nsections; s++) {
		section_text row;
		int got = engine_section_row(e, s, 0, INT_MAX, &row);
		check(got == 0, "its row reads", s);
		if (got == 0) {
			check_spans(e, s, &row);
			if (e->texts) {
				const section_text *held = &e->texts[s];
				int n = e->sections[s].nhead + e->sections[s].nlead +
					e->sections[s].nbody;
				check(held->nbody == row.nbody &&
					  memcmp(held->body, row.body, (size_t)row.nbody) == 0,
				      "held body is the row's", s);
				check(held->decoded && row.decoded &&
					  memcmp(held->decoded, row.decoded,
						 (size_t)n * sizeof(atlas_span)) == 0,
				      "held spans are the row's", s);
			}
		}
		sqlite3_reset(e->st_section_text);
		if (chunked && e->texts && e->texts[s].decoded)
			later += check_windows(e, s, &e->texts[s]);
	}
	if (chunked)
		check(later > 0, "some window is read from a chunk after the first", -1);
	printf("%d sections\n", e->nsections);
	atlas_engine_free(e);
	return check_done("test_sections");
}
