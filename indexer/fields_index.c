/* fields_index.c - the fields and titles full-text tables: the pages' important fields, and their
 * titles, indexed alone. */
#include "fields_index.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

/* Sets err from db's last error, with what was being done. Returns the code set. */
static int fields_failed(sqlite3 *db, const char *file, const char *what, atlas_error *err)
{
	return atlas_sql_error(err, db, file, what, NULL);
}

int fields_index_write(sqlite3 *db, const char *file, const corpus *c, const int *id_of,
		       long long hash_bytes, bool merge, atlas_error *err)
{
	int rc = 0;
	sqlite3_stmt *ins = NULL, *ins_title = NULL;
	strbuf kw = STRBUF_INIT, heads = STRBUF_INIT;
	int *order = malloc((size_t)(c->npages ? c->npages : 1) * sizeof(int));
	if (!order)
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
	for (int pi = 0; pi < c->npages; pi++)
		order[id_of[pi] - 1] = pi;
	/* no merging while rows come in: one large hash of pending terms, written out when full */
	char sql[320];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO fields(fields, rank) VALUES('automerge', 0);"
		 " INSERT INTO fields(fields, rank) VALUES('hashsize', %lld);"
		 " INSERT INTO titles(titles, rank) VALUES('automerge', 0);"
		 " INSERT INTO titles(titles, rank) VALUES('hashsize', %lld)",
		 hash_bytes, hash_bytes);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		rc = fields_failed(db, file, "configure the fields and titles tables", err);
		goto out_free;
	}
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO fields(rowid, title, keywords, headings, description)"
			       " VALUES(?,?,?,?,?)",
			       -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO titles(rowid, title) VALUES(?,?)", -1, &ins_title,
			       NULL) != SQLITE_OK) {
		rc = fields_failed(db, file, "prepare", err);
		goto out_finalize;
	}
	/* the texts as the fts table's columns hold them: keywords joined by "; ", and each
	 * heading but the lead's followed by a newline */
	for (int id = 1; !rc && id <= c->npages; id++) {
		const page *p = &c->pages[order[id - 1]];
		strbuf_reset(&kw);
		strbuf_reset(&heads);
		for (int k = 0; k < p->nkeywords; k++) {
			if (k)
				strbuf_puts(&kw, "; ");
			strbuf_puts(&kw, p->keywords[k]);
		}
		for (int s = 1; s < p->nsecs; s++) {
			strbuf_puts(&heads, p->secs[s].heading);
			strbuf_putc(&heads, '\n');
		}
		if (kw.oom || heads.oom) {
			rc = atlas_error_set(err, ATLAS_ENOMEM, "out of memory");
			break;
		}
		sqlite3_bind_int(ins, 1, id);
		sqlite3_bind_text(ins, 2, p->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, strbuf_str(&kw), (int)kw.len, SQLITE_STATIC);
		sqlite3_bind_text(ins, 4, strbuf_str(&heads), (int)heads.len, SQLITE_STATIC);
		sqlite3_bind_text(ins, 5, p->description, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins_title, 1, id);
		sqlite3_bind_text(ins_title, 2, p->title, -1, SQLITE_STATIC);
		bool fields_ok = sqlite3_step(ins) == SQLITE_DONE;
		if (!fields_ok || sqlite3_step(ins_title) != SQLITE_DONE) {
			char what[1200];
			snprintf(what, sizeof(what), "index the %s of %s", fields_ok ? "title" : "fields",
				 p->path);
			rc = fields_failed(db, file, what, err);
		}
		sqlite3_reset(ins);
		sqlite3_reset(ins_title);
	}
	if (!rc && merge &&
	    sqlite3_exec(db,
			 "INSERT INTO fields(fields) VALUES('optimize');"
			 " INSERT INTO titles(titles) VALUES('optimize')",
			 NULL, NULL, NULL))
		rc = fields_failed(db, file, "merge the fields and titles tables' segments", err);
out_finalize:
	sqlite3_finalize(ins);
	sqlite3_finalize(ins_title);
out_free:
	strbuf_free(&kw);
	strbuf_free(&heads);
	free(order);
	return rc;
}
