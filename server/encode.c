/* encode.c - Accept-Encoding negotiation and gzip (zlib) / br (libbrotli) compression. */
#include "encode.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <brotli/encode.h>
#include <zlib.h>

#include "error.h"

#define GZIP_LEVEL 6
#define BROTLI_QUALITY 5 /* within a few percent of the best size at a small part of its time */

/* Reads the quality of one Accept-Encoding element's parameters p[0..n) (";q=0.5"). Returns it
 * in thousandths, 1000 when absent. */
static int quality(const char *p, size_t n)
{
	const char *end = p + n;
	while (p < end) {
		while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			p += 2;
			int q = 0, scale = 1000;
			if (p < end && *p == '1')
				return 1000;
			if (p < end && *p == '0')
				p++;
			if (p < end && *p == '.')
				for (p++; p < end && isdigit((unsigned char)*p) && scale > 1; p++)
					scale /= 10, q += (*p - '0') * scale;
			return q;
		}
		while (p < end && *p != ';')
			p++;
	}
	return 1000;
}

/* See encode.h. Never fails. */
int encode_choose(const char *h)
{
	if (!h)
		return ENC_IDENTITY;
	int qbr = -1, qgzip = -1, qany = -1;
	for (const char *p = h; *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t n = strcspn(p, ",");
		size_t tok = strcspn(p, ";, \t");
		if (tok > n)
			tok = n;
		int q = quality(p + tok, n - tok);
		if (tok == 2 && strncasecmp(p, "br", 2) == 0)
			qbr = q;
		else if ((tok == 4 && strncasecmp(p, "gzip", 4) == 0) ||
			 (tok == 6 && strncasecmp(p, "x-gzip", 6) == 0))
			qgzip = q;
		else if (tok == 1 && *p == '*')
			qany = q;
		p += n;
	}
	if (qbr < 0)
		qbr = qany;
	if (qgzip < 0)
		qgzip = qany;
	if (qbr > 0 && qbr >= qgzip)
		return ENC_BR;
	if (qgzip > 0)
		return ENC_GZIP;
	return ENC_IDENTITY;
}

/* See encode.h. */
const char *encode_name(int enc)
{
	return enc == ENC_GZIP ? "gzip" : enc == ENC_BR ? "br" : NULL;
}

/* gzip of in[0..n) into *out. Returns 0 or ATLAS_ENOMEM. */
static int gzip_body(const char *in, size_t n, char **out, size_t *outlen)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return ATLAS_ENOMEM;
	uLong cap = deflateBound(&z, (uLong)n);
	char *buf = malloc(cap ? cap : 1);
	if (!buf) {
		deflateEnd(&z);
		return ATLAS_ENOMEM;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	size_t len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return ATLAS_ENOMEM;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* br of in[0..n) into *out. Returns 0 or ATLAS_ENOMEM. */
static int br_body(const char *in, size_t n, char **out, size_t *outlen)
{
	size_t cap = BrotliEncoderMaxCompressedSize(n);
	if (cap == 0)
		cap = n + 1024;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return ATLAS_ENOMEM;
	size_t len = cap;
	if (!BrotliEncoderCompress(BROTLI_QUALITY, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, n,
				   (const uint8_t *)in, &len, buf)) {
		free(buf);
		return ATLAS_ENOMEM;
	}
	*out = (char *)buf;
	*outlen = len;
	return 0;
}

/* See encode.h. Returns 0, ATLAS_ENOMEM or ATLAS_EINVAL. */
int encode_body(int enc, const char *in, size_t n, char **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	if (enc == ENC_GZIP)
		return gzip_body(in, n, out, outlen);
	if (enc == ENC_BR)
		return br_body(in, n, out, outlen);
	return ATLAS_EINVAL;
}
