/* strbuf.c - a growable, always NUL-terminated byte string. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* The index in s[from..n) of the first byte html_entity changes, or n. Sixteen bytes a step where
 * SSE2 is there (every x86-64), a table look-up a byte elsewhere and for the tail: snippets are
 * mostly prose between the changed bytes, and this scan was most of their rendering. */
static size_t next_special(const char *s, size_t from, size_t n)
{
	/* bytes html_entity changes */
#define C4(c) [c] = 1, [c + 1] = 1, [c + 2] = 1, [c + 3] = 1
	static const unsigned char special[256] = {
	    C4(0),  C4(4),     C4(8),	  C4(12),    C4(16),	C4(20),	    C4(24),
	    C4(28), ['&'] = 1, ['<'] = 1, ['>'] = 1, ['"'] = 1, ['\''] = 1, ['\\'] = 1,
	};
#undef C4
	size_t i = from;
#ifdef __SSE2__
	const __m128i amp = _mm_set1_epi8('&'), lt = _mm_set1_epi8('<'), gt = _mm_set1_epi8('>');
	const __m128i quot = _mm_set1_epi8('"'), apos = _mm_set1_epi8('\''),
		      bsl = _mm_set1_epi8('\\');
	const __m128i ctl = _mm_set1_epi8(0x1f);
	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* v <= 0x1f, unsigned: max(v, 0x1f) is 0x1f */
		__m128i m = _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl);
		m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, amp), _mm_cmpeq_epi8(v, lt)));
		m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, gt), _mm_cmpeq_epi8(v, quot)));
		m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v, apos), _mm_cmpeq_epi8(v, bsl)));
		int bits = _mm_movemask_epi8(m);
		if (bits)
			return i + (size_t)__builtin_ctz((unsigned)bits);
	}
#endif
	for (; i < n; i++)
		if (special[(unsigned char)s[i]])
			return i;
	return n;
}

int strbuf_append_html(strbuf *sb, const char *s, size_t n)
{
	if (strbuf_grow(sb, n))
		return ATLAS_ENOMEM;
	size_t run = 0;
	for (size_t i = next_special(s, 0, n); i < n; i = next_special(s, run, n)) {
		if (strbuf_append(sb, s + run, i - run) ||
		    strbuf_puts(sb, html_entity((unsigned char)s[i])))
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
