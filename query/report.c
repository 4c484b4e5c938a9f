/* report.c - the authors' analytics report: top, zero-result and unclicked queries, clicks by rank. */
#include "report.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define SUGGEST_PAGES 3

/* The searches and clicks of the period, and each query's figures (q: searches, best result
 * count, the correction, clicks on any of its answers). ?1 is the first unix second counted. */
#define PERIOD_SQL                                                                                 \
	"WITH s AS (SELECT * FROM searches WHERE at >= ?1), "                                      \
	"c AS (SELECT * FROM clicks WHERE at >= ?1), "                                             \
	"q AS (SELECT query, COUNT(*) AS n, MAX(results) AS results, MAX(corrected) AS corrected " \
	"      FROM s GROUP BY query), "                                                           \
	"qc AS (SELECT d.query, COUNT(*) AS clicks FROM c "                                        \
	"       JOIN (SELECT DISTINCT qid, query FROM s) d ON d.qid = c.qid GROUP BY d.query) "

/* Opens path read-only into *db. Returns 0, or 1 with a message on stderr. */
static int open_file(sqlite3 **db, const char *path, int flags)
{
	if (sqlite3_open_v2(path, db, flags, NULL) != SQLITE_OK ||
	    sqlite3_exec(*db, "SELECT 1 FROM searches, clicks LIMIT 0", NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "atlas-query: %s is not a readable analytics file: %s\n", path,
			*db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return 1;
	}
	sqlite3_busy_timeout(*db, 5000);
	return 0;
}

/* Adds to arr (JSON array) up to SUGGEST_PAGES pages e suggests for query: titles its words
 * complete, then the best page of each word searched alone. Never fails (fewer on errors). */
static void add_suggestions(cJSON *arr, atlas_engine *e, const char *query)
{
	static atlas_suggestion sg[ATLAS_SUGGEST_MAX];
	int n = atlas_suggest(sg, ATLAS_SUGGEST_MAX, e, query);
	int docs[SUGGEST_PAGES], nd = 0;
	for (int i = 0; i < n && nd < SUGGEST_PAGES; i++)
		if (sg[i].doc >= 0)
			docs[nd++] = sg[i].doc;
	char *copy = strdup(query);
	char *save = NULL;
	for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; w && nd < SUGGEST_PAGES;
	     w = strtok_r(NULL, " ", &save)) {
		atlas_search_params sp = { .q = w, .limit = 1 };
		atlas_results r;
		atlas_error err = { 0, "" };
		if (atlas_search(&r, e, &sp, &err))
			continue;
		bool dup = false;
		for (int k = 0; r.nhits && k < nd; k++)
			dup |= docs[k] == r.hits[0].doc;
		if (r.nhits && !dup)
			docs[nd++] = r.hits[0].doc;
		atlas_results_free(&r);
	}
	free(copy);
	for (int i = 0; i < nd; i++) {
		const atlas_doc *d = atlas_engine_doc(e, docs[i]);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", d->path);
		cJSON_AddStringToObject(o, "title", d->title);
		cJSON_AddItemToArray(arr, o);
	}
}

/* Returns a JSON array of the rows of PERIOD_SQL + tail (columns query, searches, results,
 * clicks, corrected), suggestions added when e and suggest; NULL on an SQL error (reported). */
static cJSON *query_list(sqlite3 *db, long long since, const char *tail, atlas_engine *e, bool suggest)
{
	char sql[2048];
	snprintf(sql, sizeof(sql),
		 PERIOD_SQL "SELECT q.query, q.n, q.results, IFNULL(qc.clicks, 0), q.corrected "
			    "FROM q LEFT JOIN qc USING(query) %s LIMIT %d",
		 tail, REPORT_ROWS);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "atlas-query: analytics: %s\n", sqlite3_errmsg(db));
		return NULL;
	}
	sqlite3_bind_int64(st, 1, since);
	cJSON *arr = cJSON_CreateArray();
	while (sqlite3_step(st) == SQLITE_ROW) {
		cJSON *o = cJSON_CreateObject();
		const char *q = (const char *)sqlite3_column_text(st, 0);
		cJSON_AddStringToObject(o, "query", q ? q : "");
		cJSON_AddNumberToObject(o, "searches", sqlite3_column_int(st, 1));
		cJSON_AddNumberToObject(o, "results", sqlite3_column_int(st, 2));
		cJSON_AddNumberToObject(o, "clicks", sqlite3_column_int(st, 3));
		const char *corr = (const char *)sqlite3_column_text(st, 4);
		if (corr)
			cJSON_AddStringToObject(o, "corrected", corr);
		else
			cJSON_AddNullToObject(o, "corrected");
		if (suggest) {
			cJSON *sg = cJSON_AddArrayToObject(o, "suggestions");
			if (e)
				add_suggestions(sg, e, q ? q : "");
		}
		cJSON_AddItemToArray(arr, o);
	}
	sqlite3_finalize(st);
	return arr;
}

/* Returns the single integer that sql (with ?1 = since) gives, 0 on errors. */
static long long scalar(sqlite3 *db, const char *sql, long long since)
{
	sqlite3_stmt *st;
	long long v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, since);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Returns the click-through by rank: clicks at each rank and their share of the searches with
 * results. */
static cJSON *by_rank(sqlite3 *db, long long since, long long with_results)
{
	sqlite3_stmt *st;
	cJSON *arr = cJSON_CreateArray();
	if (sqlite3_prepare_v2(db, "SELECT rank, COUNT(*) FROM clicks WHERE at >= ?1 AND rank > 0 "
				   "GROUP BY rank ORDER BY rank", -1, &st, NULL) != SQLITE_OK)
		return arr;
	sqlite3_bind_int64(st, 1, since);
	while (sqlite3_step(st) == SQLITE_ROW) {
		cJSON *o = cJSON_CreateObject();
		int clicks = sqlite3_column_int(st, 1);
		cJSON_AddNumberToObject(o, "rank", sqlite3_column_int(st, 0));
		cJSON_AddNumberToObject(o, "clicks", clicks);
		cJSON_AddNumberToObject(o, "rate", with_results ? (double)clicks / (double)with_results : 0);
		cJSON_AddItemToArray(arr, o);
	}
	sqlite3_finalize(st);
	return arr;
}

/* Prints one list of the report as a table under title. */
static void print_list(FILE *out, const char *title, const cJSON *arr, bool suggestions)
{
	fprintf(out, "\n%s\n", title);
	if (!cJSON_GetArraySize(arr)) {
		fprintf(out, "  (none)\n");
		return;
	}
	fprintf(out, "  %8s %8s %7s  %s\n", "searches", "results", "clicks", "query");
	const cJSON *o;
	cJSON_ArrayForEach(o, arr) {
		const cJSON *corr = cJSON_GetObjectItem(o, "corrected");
		fprintf(out, "  %8d %8d %7d  %s", cJSON_GetObjectItem(o, "searches")->valueint,
			cJSON_GetObjectItem(o, "results")->valueint, cJSON_GetObjectItem(o, "clicks")->valueint,
			cJSON_GetObjectItem(o, "query")->valuestring);
		if (cJSON_IsString(corr))
			fprintf(out, "  (searched as: %s)", corr->valuestring);
		fputc('\n', out);
		const cJSON *sg = cJSON_GetObjectItem(o, "suggestions"), *p;
		if (suggestions && sg)
			cJSON_ArrayForEach(p, sg)
				fprintf(out, "  %26s-> %s  %s\n", "", cJSON_GetObjectItem(p, "path")->valuestring,
					cJSON_GetObjectItem(p, "title")->valuestring);
	}
}

/* Prints the report as a table. */
static void print_report(FILE *out, const char *path, const cJSON *r)
{
	fprintf(out, "analytics %s, last %d days: %d searches (%d with no results), %d clicks, "
		     "click-through %.1f%%\n", path, cJSON_GetObjectItem(r, "since_days")->valueint,
		cJSON_GetObjectItem(r, "searches")->valueint, cJSON_GetObjectItem(r, "zero_result_searches")->valueint,
		cJSON_GetObjectItem(r, "clicks")->valueint, 100 * cJSON_GetObjectItem(r, "click_through")->valuedouble);
	print_list(out, "Top queries", cJSON_GetObjectItem(r, "top_queries"), false);
	print_list(out, "Queries with no results (and the pages Atlas suggests)",
		   cJSON_GetObjectItem(r, "zero_results"), true);
	print_list(out, "Queries with results but no clicks", cJSON_GetObjectItem(r, "no_clicks"), false);
	fprintf(out, "\nClick-through by rank\n  %4s %7s %7s\n", "rank", "clicks", "rate");
	const cJSON *o;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(r, "click_through_by_rank"))
		fprintf(out, "  %4d %7d %6.1f%%\n", cJSON_GetObjectItem(o, "rank")->valueint,
			cJSON_GetObjectItem(o, "clicks")->valueint, 100 * cJSON_GetObjectItem(o, "rate")->valuedouble);
}

/* Prints the report. Returns 0 or 1 (reported on stderr). */
int report_run(FILE *out, const char *path, int since_days, bool json, atlas_engine *e)
{
	sqlite3 *db = NULL;
	if (open_file(&db, path, SQLITE_OPEN_READONLY))
		return 1;
	long long since = scalar(db, "SELECT CAST(strftime('%s','now') AS INTEGER)", 0) - (long long)since_days * 86400;
	long long searches = scalar(db, "SELECT COUNT(*) FROM searches WHERE at >= ?1", since);
	long long zero = scalar(db, "SELECT COUNT(*) FROM searches WHERE at >= ?1 AND results = 0", since);
	long long clicks = scalar(db, "SELECT COUNT(*) FROM clicks WHERE at >= ?1", since);
	cJSON *r = cJSON_CreateObject();
	cJSON_AddNumberToObject(r, "since_days", since_days);
	cJSON_AddNumberToObject(r, "searches", (double)searches);
	cJSON_AddNumberToObject(r, "zero_result_searches", (double)zero);
	cJSON_AddNumberToObject(r, "clicks", (double)clicks);
	cJSON_AddNumberToObject(r, "click_through",
				searches > zero ? (double)clicks / (double)(searches - zero) : 0);
	cJSON *lists[3] = {
		query_list(db, since, "ORDER BY q.n DESC, q.query", e, false),
		query_list(db, since, "WHERE q.results = 0 ORDER BY q.n DESC, q.query", e, true),
		query_list(db, since, "WHERE q.results > 0 AND IFNULL(qc.clicks, 0) = 0 "
				      "ORDER BY q.n DESC, q.query", e, false),
	};
	int status = lists[0] && lists[1] && lists[2] ? 0 : 1;
	cJSON_AddItemToObject(r, "top_queries", lists[0] ? lists[0] : cJSON_CreateArray());
	cJSON_AddItemToObject(r, "zero_results", lists[1] ? lists[1] : cJSON_CreateArray());
	cJSON_AddItemToObject(r, "no_clicks", lists[2] ? lists[2] : cJSON_CreateArray());
	cJSON_AddItemToObject(r, "click_through_by_rank", by_rank(db, since, searches - zero));
	sqlite3_close(db);
	if (json) {
		char *text = cJSON_PrintUnformatted(r);
		fprintf(out, "%s\n", text ? text : "{}");
		free(text);
	} else {
		print_report(out, path, r);
	}
	cJSON_Delete(r);
	return status;
}

/* Deletes rows past the retention. Returns 0 or 1 (reported on stderr). */
int report_prune(const char *path, int days)
{
	sqlite3 *db = NULL;
	if (open_file(&db, path, SQLITE_OPEN_READWRITE))
		return 1;
	if (days <= 0) {
		sqlite3_stmt *st;
		days = 90;
		if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'retention_days'", -1, &st,
				       NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0)
				days = sqlite3_column_int(st, 0);
			sqlite3_finalize(st);
		}
	}
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "BEGIN IMMEDIATE;"
		 "DELETE FROM searches WHERE at < strftime('%%s','now') - %d * 86400;"
		 "DELETE FROM clicks WHERE at < strftime('%%s','now') - %d * 86400;"
		 "DELETE FROM corrections WHERE at < strftime('%%s','now') - %d * 86400;"
		 "COMMIT;", days, days, days);
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "atlas-query: cannot prune %s: %s\n", path, msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_close(db);
		return 1;
	}
	printf("atlas-query: %s: kept the last %d days, %d rows deleted\n", path, days, sqlite3_total_changes(db));
	sqlite3_close(db);
	return 0;
}
