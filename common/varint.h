/* varint.h - unsigned varints of at most 32 bits: 7 bits a byte, low bits first, the high bit set on
 * every byte but the last. Used by the packed read-next rows (next_rows.c). */
#ifndef ATLAS_VARINT_H
#define ATLAS_VARINT_H

#include "error.h"
#include "strbuf.h"

/* Appends v to out. Returns 0 or ATLAS_ENOMEM. */
static inline int atlas_varint_put(strbuf *out, unsigned v)
{
	char b[5];
	int n = 0;
	do {
		b[n] = (char)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] = (char)(b[n] | 0x80);
		n++;
	} while (v);
	return strbuf_append(out, b, (size_t)n);
}

/* Reads the varint at *p (before end) into *v and advances *p. Returns 0, or ATLAS_EINVAL when it runs
 * past end or past 32 bits (*p then left anywhere before end). */
static inline int atlas_varint_get(const unsigned char **p, const unsigned char *end, unsigned *v)
{
	unsigned r = 0;
	for (int shift = 0; shift < 35; shift += 7) {
		if (*p >= end)
			return ATLAS_EINVAL;
		unsigned char b = *(*p)++;
		if (shift == 28 && b > 0x0f)
			return ATLAS_EINVAL;
		r |= (unsigned)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return ATLAS_EINVAL;
}

#endif
