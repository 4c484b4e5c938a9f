/* test_strbuf.c - common/strbuf.h: appends of every kind keep the buffer NUL-terminated and grow
 * it as needed; the HTML escaper writes what a byte-by-byte rule gives, at every offset of its
 * sixteen-byte steps; detach, shrink, reset and free leave what they say; a buffer out of memory
 * refuses further appends. usage: test_strbuf */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "strbuf.h"

/* The HTML escaping of s[0..n), one byte at a time, into out (reset first): the rule of
 * strbuf.h written out plainly, for comparison. */
static void html_by_byte(strbuf *out, const char *s, size_t n)
{
	strbuf_reset(out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = c == '&'    ? "&amp;"
				: c == '<'  ? "&lt;"
				: c == '>'  ? "&gt;"
				: c == '"'  ? "&quot;"
				: c == '\'' ? "&#39;"
				: c == '\\' ? "&#92;"
				: c < 0x20  ? " "
					    : NULL;
		if (e)
			strbuf_puts(out, e);
		else
			strbuf_putc(out, (char)c);
	}
}

int main(void)
{
	strbuf sb = STRBUF_INIT;
	CHECK_STR(strbuf_str(&sb), "", "an empty buffer reads as \"\"");
	CHECK(sb.buf == NULL && sb.len == 0, "an empty buffer holds nothing");

	strbuf_append(&sb, "abc", 3);
	strbuf_puts(&sb, "def");
	strbuf_putc(&sb, '-');
	strbuf_printf(&sb, "%d:%s:%.2f", 42, "x", 1.5);
	strbuf_append(&sb, "ignored", 0);
	CHECK_STR(strbuf_str(&sb), "abcdef-42:x:1.50", "appends of each kind");
	CHECK_INT(sb.len, 16, "length after the appends");
	CHECK(sb.buf[sb.len] == '\0' && sb.cap > sb.len, "NUL-terminated within its capacity");

	/* growth, one byte at a time and by large printf */
	strbuf_reset(&sb);
	CHECK(sb.len == 0 && sb.buf[0] == '\0', "reset empties the text");
	for (int i = 0; i < 100000; i++)
		strbuf_putc(&sb, (char)('a' + i % 26));
	int wrong = 0;
	for (int i = 0; i < 100000; i++)
		wrong += sb.buf[i] != (char)('a' + i % 26);
	CHECK(sb.len == 100000 && wrong == 0 && sb.buf[sb.len] == '\0',
	      "100,000 bytes appended one by one");
	size_t cap = sb.cap;
	strbuf_reset(&sb);
	CHECK(sb.cap == cap, "reset keeps the capacity");
	strbuf_printf(&sb, "[%9000d]", 7);
	CHECK(sb.len == 9002 && sb.buf[0] == '[' && sb.buf[9000] == '7' && sb.buf[9001] == ']',
	      "a printf of 9,002 bytes");

	/* reserve: room for that much more without growing */
	strbuf r = STRBUF_INIT;
	CHECK(strbuf_reserve(&r, 1000) == 0 && r.cap >= 1001, "reserve 1000: capacity %zu", r.cap);
	char *before = r.buf;
	for (int i = 0; i < 1000; i++)
		strbuf_putc(&r, 'x');
	CHECK(r.buf == before && r.len == 1000, "appending what was reserved does not reallocate");

	/* shrink, detach */
	strbuf_shrink(&r);
	CHECK(r.cap == r.len + 1 && r.len == 1000 && r.buf[1000] == '\0', "shrink: capacity %zu",
	      r.cap);
	char *d = strbuf_detach(&r);
	CHECK(d && strlen(d) == 1000 && r.buf == NULL && r.len == 0 && r.cap == 0,
	      "detach hands over the text and empties the buffer");
	free(d);
	d = strbuf_detach(&r);
	CHECK(d && d[0] == '\0', "detaching an empty buffer gives \"\", not NULL");
	free(d);

	/* HTML: each special byte, then every special byte at every offset of long runs of prose */
	strbuf h = STRBUF_INIT, want = STRBUF_INIT;
	strbuf_append_html(&h, "a&b<c>d\"e'f\\g\n\th\x01", 17);
	CHECK_STR(strbuf_str(&h), "a&amp;b&lt;c&gt;d&quot;e&#39;f&#92;g  h ", "each special byte");
	static const char specials[] = "&<>\"'\\\n\t\x1f\x7f\x80~";
	char text[70];
	int mismatches = 0;
	for (size_t at = 0; at < 64; at++)
		for (size_t k = 0; k < sizeof(specials) - 1; k++) {
			memset(text, 'p', sizeof(text));
			text[at] = specials[k];
			text[(at * 7 + 3) % sizeof(text)] = '<';
			strbuf_reset(&h);
			strbuf_append_html(&h, text, sizeof(text));
			html_by_byte(&want, text, sizeof(text));
			mismatches += h.len != want.len || memcmp(h.buf, want.buf, h.len) != 0;
		}
	CHECK_INT(mismatches, 0, "escaped texts that differ from the byte-by-byte rule");
	/* and random bytes */
	unsigned seed = 99;
	char noise[300];
	mismatches = 0;
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(noise); i++) {
			seed = seed * 1103515245u + 12345u;
			noise[i] = (char)(seed >> 16);
		}
		size_t n = (size_t)round % sizeof(noise);
		strbuf_reset(&h);
		strbuf_puts(&h, "pre:");
		strbuf_append_html(&h, noise, n);
		html_by_byte(&want, noise, n);
		mismatches += h.len != want.len + 4 ||
			      memcmp(h.buf + 4, want.buf ? want.buf : "", want.len) != 0;
	}
	CHECK_INT(mismatches, 0, "random texts escaped otherwise than byte by byte");

	/* out of memory: refused, nothing appended */
	strbuf o = STRBUF_INIT;
	strbuf_puts(&o, "kept");
	o.oom = true;
	CHECK(strbuf_puts(&o, "more") == ATLAS_ENOMEM && strbuf_putc(&o, 'x') == ATLAS_ENOMEM &&
		  strbuf_printf(&o, "%d", 1) == ATLAS_ENOMEM &&
		  strbuf_append_html(&o, "<", 1) == ATLAS_ENOMEM,
	      "a buffer out of memory refuses appends");
	CHECK_STR(strbuf_str(&o), "kept", "and keeps what it held");
	char *k = strbuf_detach(&o);
	CHECK(k && strcmp(k, "kept") == 0 && !o.oom && o.buf == NULL,
	      "detach hands over what it held");
	free(k);

	strbuf_free(&sb);
	strbuf_free(&r);
	strbuf_free(&h);
	strbuf_free(&want);
	strbuf_free(NULL);
	CHECK(sb.buf == NULL && sb.len == 0 && sb.cap == 0, "free leaves an empty buffer");
	return check_done("test_strbuf");
}
