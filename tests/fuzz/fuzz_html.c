/* fuzz_html.c - arbitrary bytes as a built site's page: decoded by its charset (html_decode) and
 * read by html_read, everything freed (a leak is a finding).
 *
 * Properties: html_decode returns 0, ATLAS_EINVAL (unknown charset) or ATLAS_ENOMEM (out of
 * memory); on 0 the text is valid UTF-8 and NUL-terminated. html_read returns 0 (or ATLAS_ENOMEM
 * out of memory); then the page has its lead section (level 0, no heading) and every other
 * section a heading and level 2 to 4, section bodies start in order inside the text, each ends
 * with a NUL, every link and breadcrumb has an href, every guide list's steps too; a redirect's
 * address is not empty and has no space at either end. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "fuzz.h"
#include "html.h"

static void check_refs(const uint8_t *data, size_t size, const html_ref *r, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (!r[i].href)
			fuzz_fail(data, size, "%s %d without an href", what, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	size_t n;
	long replaced;
	char charset[64];
	int rc = html_decode((const char *)data, size, &text, &n, &replaced, charset);
	if (rc == ATLAS_EINVAL || rc == ATLAS_ENOMEM)
		return 0;
	if (rc != 0)
		fuzz_fail(data, size, "html_decode returned %d", rc);
	if (text[n] != '\0' || fuzz_utf8_invalid_at(text, n) >= 0)
		fuzz_fail(data, size, "decoded text (%s) not NUL-terminated valid UTF-8", charset);
	html_page p;
	html_opts o = { NULL, NULL };
	if (html_read(&p, text, n, &o) == 0) {
		if (p.nsecs < 1 || p.secs[0].level != 0 || p.secs[0].heading || p.secs[0].body_off != 0)
			fuzz_fail(data, size, "page without its lead section");
		size_t at = 0;
		for (int i = 0; i < p.nsecs; i++) {
			const html_sec *s = &p.secs[i];
			if (i && (!s->heading || s->level < 2 || s->level > 4))
				fuzz_fail(data, size, "section %d: heading %p level %d", i, (void *)s->heading, s->level);
			if (s->body_off < at || s->body_off > p.text_len + 1)
				fuzz_fail(data, size, "section %d body at %zu, text of %zu", i, s->body_off, p.text_len);
			size_t end = i + 1 < p.nsecs ? p.secs[i + 1].body_off - 1 : p.text_len;
			if (p.text[end] != '\0')
				fuzz_fail(data, size, "section %d body not NUL-terminated", i);
			at = s->body_off;
		}
		check_refs(data, size, p.links, p.nlinks, "link");
		check_refs(data, size, p.crumbs, p.ncrumbs, "breadcrumb");
		check_refs(data, size, p.trail_ends, p.ntrail_ends, "trail end");
		for (int g = 0; g < p.nguides; g++)
			check_refs(data, size, p.guides[g].steps, p.guides[g].nsteps, "guide step");
		for (int i = 0; i < p.ndefs; i++)
			if (!p.defs[i])
				fuzz_fail(data, size, "definition %d is NULL", i);
		if (p.redirect && (!p.redirect[0] || strchr(" \t\n\r\f", p.redirect[0]) ||
				   strchr(" \t\n\r\f", p.redirect[strlen(p.redirect) - 1])))
			fuzz_fail(data, size, "redirect \"%s\" empty or not trimmed", p.redirect);
		html_page_free(&p);
	}
	html_thread_done();
	free(text);
	return 0;
}
