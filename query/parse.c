/* parse.c - query syntax: words, "quoted phrases" and -excluded words. Everything else a reader
 * types (FTS5 operators, column filters, *, ^, parentheses) is text, never syntax. */
#include "parse.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static char *sanitize(const char *text, size_t n, size_t max_bytes)
{
	char *out = malloc((n < max_bytes ? n : max_bytes) + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		const unsigned char *s = (const unsigned char *)text + i;
		size_t len = atlas_utf8_len(s, n - i);
		if (len == 0 || (len == 1 && (s[0] < 0x20 || s[0] == 0x7F))) {
			if (o + 1 > max_bytes)
				break;
			out[o++] = ' ';
			i += len ? len : 1;
			continue;
		}
		if (o + len > max_bytes)
			break;
		memcpy(out + o, s, len);
		o += len;
		i += len;
	}
	out[o] = '\0';
	return out;
}

/* Adds s[0..n), its blanks at either end trimmed, to q as a clause (a copy q owns); an empty one
 * or one past QUERY_MAX_CLAUSES is left out. Returns 0, or ATLAS_ENOMEM when out of memory. */
static int add_clause(parsed_query *q, const char *s, size_t n, bool phrase, bool negated)
{
	while (n && *s == ' ') {
		s++;
		n--;
	}
	while (n && s[n - 1] == ' ')
		n--;
	if (!n || q->nclauses == QUERY_MAX_CLAUSES)
		return 0;
	char *t = malloc(n + 1);
	if (!t)
		return ATLAS_ENOMEM;
	memcpy(t, s, n);
	t[n] = '\0';
	q->clauses[q->nclauses++] = (query_clause){ t, phrase, negated };
	return 0;
}

int query_parse(parsed_query *q, const char *text, size_t n, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->clean = sanitize(text ? text : "", text ? n : 0, max_bytes);
	if (!q->clean)
		return ATLAS_ENOMEM;
	const char *s = q->clean;
	size_t len = strlen(s);
	q->trailing_space = len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t');
	size_t i = 0;
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= len)
			break;
		bool negated = false;
		if (s[i] == '-' && i + 1 < len && s[i + 1] != ' ' && s[i + 1] != '-') {
			negated = true;
			i++;
		}
		if (s[i] == '"') {
			size_t j = i + 1;
			while (j < len && s[j] != '"')
				j++;
			if (add_clause(q, s + i + 1, j - i - 1, true, negated))
				goto oom;
			i = j < len ? j + 1 : j;
			continue;
		}
		size_t j = i;
		while (j < len && s[j] != ' ' && s[j] != '\t' && s[j] != '"')
			j++;
		if (add_clause(q, s + i, j - i, false, negated))
			goto oom;
		i = j;
	}
	return 0;
oom:
	parsed_query_free(q);
	return ATLAS_ENOMEM;
}

void parsed_query_free(parsed_query *q)
{
	if (!q)
		return;
	for (int i = 0; i < q->nclauses; i++)
		free(q->clauses[i].text);
	free(q->clean);
	memset(q, 0, sizeof(*q));
}

void fts_quote(strbuf *out, const char *s, size_t n)
{
	strbuf_putc(out, '"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			strbuf_putc(out, '"');
		strbuf_putc(out, s[i]);
	}
	strbuf_putc(out, '"');
}
