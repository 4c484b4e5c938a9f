/* parse.h - a reader's query text into clauses (words, "quoted phrases", -excluded words), and
 * clauses into an FTS5 MATCH expression that always parses. */
#ifndef ATLAS_PARSE_H
#define ATLAS_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "strbuf.h"

#define QUERY_MAX_CLAUSES 32

typedef struct query_clause {
	char *text;     /* sanitized UTF-8, without quotes or the leading '-' */
	bool phrase;    /* came in double quotes */
	bool negated;   /* came with a leading '-' */
} query_clause;

typedef struct parsed_query {
	char *clean;            /* the whole query, sanitized: valid UTF-8, no control bytes, cut to size */
	query_clause clauses[QUERY_MAX_CLAUSES];
	int nclauses;
	bool trailing_space;    /* the reader's text ended in white space: no prefix word */
} parsed_query;

/* Parses text[0..n) (any bytes) into q. Invalid UTF-8 and control bytes become spaces, the text is
 * cut to max_bytes at a character boundary and to QUERY_MAX_CLAUSES clauses. Returns 0, or
 * ATLAS_ENOMEM when out of memory (q is then empty). */
int query_parse(parsed_query *q, const char *text, size_t n, size_t max_bytes);
void parsed_query_free(parsed_query *q);

/* Appends s as an FTS5 string literal: in double quotes, inner quotes doubled. */
void fts_quote(strbuf *out, const char *s, size_t n);

#endif
