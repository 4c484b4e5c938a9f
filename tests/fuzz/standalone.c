/* standalone.c - a main() for the fuzz targets built without libFuzzer: runs LLVMFuzzerTestOneInput
 * once on each file named on the command line, and on each file of each directory named (not
 * recursively; names starting with '.' are skipped, in name order), so that saved inputs (seed
 * corpora, crash reproducers) run as ordinary regression tests under any compiler.
 *
 *   fuzz_query [--allow-empty] FILE|DIR...
 *
 * Each input is handed over in a buffer of exactly its size (not NUL-terminated), as libFuzzer
 * does. Exit status: 0 when every input ran, 1 when a file or directory could not be read (or no
 * input was found, unless --allow-empty), 2 usage. A broken property aborts the process. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Targets may define it, as with libFuzzer; weak so that they need not. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, n = 0;
	unsigned char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			unsigned char *more = realloc(buf, cap * 2);
			if (!more) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = more;
			cap *= 2;
		}
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		return -1;
	}
	/* exactly n bytes, so that AddressSanitizer sees reads past the end */
	unsigned char *exact = malloc(n ? n : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	if (n)
		memcpy(exact, buf, n);
	free(buf);
	fprintf(stderr, "Running: %s (%zu bytes)\n", path, n);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *path, int *count)
{
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **more = realloc(names, cap * sizeof(*names));
			if (!more) {
				rc = -1;
				break;
			}
			names = more;
		}
		size_t len = strlen(path) + strlen(de->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n]) {
			rc = -1;
			break;
		}
		snprintf(names[n], len, "%s/%s", path, de->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (rc == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(names[i]))
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int allow_empty = 0, first = 1;
	if (argc > 1 && strcmp(argv[1], "--allow-empty") == 0) {
		allow_empty = 1;
		first = 2;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: %s [--allow-empty] FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	int count = 0, rc = 0;
	for (int i = first; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count))
				rc = 1;
		} else if (run_file(argv[i]))
			rc = 1;
		else
			count++;
	}
	if (count == 0 && !allow_empty) {
		fprintf(stderr, "no inputs found\n");
		rc = 1;
	}
	fprintf(stderr, "Executed %d inputs%s\n", count, rc ? " (with errors)" : "");
	return rc;
}
