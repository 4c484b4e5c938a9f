/* test_sections.c - the spans the engine finds for each section's tokens: as many as the index
 * counts (heading, then lead and body), each covering a word of its text, in order; the same
 * whether the engine holds the texts (found once, at open) or reads a section's row per search.
 *
 * usage: test_sections INDEX */
#include <ctype.h>
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

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_sections INDEX\n");
		return 2;
	}
	atlas_engine *e = NULL;
	atlas_error err = {0, ""};
	if (atlas_engine_open(&e, argv[1], &err)) {
		printf("FAIL  open: %s\n", err.msg);
		return 1;
	}
	check(e->texts != NULL, "the real corpus's texts are held", -1);
	for (int s = 0; s < e->nsections; s++) {
		section_text row;
		int got = engine_section_row(e, s, -1, &row);
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
	}
	printf("%d sections\n", e->nsections);
	atlas_engine_free(e);
	return check_done("test_sections");
}
