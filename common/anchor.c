/* anchor.c - a heading's anchor, as GitHub makes it: shared by the indexer, which names sections
 * by it, and the engine, which finds it again for a section whose stored anchor is left empty. */
#include "anchor.h"

/* Anchors: ASCII letters and digits lowercased, spaces to '-', '-' and '_' kept, other ASCII
 * dropped; non-ASCII letters kept, non-ASCII punctuation and symbols dropped, as GitHub does. */
void anchor_of(strbuf *out, const char *h)
{
	const unsigned char *s = (const unsigned char *)h;
	while (*s) {
		unsigned c = *s;
		if (c < 0x80) {
			if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
				strbuf_putc(out, (char)c);
			else if (c >= 'A' && c <= 'Z')
				strbuf_putc(out, (char)(c + 32));
			else if (c == ' ')
				strbuf_putc(out, '-');
			s++;
			continue;
		}
		size_t len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
		unsigned cp = c & (0xFF >> (len + 1));
		size_t k;
		for (k = 1; k < len && s[k]; k++)
			cp = (cp << 6) | (s[k] & 0x3F);
		int symbol = cp < 0xC0 || (cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) ||
			     cp >= 0x1F000 || cp == 0xD7 || cp == 0xF7;
		if (!symbol)
			strbuf_append(out, (const char *)s, k);
		s += k;
	}
}
