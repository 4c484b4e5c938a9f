/* strbuf.c - a growable, always NUL-terminated byte string. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Reallocates sb to hold extra more bytes and the NUL. Returns 0 or ATLAS_ENOMEM (sets oom). */
static int grow_slow(strbuf *sb, size_t extra)
{
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	char *nb = realloc(sb->buf, cap);
	if (!nb) {
		sb->oom = true;
		return ATLAS_ENOMEM;
	}
	sb->buf = nb;
	sb->cap = cap;
	return 0;
}

/* Makes room for extra more bytes and the NUL: the check inline, the reallocation apart. */
static inline int strbuf_grow(strbuf *sb, size_t extra)
{
	if (sb->oom)
		return ATLAS_ENOMEM;
	if (sb->len + extra + 1 <= sb->cap)
		return 0;
	return grow_slow(sb, extra);
}

int strbuf_reserve(strbuf *sb, size_t extra)
{
	return strbuf_grow(sb, extra);
}

int strbuf_append(strbuf *sb, const char *s, size_t n)
{
	if (strbuf_grow(sb, n))
		return ATLAS_ENOMEM;
	if (n)
		memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_puts(strbuf *sb, const char *s)
{
	return strbuf_append(sb, s, strlen(s));
}

int strbuf_putc(strbuf *sb, char c)
{
	return strbuf_append(sb, &c, 1);
}

int strbuf_printf(strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || strbuf_grow(sb, (size_t)n))
		return ATLAS_ENOMEM;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

/* What strbuf_append_html writes for a byte, or NULL for the byte itself. Control bytes (line
 * breaks and tabs among them) become spaces, as HTML shows them, and a backslash its entity: the
 * output then holds nothing JSON would escape, and goes into a response as it is. */
static const char *html_entity(unsigned char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	case '\\': return "&#92;";
	default: return c < 0x20 ? " " : NULL;
	}
}

int strbuf_append_html(strbuf *sb, const char *s, size_t n)
{
	/* bytes html_entity changes, for a scan that stops only at them */
#define C4(c) [c] = 1, [c + 1] = 1, [c + 2] = 1, [c + 3] = 1
	static const unsigned char special[256] = {
		C4(0), C4(4), C4(8), C4(12), C4(16), C4(20), C4(24), C4(28),
		['&'] = 1, ['<'] = 1, ['>'] = 1, ['"'] = 1, ['\''] = 1, ['\\'] = 1,
	};
#undef C4
	if (strbuf_grow(sb, n))
		return ATLAS_ENOMEM;
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!special[c])
			continue;
		if (strbuf_append(sb, s + run, i - run) || strbuf_puts(sb, html_entity(c)))
			return ATLAS_ENOMEM;
		run = i + 1;
	}
	return strbuf_append(sb, s + run, n - run);
}

const char *strbuf_str(const strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

char *strbuf_detach(strbuf *sb)
{
	char *b = sb->buf;
	if (!b && !sb->oom)
		b = calloc(1, 1);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
	return b;
}

void strbuf_shrink(strbuf *sb)
{
	if (!sb->buf || sb->len + 1 >= sb->cap)
		return;
	char *nb = realloc(sb->buf, sb->len + 1);
	if (nb) {
		sb->buf = nb;
		sb->cap = sb->len + 1;
	}
}

void strbuf_reset(strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void strbuf_free(strbuf *sb)
{
	if (!sb)
		return;
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = false;
}
