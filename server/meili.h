/* meili.h - what the Meilisearch-compatible routes (meili.c) share with their request reader
 * (meili_query.c): the error in Meilisearch's shape, a parsed filter and a parsed search request. */
#ifndef ATLAS_MEILI_H
#define ATLAS_MEILI_H

#include <stdbool.h>

#include "engine.h"
#include "server.h"

#define MEILI_LINK "https://docs.meilisearch.com/errors#"
#define MEILI_API_VERSION "1.8.0" /* the Meilisearch API this subset follows */
#define MEILI_QUERIES_MAX 16      /* queries in one /multi-search */
#define FILTER_NODES_MAX 64       /* terms and operators in one filter */
#define FILTER_VALUE_MAX 256
#define FILTER_DEPTH_MAX 16       /* parentheses within parentheses */
#define CROP_DEFAULT 10           /* words, Meilisearch's default cropLength */
#define MEILI_ATTRIBUTES_MAX 24   /* room for the attributes of meili_attributes */

/* An error in Meilisearch's shape: {"message", "code", "type", "link"}. */
typedef struct meili_error {
	int status;
	const char *code;
	const char *type;            /* invalid_request, auth, internal */
	char message[480];
} meili_error;

/* The attributes of a hit, in the order they are written (NULL-terminated); the MEILI_A_* are
 * their indexes. */
extern const char *const meili_attributes[];
enum {
	MEILI_A_ID, MEILI_A_PATH, MEILI_A_URL, MEILI_A_TITLE, MEILI_A_TYPE, MEILI_A_DESCRIPTION,
	MEILI_A_LASTMOD, MEILI_A_IMAGE, MEILI_A_TOPICS, MEILI_A_TOPIC, MEILI_A_CONTENT,
	MEILI_A_LVL0, MEILI_A_LVL1, MEILI_A_LVL2, MEILI_A_ANCHOR, MEILI_A_COUNT
};

enum { F_TYPE, F_TOPIC, F_AND, F_OR, F_NOT, F_TRUE };

/* One term or operator of a filter. */
typedef struct fnode {
	int op;
	int a, b;                    /* operands (node indexes) of AND, OR, NOT */
	char value[FILTER_VALUE_MAX + 1];
} fnode;

/* A parsed filter: type = x, topic = y, with AND, OR, NOT and parentheses. */
typedef struct filter {
	fnode n[FILTER_NODES_MAX];
	int count;
	int root;                    /* -1: no filter */
} filter;

/* A search request's fields, as read from its JSON. */
typedef struct query {
	char q[SERVE_QUERY_MAX + 1];
	int offset, limit, page, hits_per_page;
	bool paged;                  /* page or hitsPerPage given: the response counts pages */
	bool facet_type, facet_topic;
	bool highlight[MEILI_ATTRIBUTES_MAX], crop[MEILI_ATTRIBUTES_MAX]; /* by index in attributes */
	bool retrieve[MEILI_ATTRIBUTES_MAX];
	bool formatted;              /* _formatted wanted: some attribute highlighted or cropped */
	const char *pre, *post, *marker;
	int crop_length;
	int sort;
	filter f;
} query;


/* The ATLAS_E* code of a failure answered with HTTP status (400 or more): ATLAS_ENOTFOUND for a
 * 404, ATLAS_EIO for a 5xx (the answer could not be made), ATLAS_EINVAL for any other (the request
 * is refused). */
int meili_status_code(int status);

/* Sets *me (status, code, the type that status implies, a printf-style message). Returns
 * meili_status_code(status). */
int meili_fail(meili_error *me, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Reads the search request o (a cJSON object) into *qr: unknown fields, values of the wrong
 * type or out of range and filters outside the subset are refused. qr->q is a copy; qr->pre,
 * post and marker point into o, which must outlive qr. Returns 0, or ATLAS_EINVAL with *me set (a
 * 400). */
int meili_read_query(query *qr, const void *o, meili_error *me);

/* Answers query qr with engine e: the response object of a search (a cJSON *: hits with their
 * attributes and _formatted, totals, facets), owned by the caller. Returns NULL with *me set (a
 * 400 for a request the engine refuses, a 500 otherwise). *count is the hits returned. */
struct cJSON *meili_results(atlas_engine *e, const query *qr, meili_error *me, long *count);

/* The atlas_search_more accept of a filter (ctx, a filter *): whether page d passes it. */
bool meili_accept_filter(const atlas_doc *d, void *ctx);

#endif
