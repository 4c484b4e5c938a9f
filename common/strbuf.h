/* strbuf.h - a growable, always NUL-terminated byte string. */
#ifndef ATLAS_STRBUF_H
#define ATLAS_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
	char *buf;  /* NUL-terminated once anything was appended; NULL when empty and never grown */
	size_t len;
	size_t cap;
	bool oom;   /* set when an allocation failed; later appends are ignored */
} strbuf;

#define STRBUF_INIT { NULL, 0, 0, false }

/* Makes room for extra more bytes, so that appending them allocates nothing. Returns 0, or
 * ATLAS_ENOMEM (and sets sb->oom). */
int strbuf_reserve(strbuf *sb, size_t extra);
/* Appends n bytes of s. Returns 0, or ATLAS_ENOMEM (and sets sb->oom) on allocation failure. */
int strbuf_append(strbuf *sb, const char *s, size_t n);
/* Appends a NUL-terminated string. Same returns as strbuf_append. */
int strbuf_puts(strbuf *sb, const char *s);
/* Appends one byte. */
int strbuf_putc(strbuf *sb, char c);
/* Appends printf-style formatted text. */
int strbuf_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) as HTML text: &, <, >, ", ' and \\ replaced by entities, control bytes (line
 * breaks, tabs) by spaces. What it writes needs no escaping inside a JSON string either. */
int strbuf_append_html(strbuf *sb, const char *s, size_t n);
/* Returns the contents ("" when empty); the buffer stays owned by sb. */
const char *strbuf_str(const strbuf *sb);
/* Transfers ownership of the buffer to the caller (free() it) and resets sb; never NULL unless oom. */
char *strbuf_detach(strbuf *sb);
/* Gives back the capacity sb holds beyond its contents (kept as it is if the reallocation fails):
 * for a buffer that is complete and will be kept a long time. */
void strbuf_shrink(strbuf *sb);
/* Empties sb without releasing memory. */
void strbuf_reset(strbuf *sb);
/* Releases the buffer. Accepts NULL. */
void strbuf_free(strbuf *sb);

#endif
