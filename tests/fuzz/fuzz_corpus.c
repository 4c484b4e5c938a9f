/* fuzz_corpus.c - arbitrary bytes as a page file (JSON front matter + Markdown body), parsed as an
 * explainer, a guide and a site page with page_parse, everything freed (a leak is a finding).
 *
 * page_parse's contract is data[0..n): the bytes are handed over in a buffer of exactly n bytes,
 * not NUL-terminated, so that AddressSanitizer sees any read past the end. (The indexer reads
 * files into a buffer that happens to hold a NUL after the last byte.) Building with
 * -DFUZZ_CORPUS_NUL_TERMINATED passes a NUL-terminated copy instead, as the indexer does.
 *
 * Properties: page_parse returns 0, ATLAS_EINVAL or (out of memory) ATLAS_ENOMEM; ATLAS_EINVAL
 * comes with at least one error in the diag_list and the page left empty; 0 leaves a page with its
 * title, description, at least the lead section, each section with a heading and anchor, links and
 * guide steps non-NULL. */
#include <stdlib.h>
#include <string.h>

#include "corpus.h"
#include "error.h"
#include "fuzz.h"

static int is_empty(const page *p)
{
	static const page zero;
	return memcmp(p, &zero, sizeof(zero)) == 0;
}

static void check_page(const uint8_t *data, size_t size, const page *p, enum atlas_page_type type)
{
	if (!p->file || !p->title || !p->description || !p->lastmod)
		fuzz_fail(data, size, "parsed %s page lacks file, title, description or lastmod",
			  atlas_page_type_names[type]);
	if (type == ATLAS_TYPE_PAGE && (!p->path || p->path[0] != '/'))
		fuzz_fail(data, size, "parsed site page without a path starting with '/'");
	if (p->nsecs < 1 || !p->secs)
		fuzz_fail(data, size, "parsed page without its lead section");
	for (int i = 0; i < p->nsecs; i++) {
		const section *s = &p->secs[i];
		if (!s->heading || !s->anchor || (i > 0 && s->level != 2 && s->level != 3))
			fuzz_fail(data, size, "section %d: heading %p anchor %p level %d", i, (void *)s->heading,
				  (void *)s->anchor, s->level);
	}
	for (int i = 0; i < p->nlinks; i++)
		if (!p->links[i].target || !p->links[i].text || p->links[i].target[0] != '/')
			fuzz_fail(data, size, "link %d is incomplete", i);
	for (int i = 0; i < p->ngsecs; i++) {
		if (!p->gsecs[i].title)
			fuzz_fail(data, size, "guide section %d without a title", i);
		for (int k = 0; k < p->gsecs[i].nsteps; k++)
			if (!p->gsecs[i].steps[k] || !p->gsecs[i].steps[k][0])
				fuzz_fail(data, size, "guide section %d: empty step %d", i, k);
	}
	if (p->words < 0)
		fuzz_fail(data, size, "negative word count %d", p->words);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum atlas_page_type types[] = { ATLAS_TYPE_EXPLAINER, ATLAS_TYPE_GUIDE, ATLAS_TYPE_PAGE };
#ifdef FUZZ_CORPUS_NUL_TERMINATED
	char *copy = malloc(size + 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	copy[size] = '\0';
#else
	char *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
#endif
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		page p;
		diag_list d;
		memset(&d, 0, sizeof(d));
		int rc = page_parse(&p, "fuzz.md", copy, size, types[t], &d);
		if (rc == 0) {
			check_page(data, size, &p, types[t]);
			page_free(&p);
		} else if (rc == ATLAS_EINVAL) {
			if (d.errors < 1)
				fuzz_fail(data, size, "page_parse failed as %s without recording an error",
					  atlas_page_type_names[types[t]]);
			if (!is_empty(&p))
				fuzz_fail(data, size, "page_parse failed as %s but left the page non-empty",
					  atlas_page_type_names[types[t]]);
		} else if (rc != ATLAS_ENOMEM)
			fuzz_fail(data, size, "page_parse returned %d", rc);
		for (int i = 0; i < d.n; i++)
			if (!d.items[i].file || !d.items[i].msg)
				fuzz_fail(data, size, "diagnostic %d is incomplete", i);
		diag_list_free(&d);
	}
	free(copy);
	return 0;
}
