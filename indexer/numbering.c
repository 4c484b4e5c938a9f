/* numbering.c - reading order from the section numbers that begin pages' titles ("9.1. Logical
 * Operators", "Chapter 9. Functions and Operators", "Appendix B. Date/Time Support", "Part II.
 * The SQL Language", "3.2 Invoking GCC"): each numbered page's candidate is the page numbered
 * after it. A manual's numbering is its authors' reading order, there when a route's links are
 * not. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "signals_internal.h"
#include "strmap.h"

#define NUMBER_MAX_PARTS 8   /* 9.1.2.3...: deeper numbers are not read */
#define NUMBER_MAX_TIES 3    /* pages numbered alike that a row goes to, the nearest by path */

/* A title's number: its first part's kind (a digit, a letter or a Roman numeral; a letter's and a
 * Roman numeral's count apart from digits), its parts, and the text it is written as. */
typedef struct section_number {
	char kind;                 /* '0' digits, 'A' a letter, 'R' a Roman numeral */
	int parts[NUMBER_MAX_PARTS];
	int nparts;
	int label_len;             /* "Chapter 9", "9.1": title[0..label_len) less a trailing dot */
} section_number;

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* The value of the Roman numeral s[0..n) (I to CCC), or 0 when it is not one. */
static int roman_value(const char *s, int n)
{
	static const char sym[] = "IVXLC";
	static const int val[] = { 1, 5, 10, 50, 100 };
	int total = 0;
	for (int i = 0; i < n; i++) {
		const char *a = strchr(sym, s[i]), *b = i + 1 < n ? strchr(sym, s[i + 1]) : NULL;
		if (!a || !s[i])
			return 0;
		int v = val[a - sym], next = b ? val[b - sym] : 0;
		total += v < next ? -v : v;
	}
	return total > 0 && total <= 300 ? total : 0;
}

/* The words that may name a number ("Chapter 9"); after one, a letter or a Roman numeral needs no
 * dot. Returns the word's length with the spaces after it, or 0. */
static int number_word(const char *s)
{
	static const char *const words[] = { "Chapter", "Part", "Appendix", "Section", "Lesson", "Step",
					     "Unit", "Module", "Lecture" };
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
		size_t n = strlen(words[k]);
		if (strncmp(s, words[k], n) == 0 && is_space(s[n])) {
			while (is_space(s[n]))
				n++;
			return (int)n;
		}
	}
	return 0;
}

/* Reads the number title begins with into *out. Returns true when it has one: a number followed by
 * a space (after an optional dot) and more text. */
static bool title_number(section_number *out, const char *title)
{
	memset(out, 0, sizeof(*out));
	const char *s = title;
	int word = number_word(s);
	s += word;
	int n = 0;
	if (s[0] >= '0' && s[0] <= '9') {
		int v = 0;
		while (s[n] >= '0' && s[n] <= '9' && n < 5)
			v = v * 10 + (s[n++] - '0');
		if (s[n] >= '0' && s[n] <= '9')
			return false;
		out->kind = '0';
		out->parts[0] = v;
	} else {
		/* a Roman numeral (Part II) or a letter (Appendix B): "I", "V" and "X" alone are
		 * Roman unless an appendix's, other single letters letters */
		bool appendix = word && strncmp(title, "Appendix", 8) == 0;
		while (s[n] && strchr("IVXLC", s[n]))
			n++;
		if (!n || appendix || (n == 1 && !strchr("IVX", s[0])))
			n = (s[0] >= 'A' && s[0] <= 'Z') ? 1 : 0;
		bool ends = (s[n] == '.' && (is_space(s[n + 1]) || (s[n + 1] >= '0' && s[n + 1] <= '9'))) ||
			    (word && is_space(s[n]));
		if (!n || !ends)
			return false;
		if (!appendix && (n > 1 || strchr("IVX", s[0]))) {
			out->kind = 'R';
			if (!(out->parts[0] = roman_value(s, n)))
				return false;
		} else {
			out->kind = 'A';
			out->parts[0] = s[0] - 'A' + 1;
		}
	}
	out->nparts = 1;
	while (s[n] == '.' && s[n + 1] >= '0' && s[n + 1] <= '9') {
		int v = 0, k = n + 1;
		while (s[k] >= '0' && s[k] <= '9' && k - n <= 5)
			v = v * 10 + (s[k++] - '0');
		if ((s[k] >= '0' && s[k] <= '9') || out->nparts == NUMBER_MAX_PARTS)
			return false;
		out->parts[out->nparts++] = v;
		n = k;
	}
	out->label_len = (int)(s - title) + n;
	if (s[n] == '.')
		n++;
	if (!is_space(s[n]))
		return false;
	while (is_space(s[n]))
		n++;
	return s[n] != '\0';
}

/* The map's key of number parts[0..nparts) of kind: "0:9.1", "A:2", "R:2". */
static size_t number_key(char *buf, size_t cap, char kind, const int *parts, int nparts)
{
	size_t len = 0;
	buf[len++] = kind;
	buf[len++] = ':';
	for (int i = 0; i < nparts && len + 12 < cap; i++) {
		if (i)
			buf[len++] = '.';
		char digits[12];
		int nd = 0, v = parts[i];
		do
			digits[nd++] = (char)('0' + v % 10);
		while ((v /= 10) && nd < 11);
		while (nd)
			buf[len++] = digits[--nd];
	}
	buf[len] = '\0';
	return len;
}

/* How near paths a and b are: the bytes of the folders they share, and more than any such count
 * when they are in the same folder. */
static size_t nearness(const char *a, const char *b)
{
	size_t i = 0, folder = 0;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '/')
			folder = i + 1;
		i++;
	}
	return strchr(a + folder, '/') || strchr(b + folder, '/') ? folder : folder + ((size_t)1 << 20);
}

/* The numbered pages by key, those numbered alike chained through next_alike. */
typedef struct numbered {
	strmap by_key;           /* key -> the first page numbered so */
	int *next_alike;         /* by page: the next page numbered the same, or -1 */
	section_number *num;     /* by page */
	bool *has;               /* by page: numbered */
} numbered;

/* Emits rows from page src to the pages numbered parts[0..nparts) of kind (the nearest by folder,
 * at most NUMBER_MAX_TIES of them, sharing weight w). Returns whether any page is numbered so. */
static bool emit_to(out_ctx *o, const corpus *c, const int *id_of, const numbered *nb, int src, char kind,
		    const int *parts, int nparts, double w)
{
	char key[160];
	number_key(key, sizeof(key), kind, parts, nparts);
	int *first = strmap_get(&nb->by_key, key);
	if (!first)
		return false;
	size_t best = 0;
	int ties = 0;
	for (int p = *first; p >= 0; p = nb->next_alike[p]) {
		size_t f = nearness(c->pages[src].path, c->pages[p].path);
		if (p == src)
			continue;
		if (f > best || !ties) {
			best = f;
			ties = 0;
		}
		ties += f == best;
	}
	if (!ties)
		return false;
	const section_number *sn = &nb->num[src];
	int emitted = 0;
	for (int p = *first; p >= 0 && emitted < NUMBER_MAX_TIES; p = nb->next_alike[p])
		if (p != src && nearness(c->pages[src].path, c->pages[p].path) == best) {
			emit_bytes(o, id_of[src], id_of[p], NEXT_NUMBER_NEXT,
				   w / (ties < NUMBER_MAX_TIES ? ties : NUMBER_MAX_TIES), c->pages[src].title,
				   sn->label_len);
			emitted++;
		}
	return true;
}

void numbering_signals(out_ctx *o, const corpus *c, const int *id_of)
{
	numbered nb = { STRMAP_INIT, NULL, NULL, NULL };
	size_t n = (size_t)c->npages + 1;
	nb.next_alike = malloc(n * sizeof(int));
	nb.num = malloc(n * sizeof(section_number));
	nb.has = calloc(n, sizeof(bool));
	char key[160];
	int count = 0;
	if (!nb.next_alike || !nb.num || !nb.has) {
		o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory for the pages' numbering");
		goto out;
	}
	/* from the last page to the first, so that each chain runs in page order */
	for (int pi = c->npages - 1; pi >= 0; pi--) {
		const page *p = &c->pages[pi];
		nb.next_alike[pi] = -1;
		if ((p->type != ATLAS_TYPE_EXPLAINER && p->type != ATLAS_TYPE_GUIDE) || !p->title ||
		    !title_number(&nb.num[pi], p->title))
			continue;
		const section_number *sn = &nb.num[pi];
		size_t len = number_key(key, sizeof(key), sn->kind, sn->parts, sn->nparts);
		int added = 0;
		int *slot = strmap_put(&nb.by_key, key, len, pi, &added);
		if (!slot) {
			o->rc = atlas_error_set(o->err, ATLAS_ENOMEM, "out of memory for the pages' numbering");
			goto out;
		}
		if (!added) {
			nb.next_alike[pi] = *slot;
			*slot = pi;
		}
		nb.has[pi] = true;
		count++;
	}
	/* a lone numbered title is no numbering */
	for (int pi = 0; pi < c->npages && count > 1 && !o->rc; pi++) {
		if (!nb.has[pi])
			continue;
		const section_number *sn = &nb.num[pi];
		int parts[NUMBER_MAX_PARTS + 1];
		memcpy(parts, sn->parts, sizeof(sn->parts));
		/* what comes next in reading order: the first part within (9.1 after Chapter 9), else
		 * the next at this depth (9.2 after 9.1), else after the enclosing one (10 after 9.9) */
		bool found = false;
		if (sn->nparts < NUMBER_MAX_PARTS) {
			parts[sn->nparts] = 1;
			found = emit_to(o, c, id_of, &nb, pi, sn->kind, parts, sn->nparts + 1, 1.0);
		}
		int first_found = found ? sn->nparts + 1 : 0;
		for (int d = sn->nparts; d >= 1 && !found; d--) {
			memcpy(parts, sn->parts, sizeof(sn->parts));
			parts[d - 1]++;
			if ((found = emit_to(o, c, id_of, &nb, pi, sn->kind, parts, d, 1.0)))
				first_found = d;
		}
		/* and the next at this depth when something within came first: a chapter's route
		 * goes on to the next chapter */
		if (first_found == sn->nparts + 1) {
			memcpy(parts, sn->parts, sizeof(sn->parts));
			parts[sn->nparts - 1]++;
			emit_to(o, c, id_of, &nb, pi, sn->kind, parts, sn->nparts, 0.5);
		}
	}
out:
	strmap_free(&nb.by_key);
	free(nb.next_alike);
	free(nb.num);
	free(nb.has);
}
