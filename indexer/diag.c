/* diag.c - the corpus's diagnostics: a list of file:line problems, and the lines they are at. */
#include "corpus_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diag_add(diag_list *d, const char *file, int line, enum diag_severity sev, const char *fmt, ...)
{
	if (sev == DIAG_ERROR)
		d->errors++;
	else
		d->warnings++;
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 32;
		diag *items = realloc(d->items, (size_t)cap * sizeof(*items));
		if (!items)
			return;
		d->items = items;
		d->cap = cap;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag *it = &d->items[d->n];
	it->file = strdup(file);
	it->msg = strdup(msg);
	it->line = line;
	it->severity = sev;
	if (it->file && it->msg)
		d->n++;
	else {
		free(it->file);
		free(it->msg);
	}
}

void diag_list_free(diag_list *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++) {
		free(d->items[i].file);
		free(d->items[i].msg);
	}
	free(d->items);
	memset(d, 0, sizeof(*d));
}

int diag_line_of_offset(const char *data, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off; i++)
		if (data[i] == '\n')
			line++;
	return line;
}

/* Line (within the page file) of the first occurrence of "key" in the front matter, or 1. */
int diag_field_line(const char *fm, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = fm ? strstr(fm, pat) : NULL;
	return p ? diag_line_of_offset(fm, (size_t)(p - fm)) : 1;
}

/* Line of the nth (1-based) occurrence of pat in data at or after the first occurrence of from
 * (or the start when from is NULL), or fallback when absent. */
int diag_line_of_nth(const char *data, const char *from, const char *pat, int nth, int fallback)
{
	const char *p = !data ? NULL : from ? strstr(data, from) : data;
	for (int i = 0; p && i < nth; i++) {
		p = strstr(i ? p + 1 : p, pat);
	}
	return p ? diag_line_of_offset(data, (size_t)(p - data)) : fallback;
}

/* Appends src's problems to dst, in order, leaving src empty. A problem dst has no room for is
 * still counted. */
void diag_list_move(diag_list *dst, diag_list *src)
{
	if (src->n && dst->n + src->n > dst->cap) {
		int cap = dst->cap ? dst->cap : 32;
		while (cap < dst->n + src->n)
			cap *= 2;
		diag *items = realloc(dst->items, (size_t)cap * sizeof(*items));
		if (items) {
			dst->items = items;
			dst->cap = cap;
		}
	}
	for (int i = 0; i < src->n; i++) {
		if (dst->n < dst->cap) {
			dst->items[dst->n++] = src->items[i];
		} else {
			free(src->items[i].file);
			free(src->items[i].msg);
		}
	}
	dst->errors += src->errors;
	dst->warnings += src->warnings;
	free(src->items);
	memset(src, 0, sizeof(*src));
}
