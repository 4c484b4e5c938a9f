/* fuzz.h - what the fuzz targets share: the libFuzzer entry point (so that the targets also build as
 * plain programs with standalone.c) and the engine over the small fuzzing index. */
#ifndef ATLAS_FUZZ_H
#define ATLAS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct atlas_engine atlas_engine; /* query/engine.h */

/* Called by libFuzzer (or by standalone.c) once per input. Returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The engine over the fuzzing index, holding its postings as atlas-serve does, opened on first use and kept for the life of the process
 * (reachable from a static, so LeakSanitizer does not count it; closed at exit). The index is
 * $ATLAS_FUZZ_INDEX, or the one meson built (ATLAS_FUZZ_DEFAULT_INDEX). Aborts when it cannot
 * be opened: without it the targets would test nothing. */
atlas_engine *fuzz_engine(void);

/* The same index opened again without its postings held: searched through FTS5, as atlas-query
 * does. Same life and failure as fuzz_engine. */
atlas_engine *fuzz_engine_fts5(void);

/* Reports a broken property with the input that broke it and aborts. */
void fuzz_fail(const uint8_t *data, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/* Reports a broken property that does not stop the run (a finding that is not a crash, such as
 * a response body that is not valid UTF-8): printed with the input the first time each kind is
 * seen, counted, and summarized at exit. */
void fuzz_soft(const char *kind, const uint8_t *data, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Checks that html (a snippet, heading or title from the engine) is escaped: no '<', '>' or '"'
 * outside the <mark> and </mark> highlight tags, tags balanced. Returns NULL or what is wrong. */
const char *fuzz_html_problem(const char *html);

/* Checks that s is valid UTF-8; returns the offset of the first bad byte, or -1. */
long fuzz_utf8_invalid_at(const char *s, size_t n);

#endif
