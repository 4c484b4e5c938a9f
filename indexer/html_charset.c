/* html_charset.c - an HTML file's charset found and its bytes decoded to UTF-8 (iconv). */
#include "html_internal.h"
#include "error.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <gumbo.h>
#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/**************************************************************************************************
** Charsets.
*/

/* The charset named by a <meta charset> or <meta http-equiv content="...; charset=..."> in the
 * first 1024 bytes (the HTML standard's prescan, simplified), written into cs; false when none. */
static bool meta_charset(const char *data, size_t n, char *cs)
{
	size_t lim = n < 1024 ? n : 1024;
	for (size_t i = 0; i + 8 < lim; i++) {
		if (strncasecmp(data + i, "charset", 7) != 0)
			continue;
		size_t j = i + 7;
		while (j < lim && isspace((unsigned char)data[j]))
			j++;
		if (j >= lim || data[j] != '=')
			continue;
		j++;
		while (j < lim && (isspace((unsigned char)data[j]) || data[j] == '"' || data[j] == '\''))
			j++;
		size_t k = 0;
		while (j < lim && k < 63 && (isalnum((unsigned char)data[j]) || strchr("-_:.", data[j])))
			cs[k++] = data[j++];
		cs[k] = '\0';
		if (k)
			return true;
	}
	return false;
}

int html_decode(const char *data, size_t n, char **out, size_t *outn, long *replaced, char *charset)
{
	*out = NULL;
	*outn = 0;
	*replaced = 0;
	const unsigned char *u = (const unsigned char *)data;
	size_t skip = 0;
	if (n >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) {
		strcpy(charset, "UTF-8");
		skip = 3;
	} else if (n >= 2 && u[0] == 0xff && u[1] == 0xfe) {
		strcpy(charset, "UTF-16LE");
		skip = 2;
	} else if (n >= 2 && u[0] == 0xfe && u[1] == 0xff) {
		strcpy(charset, "UTF-16BE");
		skip = 2;
	} else if (!meta_charset(data, n, charset))
		strcpy(charset, "UTF-8");
	data += skip;
	n -= skip;
	static const char rep[] = "\xef\xbf\xbd";
	strbuf sb = STRBUF_INIT;
	bool utf8 = strcasecmp(charset, "utf-8") == 0 || strcasecmp(charset, "utf8") == 0;
	/* a page saying it is UTF-16 without a byte order mark was read as ASCII to find that: it
	 * is not UTF-16 (the standard reads it as UTF-8) */
	if (!skip && strncasecmp(charset, "utf-16", 6) == 0) {
		strcpy(charset, "UTF-8");
		utf8 = true;
	}
	if (utf8) {
		strcpy(charset, "UTF-8");
		if (strbuf_reserve(&sb, n + 1))
			return ATLAS_ENOMEM;
		size_t i = 0;
		while (i < n) {
			long bad = atlas_utf8_invalid_at(data + i, n - i);
			size_t good = bad < 0 ? n - i : (size_t)bad;
			strbuf_append(&sb, data + i, good);
			i += good;
			if (bad < 0)
				break;
			strbuf_append(&sb, rep, 3);
			(*replaced)++;
			i++;
		}
	} else {
		iconv_t cd = iconv_open("UTF-8", charset);
		if (cd == (iconv_t)-1)
			return ATLAS_EINVAL;
		if (strbuf_reserve(&sb, n * 2 + 16)) {
			iconv_close(cd);
			return ATLAS_ENOMEM;
		}
		char *in = (char *)data;
		size_t inleft = n;
		while (inleft > 0) {
			if (strbuf_reserve(&sb, inleft * 2 + 16))
				break;
			char *o = sb.buf + sb.len;
			size_t oleft = sb.cap - sb.len - 1;
			size_t r = iconv(cd, &in, &inleft, &o, &oleft);
			sb.len = (size_t)(o - sb.buf);
			sb.buf[sb.len] = '\0';
			if (r != (size_t)-1)
				break;
			if (errno == E2BIG)
				continue;
			/* an invalid or cut-short sequence: one byte replaced, then on */
			strbuf_append(&sb, rep, 3);
			(*replaced)++;
			in++;
			inleft--;
		}
		iconv_close(cd);
	}
	if (sb.oom) {
		strbuf_free(&sb);
		return ATLAS_ENOMEM;
	}
	if (sb.buf)
		sb.buf[sb.len] = '\0'; /* an empty page: reserved, never appended to */
	*outn = sb.len;
	*out = strbuf_detach(&sb);
	if (!*out) {
		*out = strdup("");
		if (!*out)
			return ATLAS_ENOMEM;
	}
	return 0;
}

