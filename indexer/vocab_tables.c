/* vocab_tables.c - the vocab and stems tables: sorted copies of the read-next thread's counts,
 * written in key order. */
#include "vocab_tables.h"

#include <stdlib.h>
#include <string.h>

#include "schema.h"

static int cmp_entry_key(const void *a, const void *b)
{
	return strcmp((*(const strmap_entry *const *)a)->key, (*(const strmap_entry *const *)b)->key);
}

int vocab_rows_sorted(vocab_row **rows, int *n, const strmap *m, const int *df, const int *cf,
		      const char *what, atlas_error *err)
{
	*rows = NULL;
	*n = 0;
	if (!m->arena)
		return atlas_error_set(err, ATLAS_EINVAL, "%s: the map's keys are not in an arena", what);
	const strmap_entry **sorted = malloc((m->count ? m->count : 1) * sizeof(*sorted));
	vocab_row *r = malloc((m->count ? m->count : 1) * sizeof(vocab_row));
	if (!sorted || !r) {
		free(sorted);
		free(r);
		return atlas_error_set(err, ATLAS_ENOMEM, "out of memory keeping %s", what);
	}
	size_t ns = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			sorted[ns++] = &m->slots[i];
	qsort(sorted, ns, sizeof(*sorted), cmp_entry_key);
	for (size_t i = 0; i < ns; i++)
		r[i] = (vocab_row){ sorted[i]->key, df[sorted[i]->value], cf ? cf[sorted[i]->value] : 0 };
	free(sorted);
	*rows = r;
	*n = (int)ns;
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
