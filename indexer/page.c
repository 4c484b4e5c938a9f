/* page.c - one page file: its front matter (cJSON) checked into a page, the page packed into one
 * block, and the blocks its section texts are gathered into. */
#include "corpus_internal.h"
#include "error.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/**************************************************************************************************
** Front matter.
*/

static char *get_string(cJSON *fm, const char *key, bool required, const page *p, diag_list *d)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(fm, key);
	if (!v) {
		if (required)
			diag_add(d, p->file, 1, DIAG_ERROR, "front matter lacks required field '%s'", key);
		return NULL;
	}
	if (!cJSON_IsString(v) || !v->valuestring[0]) {
		diag_add(d, p->file, diag_field_line(p->fm_text, key), DIAG_ERROR,
			 "field '%s' must be a non-empty string", key);
		return NULL;
	}
	return strdup(v->valuestring);
}

static char **get_strings(cJSON *fm, const char *key, bool required, int *count, const page *p,
			  diag_list *d)
{
	*count = 0;
	cJSON *v = cJSON_GetObjectItemCaseSensitive(fm, key);
	if (!v) {
		if (required)
			diag_add(d, p->file, 1, DIAG_ERROR, "front matter lacks required field '%s'", key);
		return NULL;
	}
	int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
	char **out = n > 0 ? calloc((size_t)n, sizeof(char *)) : NULL;
	cJSON *it;
	int i = 0, bad = n < 0;
	cJSON_ArrayForEach(it, (n > 0 ? v : (cJSON *)NULL)) {
		if (!cJSON_IsString(it) || !it->valuestring[0])
			bad = 1;
		else if (out)
			out[i++] = strdup(it->valuestring);
	}
	if (bad)
		diag_add(d, p->file, diag_field_line(p->fm_text, key), DIAG_ERROR,
			 "field '%s' must be a list of non-empty strings", key);
	*count = i;
	return out;
}

static void free_strings(char **s, int n)
{
	for (int i = 0; i < n; i++)
		free(s[i]);
	free(s);
}

/**************************************************************************************************
** Packing a page.
*/

/* Bytes of s with its NUL, or 0 for NULL. */
static size_t str_size(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Copies s to *at and advances *at past it; returns the copy, or NULL for NULL. */
static char *pack_str(char **at, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *out = memcpy(*at, s, n);
	*at += n;
	return out;
}

/* Copies the n strings of *v into the array at *arrays and their text at *strings, advancing
 * both; frees the old ones and points *v at the copy (NULL stays NULL). */
static void pack_strings(char ***v, int n, char **arrays, char **strings)
{
	if (!*v)
		return;
	char **out = (char **)(void *)*arrays;
	*arrays += align8((size_t)n * sizeof(char *));
	for (int i = 0; i < n; i++) {
		out[i] = pack_str(strings, (*v)[i]);
		free((*v)[i]);
	}
	free(*v);
	*v = out;
}

/* Moves a parsed page's strings and arrays (all but path, set later, its text, its front matter
 * and a guide's sections) into one allocation: a page's forty or so small allocations cost their
 * headers and rounding (about 700 bytes a page) and, freed and made again while pages are
 * parsed, left holes in the heap. When there is no memory for the block, p stays as it is. */
void page_pack(page *p)
{
	if (p->packed || p->ngsecs)
		return;
	size_t arrays = align8((size_t)p->nkeywords * sizeof(char *)) + align8((size_t)p->ntopics * sizeof(char *)) +
			align8((size_t)p->nprereqs * sizeof(char *)) + align8((size_t)p->nsecs * sizeof(section)) +
			align8((size_t)p->nlinks * sizeof(page_link));
	size_t strings = str_size(p->file) + str_size(p->title) + str_size(p->description) +
			 str_size(p->lastmod) + str_size(p->image);
	for (int i = 0; i < p->nkeywords; i++)
		strings += str_size(p->keywords[i]);
	for (int i = 0; i < p->ntopics; i++)
		strings += str_size(p->topics[i]);
	for (int i = 0; i < p->nprereqs; i++)
		strings += str_size(p->prereqs[i]);
	for (int i = 0; i < p->nsecs; i++)
		strings += str_size(p->secs[i].heading) + str_size(p->secs[i].anchor);
	for (int i = 0; i < p->nlinks; i++)
		strings += str_size(p->links[i].target) + str_size(p->links[i].text) + str_size(p->links[i].anchor);
	char *block = malloc(arrays + strings ? arrays + strings : 1);
	if (!block)
		return;
	char *a = block, *s = block + arrays;
	pack_strings(&p->keywords, p->nkeywords, &a, &s);
	pack_strings(&p->topics, p->ntopics, &a, &s);
	pack_strings(&p->prereqs, p->nprereqs, &a, &s);
	if (p->secs) {
		section *secs = (section *)(void *)a;
		a += align8((size_t)p->nsecs * sizeof(section));
		for (int i = 0; i < p->nsecs; i++) {
			secs[i] = p->secs[i];
			secs[i].heading = pack_str(&s, p->secs[i].heading);
			secs[i].anchor = pack_str(&s, p->secs[i].anchor);
			free(p->secs[i].heading);
			free(p->secs[i].anchor);
		}
		free(p->secs);
		p->secs = secs;
	}
	if (p->links) {
		page_link *links = (page_link *)(void *)a;
		for (int i = 0; i < p->nlinks; i++) {
			links[i] = p->links[i];
			links[i].target = pack_str(&s, p->links[i].target);
			links[i].text = pack_str(&s, p->links[i].text);
			links[i].anchor = pack_str(&s, p->links[i].anchor);
			free(p->links[i].target);
			free(p->links[i].text);
			free(p->links[i].anchor);
		}
		free(p->links);
		p->links = links;
	}
	char **fields[] = { &p->file, &p->title, &p->description, &p->lastmod, &p->image };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char *copy = pack_str(&s, *fields[i]);
		free(*fields[i]);
		*fields[i] = copy;
	}
	p->packed = block;
}

static void check_date(const page *p, diag_list *d)
{
	const char *s = p->lastmod;
	int ok = s && strlen(s) == 10;
	for (int i = 0; ok && i < 10; i++)
		ok = (i == 4 || i == 7) ? s[i] == '-' : (s[i] >= '0' && s[i] <= '9');
	if (ok) {
		static const int days[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
		int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
		int year = atoi(s);
		int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
		ok = month >= 1 && month <= 12 && day >= 1 && day <= days[month - 1] &&
		     !(month == 2 && day == 29 && !leap);
	}
	if (s && !ok)
		diag_add(d, p->file, diag_field_line(p->fm_text, "lastmod"), DIAG_ERROR,
			 "field 'lastmod' must be a date YYYY-MM-DD, not '%s'", s);
}

static void parse_guide_sections(page *p, cJSON *fm, diag_list *d)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(fm, "sections");
	int line = diag_field_line(p->fm_text, "sections");
	if (!v) {
		diag_add(d, p->file, 1, DIAG_ERROR, "guide front matter lacks required field 'sections'");
		return;
	}
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0) {
		diag_add(d, p->file, line, DIAG_ERROR, "field 'sections' must be a non-empty list");
		return;
	}
	int n = cJSON_GetArraySize(v);
	p->gsecs = calloc((size_t)n, sizeof(*p->gsecs));
	if (!p->gsecs)
		return;
	cJSON *it;
	int index = -1;
	cJSON_ArrayForEach(it, v) {
		index++;
		cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "title");
		cJSON *steps = cJSON_GetObjectItemCaseSensitive(it, "steps");
		if (!cJSON_IsObject(it) || !cJSON_IsString(t) || !cJSON_IsArray(steps)) {
			diag_add(d, p->file, diag_line_of_nth(p->fm_text, "\"sections\"", "{", index + 1, line),
				 DIAG_ERROR,
				 "guide section %d must be an object with a 'title' string and a 'steps' list",
				 index + 1);
			continue;
		}
		guide_section *g = &p->gsecs[p->ngsecs++];
		g->title = strdup(t->valuestring);
		int ns = cJSON_GetArraySize(steps);
		g->steps = calloc((size_t)(ns ? ns : 1), sizeof(char *));
		cJSON *s;
		cJSON_ArrayForEach(s, steps) {
			if (!cJSON_IsString(s) || !s->valuestring[0])
				diag_add(d, p->file, diag_field_line(p->fm_text, "steps"), DIAG_ERROR,
					 "guide section '%s': steps must be page slugs", g->title);
			else if (g->steps)
				g->steps[g->nsteps++] = strdup(s->valuestring);
		}
	}
}

/* Returns where the front matter of data[0..n) ends, just after the '}' of the first line holding
 * only '}' (trailing blanks allowed), or 0 when no line does. */
static size_t front_matter_end(const char *data, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && data[j] != '\n')
			j++;
		size_t k = j;
		while (k > i && (data[k - 1] == '\r' || data[k - 1] == ' ' || data[k - 1] == '\t'))
			k--;
		if (k == i + 1 && data[i] == '}')
			return i + 1;
		i = j + 1;
	}
	return 0;
}

int page_parse(page *p, const char *file, const char *data, size_t n, enum atlas_page_type type,
	       diag_list *d)
{
	int errors_before = d->errors;
	int rc = ATLAS_EINVAL; /* what a goto fail returns */
	memset(p, 0, sizeof(*p));
	p->file = strdup(file);
	p->type = type;
	if (!p->file)
		return ATLAS_ENOMEM;
	long bad = atlas_utf8_invalid_at(data, n);
	if (bad >= 0) {
		diag_add(d, file, diag_line_of_offset(data, (size_t)bad), DIAG_ERROR,
			 "invalid UTF-8 at byte offset %ld", bad);
		goto fail;
	}
	if (n == 0 || data[0] != '{') {
		diag_add(d, file, 1, DIAG_ERROR, "front matter must start with '{' on the first line");
		goto fail;
	}
	size_t end = front_matter_end(data, n);
	if (!end) {
		diag_add(d, file, 1, DIAG_ERROR, "front matter never ends: no line holding only '}'");
		goto fail;
	}
	p->fm_text = corpus_strndup(data, end);
	if (!p->fm_text) {
		rc = ATLAS_ENOMEM;
		goto fail;
	}
	const char *parse_end = NULL;
	cJSON *fm = cJSON_ParseWithLengthOpts(data, end, &parse_end, 0);
	if (!fm) {
		const char *at = parse_end; /* where the parse failed: cJSON_GetErrorPtr is global */
		size_t off = at && at >= data && at <= data + end ? (size_t)(at - data) : 0;
		size_t ls = off;
		while (ls > 0 && data[ls - 1] != '\n')
			ls--;
		diag_add(d, file, diag_line_of_offset(data, off), DIAG_ERROR,
			 "invalid JSON in front matter at column %zu", off - ls + 1);
		goto fail;
	}
	while (parse_end && parse_end < data + end && strchr(" \t\r\n", *parse_end))
		parse_end++;
	if (parse_end && parse_end < data + end) {
		size_t off = (size_t)(parse_end - data), ls = off;
		while (ls > 0 && data[ls - 1] != '\n')
			ls--;
		diag_add(d, file, diag_line_of_offset(data, off), DIAG_ERROR,
			 "invalid JSON in front matter at column %zu: text after the closing '}'", off - ls + 1);
		cJSON_Delete(fm);
		goto fail;
	}
	if (!cJSON_IsObject(fm)) {
		diag_add(d, file, 1, DIAG_ERROR, "front matter is not a JSON object");
		cJSON_Delete(fm);
		goto fail;
	}
	p->title = get_string(fm, "title", true, p, d);
	p->description = get_string(fm, "description", true, p, d);
	p->lastmod = get_string(fm, "lastmod", true, p, d);
	p->image = get_string(fm, "image", false, p, d);
	check_date(p, d);
	cJSON *prio = cJSON_GetObjectItemCaseSensitive(fm, "priority");
	p->priority = 0.5;
	if (prio && (!cJSON_IsNumber(prio) || prio->valuedouble < 0 || prio->valuedouble > 1))
		diag_add(d, file, diag_field_line(p->fm_text, "priority"), DIAG_ERROR,
			 "field 'priority' must be a number from 0.0 to 1.0");
	else if (prio)
		p->priority = prio->valuedouble;
	p->keywords = get_strings(fm, "keywords", type == ATLAS_TYPE_EXPLAINER, &p->nkeywords, p, d);
	if (type == ATLAS_TYPE_EXPLAINER) {
		p->topics = get_strings(fm, "topics", true, &p->ntopics, p, d);
		if (cJSON_GetObjectItemCaseSensitive(fm, "topics") && p->ntopics == 0)
			diag_add(d, file, diag_field_line(p->fm_text, "topics"), DIAG_ERROR,
				 "field 'topics' must name at least one topic");
	}
	p->prereqs = get_strings(fm, "prerequisites", false, &p->nprereqs, p, d);
	if (type == ATLAS_TYPE_GUIDE)
		parse_guide_sections(p, fm, d);
	if (type == ATLAS_TYPE_PAGE)
		p->path = get_string(fm, "path", true, p, d);
	if (p->path && p->path[0] != '/')
		diag_add(d, file, diag_field_line(p->fm_text, "path"), DIAG_ERROR,
			 "field 'path' must start with '/'");
	cJSON_Delete(fm);
	if (d->errors != errors_before)
		goto fail;

	size_t body = end;
	while (body < n && data[body] != '\n')
		body++;
	if (body < n)
		body++;
	if (corpus_parse_body(p, data + body, n - body, diag_line_of_offset(data, body))) {
		diag_add(d, file, diag_line_of_offset(data, body), DIAG_ERROR, "cannot parse the Markdown body");
		goto fail;
	}
	/* the lines later messages may name, kept instead of the front matter itself (about 1 KB a
	 * page, which would otherwise be held until every page is read, then leave holes in the
	 * heap); a guide's steps are placed in it later */
	p->topics_line = diag_field_line(p->fm_text, "topics");
	p->prereqs_line = diag_field_line(p->fm_text, "prerequisites");
	p->lastmod_line = diag_field_line(p->fm_text, "lastmod");
	if (!p->ngsecs) {
		free(p->fm_text);
		p->fm_text = NULL;
	}
	page_pack(p);
	return 0;

fail:
	page_free(p);
	return rc;
}

void page_free(page *p)
{
	if (!p)
		return;
	if (p->packed) {
		free(p->packed);
	} else {
		free(p->file);
		free(p->title);
		free(p->description);
		free(p->lastmod);
		free(p->image);
		free_strings(p->keywords, p->nkeywords);
		free_strings(p->topics, p->ntopics);
		free_strings(p->prereqs, p->nprereqs);
		free_strings(p->defs, p->ndefs);
		for (int i = 0; i < p->nsecs; i++) {
			free(p->secs[i].heading);
			free(p->secs[i].anchor);
		}
		free(p->secs);
		for (int i = 0; i < p->nlinks; i++) {
			free(p->links[i].target);
			free(p->links[i].text);
			free(p->links[i].anchor);
		}
		free(p->links);
	}
	/* never packed */
	free(p->path);
	for (int i = 0; i < p->ngsecs; i++) {
		free(p->gsecs[i].title);
		free_strings(p->gsecs[i].steps, p->gsecs[i].nsteps);
	}
	free(p->gsecs);
	page_release_text(p);
	free(p->fm_text);
	memset(p, 0, sizeof(*p));
}

/**************************************************************************************************
** Text blocks.
*/

/* Section bodies are the corpus's largest part, and the build frees them page by page as it
 * indexes them. Freed one by one, between the corpus's other allocations, most of that memory
 * stayed in the heap; a batch's bodies in one block mapped from the system go back to it whole as
 * soon as the batch's last page is released. */
struct text_block {
	char *base;
	size_t size;
	atomic_int pages;   /* pages whose text is still in the block */
};

/* Gives the system back the memory pages that hold nothing but text[0..n), a page's text in a
 * block (the pages it shares with its neighbours' texts stay until the block goes). Cannot fail
 * (a refusal leaves the memory to munmap). */
static void discard_text_pages(char *text, size_t n)
{
	long pagesize = sysconf(_SC_PAGESIZE);
	if (pagesize <= 0)
		return;
	uintptr_t ps = (uintptr_t)pagesize;
	uintptr_t from = ((uintptr_t)text + ps - 1) & ~(ps - 1), to = ((uintptr_t)text + n) & ~(ps - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

void page_release_text(page *p)
{
	if (p->block) {
		/* before this page's count goes: once it has, another thread may unmap the block, and
		 * the addresses be mapped again for something else */
		discard_text_pages(p->text, p->text_len + 1);
		if (atomic_fetch_sub(&p->block->pages, 1) == 1) {
			munmap(p->block->base, p->block->size);
			free(p->block);
		}
	} else {
		free(p->text);
	}
	p->text = NULL;
	p->text_len = 0;
	p->block = NULL;
}

/* Moves the texts of the n pages into one new block, pointing their sections into it. Pages keep
 * their own texts when the block cannot be made (nothing is lost but the memory it would save). */
void corpus_gather_texts(page **pages, int n)
{
	size_t total = 0;
	int held = 0;
	for (int i = 0; i < n; i++)
		if (pages[i]->text && !pages[i]->block) {
			total += pages[i]->text_len + 1;
			held++;
		}
	if (!held)
		return;
	text_block *b = malloc(sizeof(*b));
	char *base = b ? mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	if (base == MAP_FAILED) {
		free(b);
		return;
	}
	b->base = base;
	b->size = total;
	atomic_init(&b->pages, held);
	for (int i = 0; i < n; i++) {
		page *p = pages[i];
		if (!p->text || p->block)
			continue;
		memcpy(base, p->text, p->text_len + 1);
		for (int s = 0; s < p->nsecs; s++)
			p->secs[s].body = base + p->secs[s].body_off;
		free(p->text);
		p->text = base;
		p->block = b;
		base += p->text_len + 1;
	}
}

