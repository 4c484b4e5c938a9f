/* spans.c - the byte ranges of a text's positions, from the analyzer's aux mode. */
#include "spans.h"
#include "grow.h"

#include <stdlib.h>

typedef struct add_ctx {
	atlas_span_list *l;
	int base, max;
} add_ctx;

/* What add_token returns to stop the analysis: no SQLite code */
#define SPANS_FULL (-1)

static int add_token(void *ctx, int tflags, const char *tok, int ntok, int start, int end)
{
	add_ctx *c = ctx;
	atlas_span_list *l = c->l;
	(void)tok;
	(void)ntok;
	if (tflags & FTS5_TOKEN_COLOCATED)
		return SQLITE_OK;
	if (c->max >= 0 && l->count >= c->max)
		return SPANS_FULL;
	if (atlas_grow(&l->sp, &l->cap, l->count, sizeof(*l->sp), 256))
		return SQLITE_NOMEM;
	l->sp[l->count++] = (atlas_span){c->base + start, c->base + end};
	return SQLITE_OK;
}

int atlas_spans_add(atlas_span_list *l, atlas_analyzer *a, const char *text, int n, int base,
		    int max)
{
	add_ctx c = {l, base, max};
	int rc = atlas_analyze(a, FTS5_TOKENIZE_AUX, text, n, add_token, &c);
	return rc == SPANS_FULL ? SQLITE_OK : rc;
}

static int count_token(void *ctx, int tflags, const char *tok, int ntok, int start, int end)
{
	(void)tok;
	(void)ntok;
	(void)start;
	(void)end;
	if (!(tflags & FTS5_TOKEN_COLOCATED))
		++*(int *)ctx;
	return SQLITE_OK;
}

int atlas_spans_count(atlas_analyzer *a, const char *text, int n, int *count)
{
	*count = 0;
	return atlas_analyze(a, FTS5_TOKENIZE_AUX, text, n, count_token, count);
}

void atlas_span_list_free(atlas_span_list *l)
{
	if (!l)
		return;
	free(l->sp);
	l->sp = NULL;
	l->count = l->cap = 0;
}
