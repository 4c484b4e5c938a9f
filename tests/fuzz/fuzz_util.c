/* fuzz_util.c - reporting and checking helpers shared by the fuzz targets. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static void print_input(const uint8_t *data, size_t size)
{
	fputs("fuzz: input (C escapes): \"", stderr);
	for (size_t i = 0; i < size && i < 4096; i++) {
		unsigned c = data[i];
		if (c == '"' || c == '\\')
			fprintf(stderr, "\\%c", c);
		else if (c >= 0x20 && c < 0x7F)
			fputc((int)c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "\"%s (%zu bytes)\n", size > 4096 ? "..." : "", size);
}

void fuzz_fail(const uint8_t *data, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("fuzz: property broken: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_input(data, size);
	abort();
}

static struct {
	const char *kind;
	unsigned long count;
} soft[16];
static int nsoft;

static void soft_summary(void)
{
	for (int i = 0; i < nsoft; i++)
		fprintf(stderr, "fuzz: soft finding '%s' seen on %lu inputs\n", soft[i].kind, soft[i].count);
}

void fuzz_soft(const char *kind, const uint8_t *data, size_t size, const char *fmt, ...)
{
	int i;
	for (i = 0; i < nsoft; i++)
		if (strcmp(soft[i].kind, kind) == 0)
			break;
	if (i < nsoft) {
		soft[i].count++;
		return;
	}
	if (nsoft == 0)
		atexit(soft_summary);
	if (nsoft < (int)(sizeof(soft) / sizeof(soft[0]))) {
		soft[nsoft].kind = kind;
		soft[nsoft].count = 1;
		nsoft++;
	}
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fuzz: soft finding '%s' (reported once, run continues): ", kind);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_input(data, size);
}

const char *fuzz_html_problem(const char *html)
{
	int open = 0;
	for (const char *p = html; *p;) {
		if (strncmp(p, "<mark>", 6) == 0) {
			if (open)
				return "nested <mark>";
			open = 1;
			p += 6;
		} else if (strncmp(p, "</mark>", 7) == 0) {
			if (!open)
				return "</mark> without <mark>";
			open = 0;
			p += 7;
		} else if (*p == '<' || *p == '>' || *p == '"') {
			return "unescaped <, > or \"";
		} else if (*p == '\1' || *p == '\2') {
			return "highlight marker byte left in the text";
		} else
			p++;
	}
	return open ? "<mark> never closed" : NULL;
}

long fuzz_utf8_invalid_at(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i], cp, min;
		size_t len;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0)
			len = 2, min = 0x80;
		else if ((c & 0xF0) == 0xE0)
			len = 3, min = 0x800;
		else if ((c & 0xF8) == 0xF0)
			len = 4, min = 0x10000;
		else
			return (long)i;
		if (i + len > n)
			return (long)i;
		cp = c & (0xFFu >> (len + 1));
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return (long)i;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return (long)i;
		i += len;
	}
	return -1;
}
