/* check.h - the checks the C test programs share: each check is counted, a failed one is printed
 * with its file:line and what was expected, and check_done() prints the summary line and gives
 * the exit status, so that one run reports every problem. For programs of one source file (the
 * counters are that file's own). */
#ifndef ATLAS_TEST_CHECK_H
#define ATLAS_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Failed checks printed at the most; the rest are counted only. */
#ifndef CHECK_PRINT_MAX
#define CHECK_PRINT_MAX 50
#endif

static int check_count, check_failures;

/* Counts one check; when ok is 0, also counts a failure and prints "FAIL  file:line: " and the
 * printf-style message (the first CHECK_PRINT_MAX failures). Returns ok. */
static inline int check_at(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline int check_at(int ok, const char *file, int line, const char *fmt, ...)
{
	check_count++;
	if (ok)
		return 1;
	if (++check_failures <= CHECK_PRINT_MAX) {
		va_list ap;
		va_start(ap, fmt);
		printf("FAIL  %s:%d: ", file, line);
		vprintf(fmt, ap);
		putchar('\n');
		va_end(ap);
		fflush(stdout);
	}
	return 0;
}

/* CHECK(cond, fmt, ...): one check of cond, the message saying what was expected. Returns
 * whether it held. */
#define CHECK(cond, ...) check_at((cond) ? 1 : 0, __FILE__, __LINE__, __VA_ARGS__)

/* CHECK_INT(got, want, what): got == want as long longs, both printed when they differ. */
#define CHECK_INT(got, want, what)                                                                 \
	check_int_at((long long)(got), (long long)(want), (what), __FILE__, __LINE__)

/* CHECK_STR(got, want, what): two NUL-terminated strings equal (NULL equals only NULL). */
#define CHECK_STR(got, want, what) check_str_at((got), (want), (what), __FILE__, __LINE__)

/* The body of CHECK_INT. Returns whether got == want. */
static inline int check_int_at(long long got, long long want, const char *what, const char *file,
			       int line)
{
	return check_at(got == want, file, line, "%s: got %lld, want %lld", what, got, want);
}

/* The body of CHECK_STR. Returns whether the strings are equal. */
static inline int check_str_at(const char *got, const char *want, const char *what,
			       const char *file, int line)
{
	int same = got && want ? strcmp(got, want) == 0 : got == want;
	return check_at(same, file, line, "%s: got \"%s\", want \"%s\"", what, got ? got : "(null)",
			want ? want : "(null)");
}

/* The number of checks that failed so far. */
static inline int check_failed(void)
{
	return check_failures;
}

/* Prints "<what>: N checks, N failed" and returns the exit status: 0 when every check held, 1
 * otherwise (and when no check ran at all: a test that checks nothing cannot pass). */
static inline int check_done(const char *what)
{
	printf("%s: %d checks, %d failed\n", what, check_count, check_failures);
	return check_failures || !check_count ? 1 : 0;
}

#endif
