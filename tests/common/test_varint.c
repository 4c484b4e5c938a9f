/* test_varint.c - common/varint.h: values round-trip at every length boundary, each in the number
 * of bytes its bits need; a varint cut short, longer than five bytes or beyond 32 bits is refused.
 * usage: test_varint */
#include <limits.h>
#include <string.h>

#include "check.h"
#include "error.h"
#include "varint.h"

/* Reads n bytes b as one varint; returns get's result, *v the value, *used the bytes consumed. */
static int read_one(const unsigned char *b, size_t n, unsigned *v, size_t *used)
{
	const unsigned char *p = b;
	int rc = atlas_varint_get(&p, b + n, v);
	*used = (size_t)(p - b);
	return rc;
}

int main(void)
{
	static const struct {
		unsigned v;
		size_t len;
	} cases[] = {
	    {0, 1},	    {1, 1},	      {127, 1},	     {128, 2},	   {300, 2},
	    {16383, 2},	    {16384, 3},	      {2097151, 3},  {2097152, 4}, {268435455, 4},
	    {268435456, 5}, {0x7fffffffu, 5}, {UINT_MAX, 5},
	};
	strbuf out = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&out);
		CHECK(atlas_varint_put(&out, cases[i].v) == 0, "put %u", cases[i].v);
		CHECK(out.len == cases[i].len, "%u takes %zu bytes, not %zu", cases[i].v,
		      cases[i].len, out.len);
		unsigned v = 0;
		size_t used = 0;
		int rc = read_one((const unsigned char *)out.buf, out.len, &v, &used);
		CHECK(rc == 0 && v == cases[i].v && used == out.len,
		      "%u comes back (got %u from %zu bytes)", cases[i].v, v, used);
	}

	/* the bytes themselves: 7 bits a byte, low bits first, the high bit on all but the last */
	strbuf_reset(&out);
	atlas_varint_put(&out, 300);
	CHECK(out.len == 2 && (unsigned char)out.buf[0] == 0xac && out.buf[1] == 0x02,
	      "300 is ac 02");
	strbuf_reset(&out);
	atlas_varint_put(&out, UINT_MAX);
	static const unsigned char max[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
	CHECK(out.len == 5 && memcmp(out.buf, max, 5) == 0, "UINT_MAX is ff ff ff ff 0f");

	/* several in a row, each read from where the last ended */
	strbuf_reset(&out);
	for (unsigned v = 0; v < 100000; v = v * 3 + 1)
		atlas_varint_put(&out, v);
	const unsigned char *p = (const unsigned char *)out.buf, *end = p + out.len;
	int wrong = 0;
	for (unsigned v = 0; v < 100000; v = v * 3 + 1) {
		unsigned got = ~0u;
		wrong += atlas_varint_get(&p, end, &got) != 0 || got != v;
	}
	CHECK(wrong == 0 && p == end, "a run of varints reads back in order, to the end");

	/* bounds */
	unsigned v = 12345;
	size_t used = 0;
	CHECK(read_one((const unsigned char *)"", 0, &v, &used) == ATLAS_EINVAL, "nothing to read: refused");
	static const unsigned char cut[] = {0x80};
	CHECK(read_one(cut, 1, &v, &used) == ATLAS_EINVAL && used <= 1,
	      "a continuation byte at the end: refused");
	static const unsigned char cut4[] = {0xff, 0xff, 0xff, 0xff};
	CHECK(read_one(cut4, 4, &v, &used) == ATLAS_EINVAL, "four continuation bytes and the end: refused");
	static const unsigned char over[] = {0xff, 0xff, 0xff, 0xff, 0x10};
	CHECK(read_one(over, 5, &v, &used) == ATLAS_EINVAL, "a fifth byte past 32 bits (0x10): refused");
	static const unsigned char six[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
	CHECK(read_one(six, 6, &v, &used) == ATLAS_EINVAL && used <= 6, "six bytes: refused");
	CHECK(v == 12345, "a refused varint leaves the value alone");
	static const unsigned char padded[] = {0x81, 0x80, 0x00};
	CHECK(read_one(padded, 3, &v, &used) == 0 && v == 1 && used == 3,
	      "a value padded with zero groups reads as the value");
	strbuf_free(&out);
	return check_done("test_varint");
}
