/* vocab_tables.c - the vocab and stems tables: the read-next thread's counts, sorted in place,
 * written in key order. */
#include "vocab_tables.h"

#include <stdlib.h>
#include <string.h>

#include "schema.h"

static int cmp_entry_key(const void *a, const void *b)
{
	return strcmp(((const strmap_entry *)a)->key, ((const strmap_entry *)b)->key);
}

_Static_assert(sizeof(vocab_row) <= sizeof(strmap_entry), "a row fits in the slot it is made in");

int vocab_rows_take(vocab_row **rows, int *n, strmap *m, const int *df, const int *cf,
		    const char *what, atlas_error *err)
{
	*rows = NULL;
	*n = 0;
	if (!m->arena)
		return atlas_error_set(err, ATLAS_EINVAL, "%s: the map's keys are not in an arena", what);
	strmap_entry *e = m->slots;
	size_t ns = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (e[i].key)
			e[ns++] = e[i];
	qsort(e, ns, sizeof(*e), cmp_entry_key);
	/* row i over slot i: each slot read before its row is written, none read after */
	for (size_t i = 0; i < ns; i++) {
		vocab_row r = { e[i].key, df[e[i].value], cf ? cf[e[i].value] : 0 };
		memcpy((char *)e + i * sizeof(vocab_row), &r, sizeof(r));
	}
	void *cut = realloc(e, (ns ? ns : 1) * sizeof(vocab_row));
	*rows = cut ? cut : (void *)e; /* not cut: the rows stay in the slots as they were */
	*n = (int)ns;
	m->slots = NULL;
	m->cap = m->count = 0;
	return 0;
}

int vocab_rows_write(sqlite3 *db, const char *path, const vocab_row *vocab, int nvocab,
		     const vocab_row *stems, int nstems, atlas_error *err)
{
	sqlite3_stmt *voc = NULL, *stem = NULL;
	int rc = 0;
	if (sqlite3_prepare_v2(db, "INSERT INTO vocab VALUES(?,?,?)", -1, &voc, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO stems VALUES(?,?)", -1, &stem, NULL) != SQLITE_OK) {
		rc = atlas_sql_error(err, db, path, "prepare", NULL);
		goto out;
	}
	for (int i = 0; !rc && i < nvocab; i++) {
		sqlite3_bind_text(voc, 1, vocab[i].term, -1, SQLITE_STATIC);
		sqlite3_bind_int(voc, 2, vocab[i].df);
		sqlite3_bind_int(voc, 3, vocab[i].cf);
		if (sqlite3_step(voc) != SQLITE_DONE)
			rc = atlas_sql_error(err, db, path, "insert vocabulary", NULL);
		sqlite3_reset(voc);
	}
	for (int i = 0; !rc && i < nstems; i++) {
		sqlite3_bind_text(stem, 1, stems[i].term, -1, SQLITE_STATIC);
		sqlite3_bind_int(stem, 2, stems[i].df);
		if (sqlite3_step(stem) != SQLITE_DONE)
			rc = atlas_sql_error(err, db, path, "insert stem", NULL);
		sqlite3_reset(stem);
	}
out:
	sqlite3_finalize(voc);
	sqlite3_finalize(stem);
	return rc;
}

void vocab_rows_free(vocab_row *rows)
{
	free(rows);
}
