/* test_anchor.c - common/anchor.h: headings give the anchors GitHub gives them (ASCII letters and
 * digits lowercased, spaces to '-', '-' and '_' kept, other ASCII dropped, non-ASCII letters kept,
 * non-ASCII punctuation and symbols dropped), appended to what the buffer holds. usage: test_anchor
 */
#include <stdio.h>
#include <string.h>

#include "anchor.h"
#include "check.h"

/* Checks that heading's anchor is want. */
static void expect(const char *heading, const char *want)
{
	strbuf a = STRBUF_INIT;
	anchor_of(&a, heading);
	char what[160];
	snprintf(what, sizeof(what), "anchor of \"%s\"", heading);
	CHECK_STR(strbuf_str(&a), want, what);
	strbuf_free(&a);
}

int main(void)
{
	expect("Hello World", "hello-world");
	expect("What's new?", "whats-new");
	expect("C++ and C#", "c-and-c");
	expect("1. Numbers first", "1-numbers-first");
	expect("snake_case and kebab-case", "snake_case-and-kebab-case");
	expect("  two  spaces ", "--two--spaces-");
	expect("jax.jit(f)(x)", "jaxjitfx");
	expect("Set up / tear_down: Über 2×", "set-up--tear_down-Über-2");
	expect("Ärger mit Straße", "Ärger-mit-straße");
	expect("日本語の見出し", "日本語の見出し");
	expect("“Quoted” — a dash", "quoted--a-dash");
	expect("emoji 🔥 fire", "emoji--fire");
	expect("¿Qué pasa?", "qué-pasa");
	expect("a\xc2\xa0"
	       "b",
	       "ab"); /* a no-break space is punctuation */
	expect("", "");
	expect("!!!", "");
	expect("cut \xc3", "cut-"); /* a lead byte without its continuation, at the end */

	/* anchor_of appends to what out holds */
	strbuf a = STRBUF_INIT;
	strbuf_puts(&a, "page#");
	anchor_of(&a, "The Leader");
	CHECK_STR(strbuf_str(&a), "page#the-leader", "anchor_of appends");
	strbuf_free(&a);

	/* headings that differ only in case and punctuation share an anchor (the indexer numbers a
	 * page's repeated ones; tests/query/test_query.py checks that through an index) */
	strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	anchor_of(&x, "Set-up?");
	anchor_of(&y, "SET UP");
	CHECK(strcmp(strbuf_str(&x), strbuf_str(&y)) == 0,
	      "\"Set-up?\" and \"SET UP\" share \"%s\"", strbuf_str(&x));
	strbuf_free(&x);
	strbuf_free(&y);
	return check_done("test_anchor");
}
