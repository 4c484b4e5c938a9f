/* token_counts.c - sections' token counts from the spans of the row FTS5 indexed (token_counts.h). */
#include "token_counts.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

static int tap_token(void *ctx, int tflags, const char *tok, int n, int start, int end)
{
	row_tap *t = ctx;
	column_spans *c = t->cur;
	(void)tflags;
	(void)tok;
	(void)n;
	if (!c->seen)
		return SQLITE_OK;
	if (atlas_grow(&c->sp, &c->cap, c->count, sizeof(*c->sp), 1024)) {
		c->seen = false; /* its sections analyzed on their own */
		return SQLITE_OK;
	}
	c->sp[c->count++] = (atlas_span){ start, end };
	return SQLITE_OK;
}

static atlas_token_fn tap_begin(void *ctx, const char *text, int n)
{
	row_tap *t = ctx;
	if (!t->armed)
		return NULL;
	for (int k = 0; k < NCOLS; k++) {
		column_spans *c = &t->col[k];
		if (c->text == text && c->n == n && !c->seen) {
			c->seen = true;
			c->count = c->next = 0;
			t->cur = c;
			return tap_token;
		}
	}
	return NULL;
}

void tap_row(row_tap *t, const char *title, const char *headings, const char *description,
	     const char *body, size_t nbody, size_t nheadings)
{
	const char *text[NCOLS] = { title, headings, description, body };
	int n[NCOLS] = { (int)strlen(title), (int)nheadings, (int)strlen(description), (int)nbody };
	for (int k = 0; k < NCOLS; k++) {
		t->col[k].text = text[k];
		t->col[k].n = n[k];
		t->col[k].seen = false;
		t->col[k].count = t->col[k].next = 0;
	}
}

void tap_free(row_tap *t)
{
	for (int k = 0; k < NCOLS; k++)
		free(t->col[k].sp);
}

/* The positions of text[0..n), which column col holds at [at, at + n), into *count: counted from
 * the spans the tokenizer found there when it saw the column, else by analyzing the text. Returns
 * 0 or an SQLite error code. */
static int part_tokens(atlas_analyzer *a, row_tap *t, int col, int at, const char *text, int n,
		       int *count)
{
	column_spans *c = col >= 0 ? &t->col[col] : NULL;
	if (c && c->seen && at >= 0 && at + n <= c->n) {
		int i = c->next;
		while (i < c->count && c->sp[i].start < at)
			i++;
		int j = i;
		while (j < c->count && c->sp[j].end <= at + n)
			j++;
		/* no token of the column across either end of the part */
		if ((i == 0 || c->sp[i - 1].end <= at) &&
		    (j == c->count || c->sp[j].start >= at + n)) {
			c->next = j;
			*count = j - i;
			return 0;
		}
	}
	return atlas_spans_count(a, text, n, count);
}


int count_section_tokens(atlas_error *err, const char *file, atlas_analyzer *a, section_tokens *tk,
			 const page *p, int s, row_tap *t, const section_places *pl)
{
	const section *x = &p->secs[s];
	size_t lead = s == 0 ? (p->lead_len <= x->body_len ? p->lead_len : x->body_len) : 0;
	const char *body = x->body;
	int nhead = (int)strlen(x->heading);
	int rc;
	if (s == 0)
		rc = part_tokens(a, t, strcmp(x->heading, p->title) == 0 ? COL_TITLE : -1, 0, x->heading,
				 nhead, &tk->heading);
	else
		rc = part_tokens(a, t, COL_HEADINGS, pl->heads_at[s], x->heading, nhead, &tk->heading);
	if (!rc) {
		bool same = lead == strlen(p->description) && memcmp(body, p->description, lead) == 0;
		rc = part_tokens(a, t, same ? COL_DESCRIPTION : -1, 0, body, (int)lead, &tk->lead);
	}
	if (!rc) {
		int n = (int)(x->body_len - lead);
		int col = pl->body_n[s] == n ? COL_BODY : -1;
		rc = part_tokens(a, t, col, pl->body_at[s], body + lead, n, &tk->body);
	}
	if (rc)
		return atlas_error_set(err, rc == SQLITE_NOMEM ? ATLAS_ENOMEM : ATLAS_ESQL,
				       "%s: token counts of %s: %s", file, p->path, sqlite3_errstr(rc));
	return 0;
}

int places_reserve(section_places *places, int nsecs)
{
	if (nsecs <= places->cap)
		return 0;
	int cap = nsecs * 2;
	if (atlas_resize(&places->heads_at, (size_t)cap, sizeof(int)) ||
	    atlas_resize(&places->body_at, (size_t)cap, sizeof(int)) ||
	    atlas_resize(&places->body_n, (size_t)cap, sizeof(int)))
		return ATLAS_ENOMEM;
	places->cap = cap;
	return 0;
}

void join_sections(const page *p, strbuf *heads, strbuf *body, section_places *places)
{
	/* appended, not printed: a printf of the body measured its length once more first */
	for (int s = 0; s < p->nsecs; s++) {
		const section *x = &p->secs[s];
		places->heads_at[s] = (int)heads->len;
		if (s) {
			strbuf_puts(heads, x->heading);
			strbuf_putc(heads, '\n');
		}
		const char *b = x->body;
		if (s == 0)
			b += p->lead_len <= x->body_len ? p->lead_len : x->body_len;
		places->body_at[s] = (int)body->len;
		strbuf_puts(body, b);
		places->body_n[s] = (int)body->len - places->body_at[s];
		strbuf_putc(body, '\n');
	}
}

void tap_init(row_tap *t)
{
	memset(t, 0, sizeof(*t));
	t->tap = (atlas_tap){ tap_begin, t };
}
