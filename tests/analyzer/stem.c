/* stem.c - prints the Snowball English stem of every word read from stdin, one per line, as the
 * analyzer computes it (for comparison with an independent Snowball implementation). */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "analyzer.h"

int main(void)
{
	sqlite3 *db = NULL;
	atlas_analyzer *a = NULL;
	atlas_error err = { 0, "" };
	if (sqlite3_open(":memory:", &db) != SQLITE_OK || atlas_analyzer_new(&a, db, &err)) {
		fprintf(stderr, "stem: %s\n", err.msg);
		return 1;
	}
	char line[512], out[512];
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = '\0';
		atlas_stem(a, line, (int)strlen(line), out, sizeof(out));
		printf("%s\n", out);
	}
	atlas_analyzer_free(a);
	sqlite3_close(db);
	return 0;
}
