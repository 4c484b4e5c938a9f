/* markdown.c - a page's Markdown body (md4c): its sections, plain text, anchors and links. */
#include "corpus_internal.h"
#include "error.h"
#include "anchor.h"
#include "utf8.h"

#include <md4c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MD_ITEM_DEPTH 16 /* list items within items whose links are told apart */

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
	int items;             /* how deep in list items */
	int item_links[MD_ITEM_DEPTH]; /* links met in each item being read, the innermost last */
	int oom;
} md_state;

static section *current_section(md_state *st)
{
	return &st->p->secs[st->p->nsecs - 1];
}

/* Starts a section of the page at level with a copy of heading. Returns 0, or ATLAS_ENOMEM when out
 * of memory. */
static int add_section(md_state *st, int level, const char *heading)
{
	page *p = st->p;
	section *secs = realloc(p->secs, (size_t)(p->nsecs + 1) * sizeof(*secs));
	if (!secs)
		return ATLAS_ENOMEM;
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
	return s->heading && s->anchor ? 0 : ATLAS_ENOMEM;
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
	if (type == MD_BLOCK_LI && st->items++ < MD_ITEM_DEPTH)
		st->item_links[st->items - 1] = 0;
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
	if (type == MD_BLOCK_LI && st->items > 0)
		st->items--;
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
		st->link_anchor = hash < fe ? corpus_strndup(a->href.text + hash + 1, fe - hash - 1) : corpus_strndup("", 0);
		while (n > 1 && a->href.text[n - 1] == '/')
			n--;
		st->link_target = corpus_strndup(a->href.text, n);
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
	l->listed = st->items > 0 && st->items <= MD_ITEM_DEPTH && st->item_links[st->items - 1]++ == 0;
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
		return ATLAS_ENOMEM;
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
		return st.oom || st.text.oom ? ATLAS_ENOMEM : ATLAS_EINVAL;
	}
	/* the text grew by doubling and is held until the index is written: up to half of it was
	 * slack, and the corpus is the build's largest use of memory */
	strbuf_shrink(&st.text);
	size_t len = st.text.len;
	page_release_text(p);
	p->text_len = len;
	p->text = strbuf_detach(&st.text);
	if (!p->text)
		return ATLAS_ENOMEM;
	p->words = 0;
	for (int i = p->nsecs - 1; i >= 0; i--) {
		section *x = &p->secs[i];
		x->body = p->text + x->body_off;
		x->body_len = len - x->body_off;
		len = x->body_off ? x->body_off - 1 : 0; /* the NUL before this body */
		p->words += (i ? atlas_text_words(x->heading) : 0) + atlas_text_words(x->body);
	}
	if (p->description)
		p->words -= atlas_text_words(p->description);
	return 0;
}

