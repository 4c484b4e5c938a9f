/* corpus.c - reading and validating the corpus: front matter (cJSON), Markdown bodies (md4c),
 * topics.json, synonyms.json and sitemap.xml (expat). Every problem is reported as file:line. */
#include "corpus.h"
#include "anchor.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <expat.h>
#include <md4c.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Frees p's text, or gives its share of the block holding it back (the last page frees the
 * block). Leaves p->text NULL. */
static void page_release_text(page *p);
/* Moves a parsed page's small strings and arrays into one block (see Packing a page). */
static void page_pack(page *p);

const char *const page_type_names[] = { "explainer", "guide", "topic", "page" };

/**************************************************************************************************
** Diagnostics.
*/

void diag_add(diag_list *d, const char *file, int line, enum diag_severity sev, const char *fmt, ...)
{
	if (sev == DIAG_ERROR)
		d->errors++;
	else
		d->warnings++;
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 32;
		diag *items = realloc(d->items, (size_t)cap * sizeof(*items));
		if (!items)
			return;
		d->items = items;
		d->cap = cap;
	}
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag *it = &d->items[d->n];
	it->file = strdup(file);
	it->msg = strdup(msg);
	it->line = line;
	it->severity = sev;
	if (it->file && it->msg)
		d->n++;
	else {
		free(it->file);
		free(it->msg);
	}
}

void diag_list_free(diag_list *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++) {
		free(d->items[i].file);
		free(d->items[i].msg);
	}
	free(d->items);
	memset(d, 0, sizeof(*d));
}

/**************************************************************************************************
** Small helpers.
*/

static int line_of_offset(const char *data, size_t off)
{
	int line = 1;
	for (size_t i = 0; i < off; i++)
		if (data[i] == '\n')
			line++;
	return line;
}

/* Line (within the page file) of the first occurrence of "key" in the front matter, or 1. */
static int field_line(const char *fm, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = fm ? strstr(fm, pat) : NULL;
	return p ? line_of_offset(fm, (size_t)(p - fm)) : 1;
}

/* Line of the nth (1-based) occurrence of pat in data at or after the first occurrence of from
 * (or the start when from is NULL), or fallback when absent. */
static int line_of_nth(const char *data, const char *from, const char *pat, int nth, int fallback)
{
	const char *p = !data ? NULL : from ? strstr(data, from) : data;
	for (int i = 0; p && i < nth; i++) {
		p = strstr(i ? p + 1 : p, pat);
	}
	return p ? line_of_offset(data, (size_t)(p - data)) : fallback;
}

static char *xstrndup(const char *s, size_t n)
{
	char *r = malloc(n + 1);
	if (r) {
		memcpy(r, s, n);
		r[n] = '\0';
	}
	return r;
}

/* Reads the whole file at path (or, when fd is not -1, the file open on fd, which is closed either
 * way) into *out (owned by the caller, NUL-terminated) and its length into *n. Returns 0, or -1
 * with errno set. */
static int read_file(const char *path, int fd, char **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	FILE *f = fd >= 0 ? fdopen(fd, "rb") : fopen(path, "rb");
	if (!f) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	strbuf sb = STRBUF_INIT;
	char buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_append(&sb, buf, got);
	int bad = ferror(f) || sb.oom;
	fclose(f);
	if (bad) {
		strbuf_free(&sb);
		errno = bad ? EIO : errno;
		return -1;
	}
	*n = sb.len;
	*out = strbuf_detach(&sb);
	return *out ? 0 : -1;
}

/**************************************************************************************************
** Markdown bodies.
*/

typedef struct md_state {
	page *p;
	const char *body;      /* the Markdown text, for locating links */
	size_t body_len;
	int body_line;         /* line of the body's first byte in the file */
	strbuf heading;
	int in_heading;        /* level of the heading being read, 0 when none */
	int link_depth;
	strbuf link_text;
	strbuf text;           /* the page's section bodies so far, the last one still growing */
	char *link_target;
	char *link_anchor;  /* the link's #fragment, "" for none */
	strmap anchors;
	size_t link_cursor;    /* where to look for the next link's text in body */
	size_t line_off;       /* body offset whose line is line_no (1-based) */
	int line_no;
	int oom;
} md_state;

static section *current_section(md_state *st)
{
	return &st->p->secs[st->p->nsecs - 1];
}

static int add_section(md_state *st, int level, const char *heading)
{
	page *p = st->p;
	section *secs = realloc(p->secs, (size_t)(p->nsecs + 1) * sizeof(*secs));
	if (!secs)
		return -1;
	p->secs = secs;
	section *s = &secs[p->nsecs];
	memset(s, 0, sizeof(*s));
	if (p->nsecs)
		strbuf_putc(&st->text, '\0'); /* the previous section's body ends */
	s->body_off = st->text.len;
	s->level = level;
	s->heading = strdup(heading);
	strbuf a = STRBUF_INIT;
	if (level) {
		anchor_of(&a, heading);
		int added = 0;
		int *count = strmap_put(&st->anchors, strbuf_str(&a), a.len, 0, &added);
		if (count && !added)
			strbuf_printf(&a, "-%d", ++*count);
	}
	s->anchor = strbuf_detach(&a);
	p->nsecs++;
	return s->heading && s->anchor ? 0 : -1;
}

static void append_text(md_state *st, const char *text, size_t n)
{
	if (st->in_heading)
		strbuf_append(&st->heading, text, n);
	else
		strbuf_append(&st->text, text, n);
	if (st->link_depth)
		strbuf_append(&st->link_text, text, n);
}

static void separate(md_state *st, char c)
{
	strbuf *b = st->in_heading ? &st->heading : &st->text;
	size_t from = st->in_heading ? 0 : current_section(st)->body_off;
	if (b->len > from && b->buf[b->len - 1] != '\n' && b->buf[b->len - 1] != ' ')
		strbuf_putc(b, c);
}

static int md_enter_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
	md_state *st = ud;
	if (type == MD_BLOCK_H) {
		MD_BLOCK_H_DETAIL *h = detail;
		if (h->level == 2 || h->level == 3) {
			st->in_heading = (int)h->level;
			strbuf_reset(&st->heading);
		} else
			separate(st, '\n');
	}
	return 0;
}

static int md_leave_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
	md_state *st = ud;
	(void)detail;
	if (type == MD_BLOCK_H && st->in_heading) {
		int level = st->in_heading;
		st->in_heading = 0;
		if (add_section(st, level, strbuf_str(&st->heading)))
			st->oom = 1;
		return 0;
	}
	switch (type) {
	case MD_BLOCK_P: case MD_BLOCK_LI: case MD_BLOCK_CODE: case MD_BLOCK_H: case MD_BLOCK_QUOTE:
	case MD_BLOCK_TR: case MD_BLOCK_HTML:
		separate(st, '\n');
		break;
	case MD_BLOCK_TD: case MD_BLOCK_TH:
		separate(st, ' ');
		break;
	default:
		break;
	}
	return 0;
}

static int md_enter_span(MD_SPANTYPE type, void *detail, void *ud)
{
	md_state *st = ud;
	if (type != MD_SPAN_A)
		return 0;
	MD_SPAN_A_DETAIL *a = detail;
	st->link_depth++;
	free(st->link_target);
	free(st->link_anchor);
	st->link_target = st->link_anchor = NULL;
	if (a->href.size > 0 && a->href.text[0] == '/') {
		size_t n = a->href.size, hash = a->href.size;
		for (size_t i = 0; i < a->href.size; i++)
			if (a->href.text[i] == '#' || a->href.text[i] == '?') {
				n = i;
				break;
			}
		for (size_t i = n; i < a->href.size; i++)
			if (a->href.text[i] == '#') {
				hash = i;
				break;
			}
		size_t fe = hash;
		while (fe < a->href.size && a->href.text[fe] != '?')
			fe++;
		st->link_anchor = hash < fe ? xstrndup(a->href.text + hash + 1, fe - hash - 1) : xstrndup("", 0);
		while (n > 1 && a->href.text[n - 1] == '/')
			n--;
		st->link_target = xstrndup(a->href.text, n);
	}
	strbuf_reset(&st->link_text);
	return 0;
}

static int md_leave_span(MD_SPANTYPE type, void *detail, void *ud)
{
	md_state *st = ud;
	(void)detail;
	if (type != MD_SPAN_A || !st->link_depth)
		return 0;
	st->link_depth--;
	if (!st->link_target)
		return 0;
	page *p = st->p;
	page_link *links = realloc(p->links, (size_t)(p->nlinks + 1) * sizeof(*links));
	if (!links) {
		st->oom = 1;
		return 0;
	}
	p->links = links;
	page_link *l = &links[p->nlinks++];
	l->target = st->link_target;
	l->anchor = st->link_anchor;
	st->link_target = st->link_anchor = NULL;
	l->text = strdup(strbuf_str(&st->link_text));
	/* the link's line: where "](target" next appears, followed by the end of the target; the
	 * body is st->body_len bytes, not NUL-terminated */
	strbuf pat = STRBUF_INIT;
	strbuf_printf(&pat, "](%s", l->target);
	const char *at = NULL;
	if (!pat.oom) {
		size_t from = st->link_cursor;
		while (from < st->body_len) {
			at = memmem(st->body + from, st->body_len - from, pat.buf, pat.len);
			if (!at)
				break;
			size_t after = (size_t)(at - st->body) + pat.len;
			if (after >= st->body_len || strchr(")#?/ \n", st->body[after]))
				break;
			from = (size_t)(at - st->body) + 1;
			at = NULL;
		}
	}
	strbuf_free(&pat);
	if (at)
		st->link_cursor = (size_t)(at - st->body) + 1;
	if (at) {
		/* lines counted from the previous link on, not from the start: pages with thousands
		 * of links (topic pages of a large site) stay linear */
		size_t off = (size_t)(at - st->body);
		if (off < st->line_off) {
			st->line_off = 0;
			st->line_no = 1;
		}
		for (size_t i = st->line_off; i < off; i++)
			st->line_no += st->body[i] == '\n';
		st->line_off = off;
		l->line = st->body_line + st->line_no - 1;
	} else
		l->line = st->body_line;
	return 0;
}

/* Decodes a numeric character reference ("&#60;", "&#x3C;", as md4c reports them: the whole
 * reference, 1-7 decimal or 1-6 hex digits) into out as UTF-8, as CommonMark reads it: NUL, a
 * surrogate or a code point past U+10FFFF is U+FFFD; a control character is a space (control
 * bytes never reach the index). Returns the bytes written, or 0 when text is no numeric
 * reference. */
static int numeric_ref(const char *text, size_t size, char out[4])
{
	if (size < 4 || text[0] != '&' || text[1] != '#' || text[size - 1] != ';')
		return 0;
	bool hex = text[2] == 'x' || text[2] == 'X';
	size_t i = hex ? 3 : 2, end = size - 1;
	if (i == end || end - i > (hex ? 6u : 7u))
		return 0;
	unsigned long cp = 0;
	for (; i < end; i++) {
		char c = text[i];
		int d = (c >= '0' && c <= '9') ? c - '0' :
			(hex && c >= 'a' && c <= 'f') ? c - 'a' + 10 :
			(hex && c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
		if (d < 0)
			return 0;
		cp = cp * (hex ? 16 : 10) + (unsigned long)d;
	}
	if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = 0xFFFD;
	if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
		cp = ' ';
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

static int md_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *ud)
{
	md_state *st = ud;
	switch (type) {
	case MD_TEXT_NULLCHAR:
		return 0;
	case MD_TEXT_BR:
	case MD_TEXT_SOFTBR:
		append_text(st, " ", 1);
		return 0;
	case MD_TEXT_ENTITY: {
		static const struct { const char *ent, *txt; } ents[] = {
			{ "&amp;", "&" }, { "&lt;", "<" }, { "&gt;", ">" }, { "&quot;", "\"" },
			{ "&nbsp;", " " }, { "&#39;", "'" }, { "&mdash;", "—" }, { "&ndash;", "–" },
		};
		for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
			if (strlen(ents[i].ent) == size && memcmp(ents[i].ent, text, size) == 0) {
				append_text(st, ents[i].txt, strlen(ents[i].txt));
				return 0;
			}
		char utf8[4];
		int n = numeric_ref(text, size, utf8);
		if (n > 0)
			append_text(st, utf8, (size_t)n);
		else
			append_text(st, text, size);
		return 0;
	}
	default:
		/* control bytes never reach the index: they delimit highlights in snippets */
		for (MD_SIZE i = 0; i < size; i++) {
			unsigned char c = (unsigned char)text[i];
			if (c < 0x20 && c != '\n' && c != '\t') {
				append_text(st, text, i);
				append_text(st, " ", 1);
				return md_text(type, text + i + 1, size - i - 1, ud);
			}
		}
		append_text(st, text, size);
		return 0;
	}
}

static int count_words(const char *s)
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

int corpus_parse_body(page *p, const char *body, size_t n, int body_line)
{
	md_state st;
	memset(&st, 0, sizeof(st));
	st.p = p;
	st.body = body;
	st.body_len = n;
	st.line_no = 1;
	st.body_line = body_line;
	if (add_section(&st, 0, p->title ? p->title : ""))
		return -1;
	strbuf_puts(&st.text, p->description ? p->description : "");
	strbuf_putc(&st.text, '\n');
	p->lead_len = st.text.len;
	MD_PARSER parser = { 0, MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_NOHTML, md_enter_block,
			     md_leave_block, md_enter_span, md_leave_span, md_text, NULL, NULL };
	int rc = md_parse(body, (MD_SIZE)n, &parser, &st);
	strbuf_free(&st.heading);
	strbuf_free(&st.link_text);
	free(st.link_target);
	free(st.link_anchor);
	strmap_free(&st.anchors);
	if (rc || st.oom || st.text.oom) {
		strbuf_free(&st.text);
		return -1;
	}
	/* the text grew by doubling and is held until the index is written: up to half of it was
	 * slack, and the corpus is the build's largest use of memory */
	strbuf_shrink(&st.text);
	size_t len = st.text.len;
	page_release_text(p);
	p->text_len = len;
	p->text = strbuf_detach(&st.text);
	if (!p->text)
		return -1;
	p->words = 0;
	for (int i = p->nsecs - 1; i >= 0; i--) {
		section *x = &p->secs[i];
		x->body = p->text + x->body_off;
		x->body_len = len - x->body_off;
		len = x->body_off ? x->body_off - 1 : 0; /* the NUL before this body */
		p->words += (i ? count_words(x->heading) : 0) + count_words(x->body);
	}
	if (p->description)
		p->words -= count_words(p->description);
	return 0;
}

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
		diag_add(d, p->file, field_line(p->fm_text, key), DIAG_ERROR,
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
		diag_add(d, p->file, field_line(p->fm_text, key), DIAG_ERROR,
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
static void page_pack(page *p)
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
		diag_add(d, p->file, field_line(p->fm_text, "lastmod"), DIAG_ERROR,
			 "field 'lastmod' must be a date YYYY-MM-DD, not '%s'", s);
}

static void parse_guide_sections(page *p, cJSON *fm, diag_list *d)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(fm, "sections");
	int line = field_line(p->fm_text, "sections");
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
			diag_add(d, p->file, line_of_nth(p->fm_text, "\"sections\"", "{", index + 1, line),
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
				diag_add(d, p->file, field_line(p->fm_text, "steps"), DIAG_ERROR,
					 "guide section '%s': steps must be page slugs", g->title);
			else if (g->steps)
				g->steps[g->nsteps++] = strdup(s->valuestring);
		}
	}
}

int page_parse(page *p, const char *file, const char *data, size_t n, enum page_type type,
	       diag_list *d)
{
	int errors_before = d->errors;
	memset(p, 0, sizeof(*p));
	p->file = strdup(file);
	p->type = type;
	if (!p->file)
		return -1;
	long bad = atlas_utf8_invalid_at(data, n);
	if (bad >= 0) {
		diag_add(d, file, line_of_offset(data, (size_t)bad), DIAG_ERROR,
			 "invalid UTF-8 at byte offset %ld", bad);
		goto fail;
	}
	if (n == 0 || data[0] != '{') {
		diag_add(d, file, 1, DIAG_ERROR, "front matter must start with '{' on the first line");
		goto fail;
	}
	/* the object ends on a line holding only '}' */
	size_t end = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && data[j] != '\n')
			j++;
		size_t k = j;
		while (k > i && (data[k - 1] == '\r' || data[k - 1] == ' ' || data[k - 1] == '\t'))
			k--;
		if (k == i + 1 && data[i] == '}') {
			end = i + 1;
			break;
		}
		i = j + 1;
	}
	if (!end) {
		diag_add(d, file, 1, DIAG_ERROR, "front matter never ends: no line holding only '}'");
		goto fail;
	}
	p->fm_text = xstrndup(data, end);
	if (!p->fm_text)
		goto fail;
	const char *parse_end = NULL;
	cJSON *fm = cJSON_ParseWithLengthOpts(data, end, &parse_end, 0);
	if (!fm) {
		const char *at = parse_end; /* where the parse failed: cJSON_GetErrorPtr is global */
		size_t off = at && at >= data && at <= data + end ? (size_t)(at - data) : 0;
		size_t ls = off;
		while (ls > 0 && data[ls - 1] != '\n')
			ls--;
		diag_add(d, file, line_of_offset(data, off), DIAG_ERROR,
			 "invalid JSON in front matter at column %zu", off - ls + 1);
		goto fail;
	}
	while (parse_end && parse_end < data + end && strchr(" \t\r\n", *parse_end))
		parse_end++;
	if (parse_end && parse_end < data + end) {
		size_t off = (size_t)(parse_end - data), ls = off;
		while (ls > 0 && data[ls - 1] != '\n')
			ls--;
		diag_add(d, file, line_of_offset(data, off), DIAG_ERROR,
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
		diag_add(d, file, field_line(p->fm_text, "priority"), DIAG_ERROR,
			 "field 'priority' must be a number from 0.0 to 1.0");
	else if (prio)
		p->priority = prio->valuedouble;
	p->keywords = get_strings(fm, "keywords", type == PAGE_EXPLAINER, &p->nkeywords, p, d);
	if (type == PAGE_EXPLAINER) {
		p->topics = get_strings(fm, "topics", true, &p->ntopics, p, d);
		if (cJSON_GetObjectItemCaseSensitive(fm, "topics") && p->ntopics == 0)
			diag_add(d, file, field_line(p->fm_text, "topics"), DIAG_ERROR,
				 "field 'topics' must name at least one topic");
	}
	p->prereqs = get_strings(fm, "prerequisites", false, &p->nprereqs, p, d);
	if (type == PAGE_GUIDE)
		parse_guide_sections(p, fm, d);
	if (type == PAGE_SITE)
		p->path = get_string(fm, "path", true, p, d);
	if (p->path && p->path[0] != '/')
		diag_add(d, file, field_line(p->fm_text, "path"), DIAG_ERROR,
			 "field 'path' must start with '/'");
	cJSON_Delete(fm);
	if (d->errors != errors_before)
		goto fail;

	size_t body = end;
	while (body < n && data[body] != '\n')
		body++;
	if (body < n)
		body++;
	if (corpus_parse_body(p, data + body, n - body, line_of_offset(data, body))) {
		diag_add(d, file, line_of_offset(data, body), DIAG_ERROR, "cannot parse the Markdown body");
		goto fail;
	}
	/* the lines later messages may name, kept instead of the front matter itself (about 1 KB a
	 * page, which would otherwise be held until every page is read, then leave holes in the
	 * heap); a guide's steps are placed in it later */
	p->topics_line = field_line(p->fm_text, "topics");
	p->prereqs_line = field_line(p->fm_text, "prerequisites");
	p->lastmod_line = field_line(p->fm_text, "lastmod");
	if (!p->ngsecs) {
		free(p->fm_text);
		p->fm_text = NULL;
	}
	page_pack(p);
	return 0;

fail:
	page_free(p);
	return -1;
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
** The corpus directory.
*/

#define FNV_OFFSET 1469598103934665603ULL

/* FNV-1a 64 of s[0..n), continuing from h (FNV_OFFSET to start). */
static unsigned long long fnv1a(unsigned long long h, const void *s, size_t n)
{
	const unsigned char *b = s;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Adds n bytes of a corpus file to the corpus digest and size. */
static void digest_bytes(corpus *c, const char *s, size_t n)
{
	c->digest = fnv1a(c->digest ? c->digest : FNV_OFFSET, s, n);
	c->bytes += n;
}

/* Adds a page file to the corpus digest and size: its digest (of its name, then its bytes, made
 * on the thread that read it) as 8 bytes, least significant first, and its size. */
static void digest_page_file(corpus *c, unsigned long long file_digest, size_t bytes)
{
	unsigned char b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(file_digest >> (8 * i));
	c->digest = fnv1a(c->digest ? c->digest : FNV_OFFSET, b, sizeof(b));
	c->bytes += bytes;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static page *add_page(corpus *c)
{
	if (c->npages == c->cappages) {
		int cap = c->cappages ? c->cappages * 2 : 256;
		page *pg = realloc(c->pages, (size_t)cap * sizeof(*pg));
		if (!pg)
			return NULL;
		c->pages = pg;
		c->cappages = cap;
	}
	return &c->pages[c->npages];
}

/* Registers the page just parsed into c->pages[c->npages]. */
static void commit_page(corpus *c, diag_list *d)
{
	page *p = &c->pages[c->npages];
	int added = 0;
	int *idx = strmap_put(&c->page_index, p->path, strlen(p->path), c->npages, &added);
	if (!idx)
		return;
	if (!added) {
		diag_add(d, p->file, 1, DIAG_ERROR, "duplicate path %s (also %s)", p->path,
			 c->pages[*idx].file);
		page_free(p);
		return;
	}
	c->npages++;
}

/* Files read and parsed at once by the reading threads, then registered in order by the caller. */
#define PARSE_BATCH 256
#define PARSE_THREADS_MAX 8

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

static void page_release_text(page *p)
{
	if (p->block) {
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
static void gather_texts(page **pages, int n)
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

/**************************************************************************************************
** Reading pages on every core.
*/

/* One page file of a batch: read and parsed on any thread, registered on the caller's. */
typedef struct parsed_file {
	char *name;         /* directory entry, e.g. "raft.md"; owned */
	char *file;         /* dir/sub/name, as reported in diagnostics; owned */
	int fd;             /* the file, opened ahead (see prefetch_files), or -1 */
	bool read;          /* the file could be read */
	unsigned long long digest; /* of its name, then its bytes */
	size_t len;         /* bytes of the name and the file */
	int read_errno;     /* errno of a failed read */
	bool ok;            /* page_parse succeeded: pg holds the page */
	page pg;
	diag_list d;        /* this file's problems, moved into the corpus's list in file order */
} parsed_file;

typedef struct parse_batch {
	parsed_file *files;
	int n;
	enum page_type type;
	pthread_mutex_t lock;
	int next;           /* the next file to take, under lock */
} parse_batch;

/* Reads and parses the files of the batch not yet taken, until none is left. Never fails: every
 * problem stays in its file's slot. */
static void *parse_files(void *arg)
{
	parse_batch *b = arg;
	for (;;) {
		pthread_mutex_lock(&b->lock);
		int i = b->next++;
		pthread_mutex_unlock(&b->lock);
		if (i >= b->n)
			return NULL;
		parsed_file *f = &b->files[i];
		int fd = f->fd;
		f->fd = -1;
		if (!f->file) {
			if (fd >= 0)
				close(fd);
			f->read_errno = ENOMEM;
			continue;
		}
		char *data;
		size_t len;
		if (read_file(f->file, fd, &data, &len)) {
			f->read_errno = errno ? errno : EIO;
			continue;
		}
		f->read = true;
		f->digest = fnv1a(fnv1a(FNV_OFFSET, f->name, strlen(f->name)), data, len);
		f->len = strlen(f->name) + len;
		f->ok = page_parse(&f->pg, f->file, data, len, b->type, &f->d) == 0;
		free(data);
	}
}

/* Appends src's problems to dst, in order, leaving src empty. A problem dst has no room for is
 * still counted. */
static void diag_list_move(diag_list *dst, diag_list *src)
{
	if (src->n && dst->n + src->n > dst->cap) {
		int cap = dst->cap ? dst->cap : 32;
		while (cap < dst->n + src->n)
			cap *= 2;
		diag *items = realloc(dst->items, (size_t)cap * sizeof(*items));
		if (items) {
			dst->items = items;
			dst->cap = cap;
		}
	}
	for (int i = 0; i < src->n; i++) {
		if (dst->n < dst->cap) {
			dst->items[dst->n++] = src->items[i];
		} else {
			free(src->items[i].file);
			free(src->items[i].msg);
		}
	}
	dst->errors += src->errors;
	dst->warnings += src->warnings;
	free(src->items);
	memset(src, 0, sizeof(*src));
}

/* Registers the parsed file f as the corpus's next page (its digest, its problems, the page),
 * and frees what f held. */
static void register_file(corpus *c, parsed_file *f, enum page_type type, diag_list *d)
{
	if (!f->read) {
		diag_add(d, f->file ? f->file : f->name, 0, DIAG_ERROR, "cannot read file: %s",
			 strerror(f->read_errno));
		goto out;
	}
	digest_page_file(c, f->digest, f->len);
	diag_list_move(d, &f->d);
	if (!f->ok)
		goto out;
	page *p = add_page(c);
	if (!p) {
		diag_add(d, f->file, 0, DIAG_ERROR, "out of memory");
		page_free(&f->pg);
		goto out;
	}
	*p = f->pg;
	memset(&f->pg, 0, sizeof(f->pg));
	if (type != PAGE_SITE) {
		size_t sl = strlen(f->name) - 3;
		p->path = malloc(sl + 2);
		if (p->path) {
			p->path[0] = '/';
			memcpy(p->path + 1, f->name, sl);
			p->path[sl + 1] = '\0';
		}
	}
	if (p->path)
		commit_page(c, d);
	else
		page_free(p);
out:
	diag_list_free(&f->d);
	free(f->name);
	free(f->file);
	memset(f, 0, sizeof(*f));
}

/* Opens the files dir/names[0..n) into fds[0..n) (-1 where one cannot be opened: it is then
 * opened again, and its error reported, when read) and asks the kernel to start reading them:
 * a corpus read cold then comes in while the batch before is parsed, instead of a file at a
 * time as each is read. */
static void prefetch_files(int *fds, const char *dir, char **names, int n)
{
	char path[8192];
	for (int i = 0; i < n; i++) {
		fds[i] = -1;
		if (!names[i] || snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path))
			continue;
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] >= 0)
			posix_fadvise(fds[i], 0, 0, POSIX_FADV_WILLNEED);
	}
}

/* How many threads read and parse pages: one per core, at most PARSE_THREADS_MAX. */
static int parse_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > PARSE_THREADS_MAX ? PARSE_THREADS_MAX : (int)n;
}

/* Reads every *.md file of dir/sub as a page of the given type, in name order: the files of each
 * batch are read and parsed on all cores, then registered one by one in that order, so that the
 * pages, their problems and the corpus digest do not depend on the threads. */
static void load_pages(corpus *c, const char *sub, enum page_type type, diag_list *d)
{
	char dirpath[4096];
	snprintf(dirpath, sizeof(dirpath), "%s/%s", c->dir, sub);
	DIR *dir = opendir(dirpath);
	if (!dir) {
		if (errno != ENOENT || type != PAGE_SITE)
			diag_add(d, dirpath, 0, DIAG_ERROR, "cannot open directory: %s", strerror(errno));
		return;
	}
	char **names = NULL;
	int n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		if (len < 4 || strcmp(de->d_name + len - 3, ".md") != 0 || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			char **nn = realloc(names, (size_t)cap * sizeof(char *));
			if (!nn)
				break;
			names = nn;
		}
		if ((names[n] = strdup(de->d_name)))
			n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(names, (size_t)n, sizeof(char *), cmp_str);
	parse_batch b = { .files = calloc(PARSE_BATCH, sizeof(parsed_file)), .type = type };
	if (!b.files) {
		diag_add(d, dirpath, 0, DIAG_ERROR, "out of memory");
		goto out_names;
	}
	pthread_mutex_init(&b.lock, NULL);
	int nthreads = parse_threads();
	int ahead[PARSE_BATCH]; /* the batch's files, opened while the one before was parsed */
	prefetch_files(ahead, dirpath, names, n < PARSE_BATCH ? n : PARSE_BATCH);
	for (int at = 0; at < n; at += b.n) {
		b.n = n - at < PARSE_BATCH ? n - at : PARSE_BATCH;
		b.next = 0;
		for (int i = 0; i < b.n; i++) {
			parsed_file *f = &b.files[i];
			f->name = names[at + i];
			names[at + i] = NULL;
			f->fd = ahead[i];
			size_t len = strlen(dirpath) + strlen(f->name) + 2;
			if ((f->file = malloc(len)))
				snprintf(f->file, len, "%s/%s", dirpath, f->name);
		}
		int next = at + b.n, nnext = n - next < PARSE_BATCH ? n - next : PARSE_BATCH;
		prefetch_files(ahead, dirpath, names + next, nnext);
		pthread_t helpers[PARSE_THREADS_MAX];
		int started = 0;
		for (int t = 1; t < nthreads && t < b.n; t++)
			if (pthread_create(&helpers[started], NULL, parse_files, &b) == 0)
				started++;
		parse_files(&b);
		for (int t = 0; t < started; t++)
			pthread_join(helpers[t], NULL);
		page *parsed[PARSE_BATCH];
		int np = 0;
		for (int i = 0; i < b.n; i++)
			if (b.files[i].ok)
				parsed[np++] = &b.files[i].pg;
		gather_texts(parsed, np);
		for (int i = 0; i < b.n; i++)
			register_file(c, &b.files[i], type, d);
	}
	pthread_mutex_destroy(&b.lock);
	free(b.files);
out_names:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int corpus_share_bodies(corpus *c, int readers)
{
	free(c->body_readers);
	c->body_readers = malloc((size_t)(c->npages ? c->npages : 1) * sizeof(*c->body_readers));
	if (!c->body_readers)
		return -1;
	for (int i = 0; i < c->npages; i++)
		atomic_init(&c->body_readers[i], readers);
	return 0;
}

void corpus_release_bodies(corpus *c, int i)
{
	if (!c->body_readers || atomic_fetch_sub(&c->body_readers[i], 1) != 1)
		return;
	page *p = &c->pages[i];
	for (int s = 0; s < p->nsecs; s++) {
		p->secs[s].body = "";
		p->secs[s].body_len = 0;
	}
	page_release_text(p);
}

static void json_error(diag_list *d, const char *file, const char *data)
{
	const char *at = cJSON_GetErrorPtr();
	size_t off = at && at >= data ? (size_t)(at - data) : 0;
	if (off > strlen(data))
		off = 0;
	size_t ls = off;
	while (ls > 0 && data[ls - 1] != '\n')
		ls--;
	diag_add(d, file, line_of_offset(data, off), DIAG_ERROR, "invalid JSON at column %zu",
		 off - ls + 1);
}

static int line_of_string(const char *data, const char *needle)
{
	char pat[512];
	snprintf(pat, sizeof(pat), "\"%s\"", needle);
	const char *p = strstr(data, pat);
	return p ? line_of_offset(data, (size_t)(p - data)) : 1;
}

static void load_topic_nodes(corpus *c, cJSON *arr, const char *parent, const char *file,
			     const char *data, diag_list *d)
{
	cJSON *it;
	cJSON_ArrayForEach(it, arr) {
		cJSON *path = cJSON_GetObjectItemCaseSensitive(it, "path");
		cJSON *title = cJSON_GetObjectItemCaseSensitive(it, "title");
		cJSON *desc = cJSON_GetObjectItemCaseSensitive(it, "description");
		cJSON *kids = cJSON_GetObjectItemCaseSensitive(it, "children");
		if (!cJSON_IsString(path) || !cJSON_IsString(title) || !cJSON_IsString(desc)) {
			diag_add(d, file, cJSON_IsString(path) ? line_of_string(data, path->valuestring) : 1,
				 DIAG_ERROR, "topic needs string fields 'path', 'title' and 'description'");
			continue;
		}
		const char *pp = path->valuestring;
		int line = line_of_string(data, pp);
		size_t plen = parent ? strlen(parent) : 0;
		if (parent && (strncmp(pp, parent, plen) != 0 || pp[plen] != '/' || strchr(pp + plen + 1, '/'))) {
			diag_add(d, file, line, DIAG_ERROR, "topic '%s' is not a direct child of '%s'", pp, parent);
			continue;
		}
		if (!parent && strchr(pp, '/')) {
			diag_add(d, file, line, DIAG_ERROR, "top-level topic '%s' must not contain '/'", pp);
			continue;
		}
		int added = 0;
		int *idx = strmap_put(&c->topic_index, pp, strlen(pp), c->ntopics, &added);
		if (!idx)
			return;
		if (!added) {
			diag_add(d, file, line, DIAG_ERROR, "duplicate topic '%s'", pp);
			continue;
		}
		if (c->ntopics == c->captopics) {
			int cap = c->captopics ? c->captopics * 2 : 64;
			topic *t = realloc(c->topics, (size_t)cap * sizeof(*t));
			if (!t)
				return;
			c->topics = t;
			c->captopics = cap;
		}
		topic *t = &c->topics[c->ntopics++];
		t->path = strdup(pp);
		t->parent = parent ? strdup(parent) : NULL;
		t->title = strdup(title->valuestring);
		t->description = strdup(desc->valuestring);
		t->page = NULL;
		t->ord = c->ntopics;
		t->line = line;
		if (kids && !cJSON_IsArray(kids))
			diag_add(d, file, line, DIAG_ERROR, "topic '%s': 'children' must be a list", pp);
		else if (kids)
			load_topic_nodes(c, kids, t->path, file, data, d);
	}
}

/* Reads DIR/name as JSON text holding an object with a list under key: digests it, checks its
 * UTF-8, parses it. On success returns the list, with *root (cJSON_Delete it) and *data (free it)
 * set; otherwise reports the problem (a missing file only when required) and returns NULL. */
static cJSON *read_json_list(corpus *c, diag_list *d, const char *name, const char *key,
			     bool required, char *file, size_t fcap, char **data, cJSON **root)
{
	size_t n;
	*root = NULL;
	snprintf(file, fcap, "%s/%s", c->dir, name);
	if (read_file(file, -1, data, &n)) {
		if (required || errno != ENOENT)
			diag_add(d, file, 0, DIAG_ERROR, "cannot read file: %s", strerror(errno));
		return NULL;
	}
	digest_bytes(c, *data, n);
	long bad = atlas_utf8_invalid_at(*data, n);
	if (bad >= 0) {
		diag_add(d, file, line_of_offset(*data, (size_t)bad), DIAG_ERROR,
			 "invalid UTF-8 at byte offset %ld", bad);
		return NULL;
	}
	*root = cJSON_ParseWithLength(*data, n);
	cJSON *list = *root ? cJSON_GetObjectItemCaseSensitive(*root, key) : NULL;
	if (!*root)
		json_error(d, file, *data);
	else if (!cJSON_IsArray(list))
		diag_add(d, file, 1, DIAG_ERROR, "expected an object with a '%s' list", key);
	return cJSON_IsArray(list) ? list : NULL;
}

static void load_topics(corpus *c, diag_list *d)
{
	char file[4096];
	char *data = NULL;
	cJSON *root = NULL;
	cJSON *arr = read_json_list(c, d, "topics.json", "topics", true, file, sizeof(file), &data, &root);
	if (arr)
		load_topic_nodes(c, arr, NULL, file, data, d);
	cJSON_Delete(root);
	free(data);
}

static void load_synonyms(corpus *c, diag_list *d)
{
	char file[4096];
	char *data = NULL;
	cJSON *root = NULL;
	cJSON *groups = read_json_list(c, d, "synonyms.json", "groups", false, file, sizeof(file), &data,
				       &root);
	if (groups) {
		int ng = cJSON_GetArraySize(groups);
		c->syn_groups = calloc((size_t)ng + 1, sizeof(char **));
		cJSON *g;
		int gi = 0;
		cJSON_ArrayForEach(g, groups) {
			gi++;
			cJSON *terms = cJSON_GetObjectItemCaseSensitive(g, "terms");
			int nt = cJSON_IsArray(terms) ? cJSON_GetArraySize(terms) : 0;
			if (nt < 2) {
				diag_add(d, file, line_of_nth(data, NULL, "{", gi + 1, 1), DIAG_ERROR,
					 "synonym group %d needs a 'terms' list of two or more", gi);
				continue;
			}
			char **out = calloc((size_t)nt + 1, sizeof(char *));
			if (!out || !c->syn_groups)
				break;
			int k = 0;
			cJSON *t;
			cJSON_ArrayForEach(t, terms) {
				if (!cJSON_IsString(t) || !t->valuestring[0]) {
					diag_add(d, file, line_of_nth(data, NULL, "{", gi + 1, 1), DIAG_ERROR,
						 "synonym group %d: terms must be non-empty strings", gi);
					continue;
				}
				char *s = strdup(t->valuestring);
				for (char *q = s; q && *q; q++)
					if (*q >= 'A' && *q <= 'Z')
						*q = (char)(*q + 32);
				out[k++] = s;
			}
			c->syn_groups[c->nsyn++] = out;
		}
	}
	cJSON_Delete(root);
	free(data);
}

/* Sitemap: <url><loc/><lastmod/><priority/><image:image><image:loc/></image:image></url> */
typedef struct sm_state {
	corpus *c;
	XML_Parser parser;
	strbuf text;
	sitemap_entry cur;
	int in_url;
} sm_state;

static const char *local_name(const char *n)
{
	const char *sep = strrchr(n, '|');
	return sep ? sep + 1 : n;
}

static void XMLCALL sm_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
	sm_state *st = ud;
	(void)attrs;
	strbuf_reset(&st->text);
	if (strcmp(local_name(name), "url") == 0) {
		memset(&st->cur, 0, sizeof(st->cur));
		st->cur.line = (int)XML_GetCurrentLineNumber(st->parser);
		st->in_url = 1;
	}
}

static void XMLCALL sm_end(void *ud, const XML_Char *name)
{
	sm_state *st = ud;
	const char *ln = local_name(name);
	int image = strstr(name, "image") != NULL && strcmp(ln, "loc") == 0;
	char **slot = NULL;
	if (!st->in_url)
		return;
	if (image)
		slot = &st->cur.image;
	else if (strcmp(ln, "loc") == 0)
		slot = &st->cur.loc;
	else if (strcmp(ln, "lastmod") == 0)
		slot = &st->cur.lastmod;
	else if (strcmp(ln, "priority") == 0)
		slot = &st->cur.priority;
	if (slot && !*slot)
		*slot = strdup(strbuf_str(&st->text));
	if (strcmp(ln, "url") == 0) {
		corpus *c = st->c;
		st->in_url = 0;
		if (c->nsitemap == c->capsitemap) {
			int cap = c->capsitemap ? c->capsitemap * 2 : 256;
			sitemap_entry *e = realloc(c->sitemap, (size_t)cap * sizeof(*e));
			if (!e)
				return;
			c->sitemap = e;
			c->capsitemap = cap;
		}
		c->sitemap[c->nsitemap++] = st->cur;
		memset(&st->cur, 0, sizeof(st->cur));
	}
	strbuf_reset(&st->text);
}

static void XMLCALL sm_text(void *ud, const XML_Char *s, int len)
{
	sm_state *st = ud;
	strbuf_append(&st->text, s, (size_t)len);
}

static void load_sitemap(corpus *c, diag_list *d, bool strict)
{
	char file[4096];
	snprintf(file, sizeof(file), "%s/sitemap.xml", c->dir);
	char *data;
	size_t n;
	if (read_file(file, -1, &data, &n)) {
		diag_add(d, file, 0, strict ? DIAG_ERROR : DIAG_WARNING, "cannot read sitemap: %s",
			 strerror(errno));
		return;
	}
	digest_bytes(c, data, n); /* the site URL, and some pages' dates and priorities, come from it */
	sm_state st;
	memset(&st, 0, sizeof(st));
	st.c = c;
	st.parser = XML_ParserCreateNS(NULL, '|');
	if (!st.parser) {
		free(data);
		return;
	}
	XML_SetUserData(st.parser, &st);
	XML_SetElementHandler(st.parser, sm_start, sm_end);
	XML_SetCharacterDataHandler(st.parser, sm_text);
	if (XML_Parse(st.parser, data, (int)n, 1) == XML_STATUS_ERROR)
		diag_add(d, file, (int)XML_GetCurrentLineNumber(st.parser), DIAG_ERROR, "invalid XML: %s",
			 XML_ErrorString(XML_GetErrorCode(st.parser)));
	else
		c->have_sitemap = true;
	XML_ParserFree(st.parser);
	strbuf_free(&st.text);
	free(st.cur.loc);
	free(st.cur.lastmod);
	free(st.cur.priority);
	free(st.cur.image);
	free(data);
	for (int i = 0; i < c->nsitemap; i++) {
		sitemap_entry *e = &c->sitemap[i];
		const char *loc = e->loc ? e->loc : "";
		const char *p = strstr(loc, "://");
		p = p ? strchr(p + 3, '/') : NULL;
		if (!e->loc || !p) {
			diag_add(d, file, e->line, DIAG_ERROR, "<url> without an absolute <loc>");
			continue;
		}
		e->path = strdup(p);
		if (!c->site_url)
			c->site_url = xstrndup(loc, (size_t)(p - loc));
	}
}

/**************************************************************************************************
** Cross-checks.
*/

static int find_page(const corpus *c, const char *path)
{
	int *i = strmap_get(&c->page_index, path);
	return i ? *i : -1;
}

/* Line of a guide step: its quoted slug inside the "sections" list. */
static int step_line(const char *fm, const char *slug)
{
	char pat[600];
	snprintf(pat, sizeof(pat), "\"%s\"", slug);
	return line_of_nth(fm, "\"sections\"", pat, 1, 1);
}

static void check_references(corpus *c, bool strict, diag_list *d)
{
	char path[1024];
	for (int i = 0; i < c->npages; i++) {
		page *p = &c->pages[i];
		for (int k = 0; k < p->ntopics; k++) {
			int *t = strmap_get(&c->topic_index, p->topics[k]);
			if (!t)
				diag_add(d, p->file, p->topics_line, DIAG_ERROR, "unknown topic '%s'",
					 p->topics[k]);
		}
		for (int k = 0; k < p->nprereqs; k++) {
			snprintf(path, sizeof(path), "/%s", p->prereqs[k]);
			if (find_page(c, path) < 0)
				diag_add(d, p->file, p->prereqs_line, DIAG_ERROR,
					 "prerequisite '%s' is not a page", p->prereqs[k]);
		}
		for (int g = 0; g < p->ngsecs; g++)
			for (int k = 0; k < p->gsecs[g].nsteps; k++) {
				snprintf(path, sizeof(path), "/%s", p->gsecs[g].steps[k]);
				if (find_page(c, path) < 0)
					diag_add(d, p->file, step_line(p->fm_text, p->gsecs[g].steps[k]),
						 DIAG_ERROR, "guide step '%s' is not a page", p->gsecs[g].steps[k]);
			}
		for (int k = 0; k < p->nlinks; k++) {
			const char *t = p->links[k].target;
			if (find_page(c, t) < 0 && !(strncmp(t, "/t/", 3) == 0 && strmap_get(&c->topic_index, t + 3)))
				diag_add(d, p->file, p->links[k].line, strict ? DIAG_ERROR : DIAG_WARNING,
					 "link to missing page %s", t);
		}
	}
}

static void check_sitemap(corpus *c, bool strict, diag_list *d)
{
	if (!c->have_sitemap)
		return;
	char file[4096];
	snprintf(file, sizeof(file), "%s/sitemap.xml", c->dir);
	enum diag_severity sev = strict ? DIAG_ERROR : DIAG_WARNING;
	strmap seen = STRMAP_INIT;
	for (int i = 0; i < c->nsitemap; i++) {
		const sitemap_entry *e = &c->sitemap[i];
		if (!e->path)
			continue;
		strmap_put(&seen, e->path, strlen(e->path), i, NULL);
		int pi = find_page(c, e->path);
		if (pi < 0) {
			diag_add(d, file, e->line, sev, "sitemap lists %s but the corpus has no such page",
				 e->path);
			continue;
		}
		const page *p = &c->pages[pi];
		if (e->lastmod && p->lastmod && strcmp(e->lastmod, p->lastmod) != 0)
			diag_add(d, p->file, p->lastmod_line, sev,
				 "lastmod %s differs from the sitemap's %s", p->lastmod, e->lastmod);
	}
	for (int i = 0; i < c->npages; i++)
		if (!strmap_get(&seen, c->pages[i].path))
			diag_add(d, c->pages[i].file, c->pages[i].type == PAGE_TOPIC ? c->pages[i].nsecs : 1,
				 sev, "page %s is not in sitemap.xml", c->pages[i].path);
	strmap_free(&seen);
}

/* Topic pages (/t/<path>) are pages too: their text is the topic's title, description, subtopics
 * and member explainers, and they link to those members. */
/* The explainers of every topic, in page order, and the sitemap entry of every topic page. */
typedef struct topic_members {
	int *start;   /* topic ti's members are pages[start[ti] .. start[ti + 1]) */
	int *pages;   /* page indexes */
	int *entry;   /* topic -> index of the sitemap entry of its page (the last one), or -1 */
} topic_members;

static void topic_members_free(topic_members *m)
{
	free(m->start);
	free(m->pages);
	free(m->entry);
}

/* Calls fn(c, ti, pi, arg) once for each topic ti that explainer pi is in: a topic of the page,
 * and each topic whose path is a parent path of one ("systems" of "systems/caching"). */
static void each_membership(const corpus *c, void (*fn)(int ti, int pi, void *arg), void *arg)
{
	int *last = malloc((size_t)(c->ntopics ? c->ntopics : 1) * sizeof(int));
	if (!last)
		return;
	for (int ti = 0; ti < c->ntopics; ti++)
		last[ti] = -1;
	for (int pi = 0; pi < c->npages; pi++) {
		const page *p = &c->pages[pi];
		if (p->type != PAGE_EXPLAINER)
			continue;
		for (int k = 0; k < p->ntopics; k++)
			for (size_t n = 1; p->topics[k][n - 1]; n++) {
				if (p->topics[k][n] != '\0' && p->topics[k][n] != '/')
					continue;
				int *ti = strmap_getn(&c->topic_index, p->topics[k], n);
				if (ti && last[*ti] != pi) {
					last[*ti] = pi; /* once however many of its topics are below it */
					fn(*ti, pi, arg);
				}
			}
	}
	free(last);
}

static void count_member(int ti, int pi, void *arg)
{
	(void)pi;
	((topic_members *)arg)->start[ti + 1]++;
}

static void place_member(int ti, int pi, void *arg)
{
	topic_members *m = arg;
	m->pages[m->entry[ti]++] = pi; /* entry is the fill cursor until the sitemap is read */
}

/* Finds every topic's explainers in one pass over the pages (a pass over every page for each
 * topic read every page's record 48 times), and each topic page's sitemap entry. Returns 0, or
 * -1 when out of memory (m then empty). */
static int topic_members_find(topic_members *m, const corpus *c)
{
	int nt = c->ntopics;
	m->start = calloc((size_t)nt + 2, sizeof(int));
	m->entry = malloc(((size_t)nt + 1) * sizeof(int));
	m->pages = NULL;
	if (!m->start || !m->entry)
		goto fail;
	each_membership(c, count_member, m);
	for (int ti = 0; ti < nt; ti++)
		m->start[ti + 1] += m->start[ti];
	m->pages = malloc(((size_t)m->start[nt] + 1) * sizeof(int));
	if (!m->pages)
		goto fail;
	for (int ti = 0; ti < nt; ti++)
		m->entry[ti] = m->start[ti];
	each_membership(c, place_member, m);
	for (int ti = 0; ti < nt; ti++)
		m->entry[ti] = -1;
	for (int i = 0; i < c->nsitemap; i++) {
		const char *path = c->sitemap[i].path;
		int *ti = path && strncmp(path, "/t/", 3) == 0 ? strmap_get(&c->topic_index, path + 3) : NULL;
		if (ti)
			m->entry[*ti] = i;
	}
	return 0;
fail:
	topic_members_free(m);
	memset(m, 0, sizeof(*m));
	return -1;
}

static void add_topic_pages(corpus *c, diag_list *d)
{
	char tfile[4096];
	snprintf(tfile, sizeof(tfile), "%s/topics.json", c->dir);
	topic_members m;
	if (topic_members_find(&m, c)) {
		diag_add(d, tfile, 0, DIAG_ERROR, "out of memory");
		return;
	}
	for (int ti = 0; ti < c->ntopics; ti++) {
		const topic *t = &c->topics[ti];
		page *p = add_page(c);
		if (!p)
			return;
		memset(p, 0, sizeof(*p));
		p->type = PAGE_TOPIC;
		p->file = strdup(tfile);
		strbuf s = STRBUF_INIT;
		strbuf_printf(&s, "/t/%s", t->path);
		p->path = strbuf_detach(&s);
		/* title: the chain of titles from the top ("Systems ▸ Caching") */
		const topic *chain[16];
		int depth = 0;
		for (const topic *u = t; u && depth < 16;) {
			chain[depth++] = u;
			int *pi = u->parent ? strmap_get(&c->topic_index, u->parent) : NULL;
			u = pi ? &c->topics[*pi] : NULL;
		}
		for (int k = depth - 1; k >= 0; k--)
			strbuf_printf(&s, "%s%s", chain[k]->title, k ? " ▸ " : "");
		p->title = strbuf_detach(&s);
		p->description = strdup(t->description);
		p->lastmod = NULL;
		p->priority = 0.5;
		if (m.entry[ti] >= 0) {
			const sitemap_entry *e = &c->sitemap[m.entry[ti]];
			p->lastmod = e->lastmod ? strdup(e->lastmod) : NULL;
			p->image = e->image ? strdup(e->image) : NULL;
			p->priority = e->priority ? atof(e->priority) : 0.5;
		}
		if (!p->lastmod)
			p->lastmod = strdup("");
		p->keywords = calloc(1, sizeof(char *));
		if (p->keywords) {
			p->keywords[0] = strdup(t->title);
			p->nkeywords = 1;
		}
		p->topics = calloc(1, sizeof(char *));
		if (p->topics) {
			p->topics[0] = strdup(t->path);
			p->ntopics = 1;
		}
		/* body: subtopics, then member explainers, as Markdown so links become edges */
		strbuf md = STRBUF_INIT;
		int nsub = 0;
		for (int k = 0; k < c->ntopics; k++)
			if (c->topics[k].parent && strcmp(c->topics[k].parent, t->path) == 0)
				strbuf_printf(&md, "%s- [%s](/t/%s): %s\n", nsub++ ? "" : "## Topics\n\n",
					      c->topics[k].title, c->topics[k].path, c->topics[k].description);
		for (int k = m.start[ti]; k < m.start[ti + 1]; k++) {
			const page *mp = &c->pages[m.pages[k]];
			strbuf_printf(&md, "%s- [%s](%s)\n", k == m.start[ti] ? "\n## Explainers\n\n" : "", mp->title,
				      mp->path);
		}
		char *md_text = strbuf_detach(&md);
		if (!md_text || corpus_parse_body(p, md_text, strlen(md_text), t->line))
			diag_add(d, tfile, t->line, DIAG_ERROR, "cannot build the topic page %s", p->path);
		free(md_text);
		int added = 0;
		int *idx = strmap_put(&c->page_index, p->path, strlen(p->path), c->npages, &added);
		if (idx && added)
			c->npages++;
		else
			page_free(p);
	}
	topic_members_free(&m);
}

/* Frees the sitemap's entries, checked against the pages and used by nothing after. */
static void free_sitemap(corpus *c)
{
	for (int i = 0; i < c->nsitemap; i++) {
		free(c->sitemap[i].path);
		free(c->sitemap[i].loc);
		free(c->sitemap[i].lastmod);
		free(c->sitemap[i].priority);
		free(c->sitemap[i].image);
	}
	free(c->sitemap);
	c->sitemap = NULL;
	c->nsitemap = c->capsitemap = 0;
}

int corpus_load(corpus *c, const char *dir, bool strict, diag_list *d)
{
	memset(c, 0, sizeof(*c));
	struct stat sb;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		diag_add(d, dir, 0, DIAG_ERROR, "corpus directory not found or not a directory");
		return -1;
	}
	c->dir = strdup(dir);
	load_topics(c, d);
	load_synonyms(c, d);
	load_pages(c, "explainers", PAGE_EXPLAINER, d);
	load_pages(c, "guides", PAGE_GUIDE, d);
	load_pages(c, "pages", PAGE_SITE, d);
	load_sitemap(c, d, strict);
	add_topic_pages(c, d);
	check_references(c, strict, d);
	check_sitemap(c, strict, d);
	if (!c->site_url)
		c->site_url = strdup("");
	/* the guides' front matter texts only placed messages, and the sitemap was only checked,
	 * all done by now: not kept through the build */
	for (int i = 0; i < c->npages; i++) {
		free(c->pages[i].fm_text);
		c->pages[i].fm_text = NULL;
	}
	free_sitemap(c);
	return 0;
}

void corpus_free(corpus *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->npages; i++)
		page_free(&c->pages[i]);
	free(c->pages);
	free(c->body_readers);
	strmap_free(&c->page_index);
	for (int i = 0; i < c->ntopics; i++) {
		free(c->topics[i].path);
		free(c->topics[i].parent);
		free(c->topics[i].title);
		free(c->topics[i].description);
		free(c->topics[i].page);
	}
	free(c->topics);
	strmap_free(&c->topic_index);
	for (int i = 0; i < c->nsyn; i++) {
		for (char **t = c->syn_groups[i]; *t; t++)
			free(*t);
		free(c->syn_groups[i]);
	}
	free(c->syn_groups);
	free_sitemap(c);
	free(c->site_url);
	free(c->dir);
	memset(c, 0, sizeof(*c));
}

void corpus_read_sitemap(corpus *c, diag_list *d, bool strict)
{
	load_sitemap(c, d, strict);
}

void corpus_free_sitemap(corpus *c)
{
	free_sitemap(c);
}

void corpus_gather_texts(page **pages, int n)
{
	gather_texts(pages, n);
}
