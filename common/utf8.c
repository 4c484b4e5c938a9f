/* utf8.c - UTF-8 validation and cleaning. */
#include "utf8.h"

#include <stdint.h>
#include <string.h>

size_t atlas_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp, min;
	size_t len;
	if (c < 0x80)
		return 1;
	if ((c & 0xE0) == 0xC0) {
		len = 2;
		min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		len = 3;
		min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		len = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	cp = c & (0xFFu >> (len + 1));
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return len;
}

long atlas_utf8_invalid_at(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		/* ASCII, most of any text here, eight bytes a step */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, u + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		size_t len = atlas_utf8_len(u + i, n - i);
		if (!len)
			return (long)i;
		i += len;
	}
	return -1;
}

void atlas_utf8_clean(char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char *u = (unsigned char *)s + i;
		size_t len = atlas_utf8_len(u, n - i);
		if (len == 0 || (len == 1 && (u[0] < 0x20 || u[0] == 0x7F))) {
			s[i++] = ' ';
			continue;
		}
		i += len;
	}
}

int atlas_text_words(const char *s)
{
	int n = 0, in = 0;
	for (; *s; s++) {
		int w = (unsigned char)*s > ' ';
		if (w && !in)
			n++;
		in = w;
	}
	return n;
}
