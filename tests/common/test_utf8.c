/* test_utf8.c - common/utf8.h: every kind of valid sequence is taken whole, every kind of invalid
 * one (overlong, surrogate, beyond U+10FFFF, cut, a stray continuation byte) is refused; the first
 * invalid byte is found at any offset, past runs of ASCII too; cleaning leaves valid text without
 * control bytes, of the same length, and changes nothing valid. usage: test_utf8 */
#include <string.h>

#include "check.h"
#include "utf8.h"

/* Checks atlas_utf8_len of the NUL-terminated bytes s (their length given as n). */
static void expect_len(const char *s, size_t want, const char *what)
{
	CHECK_INT(atlas_utf8_len((const unsigned char *)s, strlen(s)), want, what);
}

int main(void)
{
	expect_len("a", 1, "ASCII");
	expect_len("\x7f", 1, "DEL is one byte (a control byte, but valid)");
	expect_len("\xc2\x80", 2, "U+0080, the smallest of two bytes");
	expect_len("\xc3\xa9", 2, "é");
	expect_len("\xdf\xbf", 2, "U+07FF");
	expect_len("\xe0\xa0\x80", 3, "U+0800, the smallest of three bytes");
	expect_len("\xe2\x82\xac", 3, "€");
	expect_len("\xed\x9f\xbf", 3, "U+D7FF, just below the surrogates");
	expect_len("\xee\x80\x80", 3, "U+E000, just above them");
	expect_len("\xef\xbf\xbf", 3, "U+FFFF");
	expect_len("\xf0\x90\x80\x80", 4, "U+10000, the smallest of four bytes");
	expect_len("\xf0\x9f\x94\xa5", 4, "🔥");
	expect_len("\xf4\x8f\xbf\xbf", 4, "U+10FFFF, the largest");
	expect_len("\xc0\x80", 0, "overlong NUL");
	expect_len("\xc1\xbf", 0, "overlong U+007F");
	expect_len("\xe0\x9f\xbf", 0, "overlong U+07FF");
	expect_len("\xf0\x8f\xbf\xbf", 0, "overlong U+FFFF");
	expect_len("\xed\xa0\x80", 0, "surrogate U+D800");
	expect_len("\xed\xbf\xbf", 0, "surrogate U+DFFF");
	expect_len("\xf4\x90\x80\x80", 0, "U+110000");
	expect_len("\xf5\x80\x80\x80", 0, "lead byte F5");
	expect_len("\xf8\x88\x80\x80\x80", 0, "a five-byte form");
	expect_len("\xff", 0, "FF");
	expect_len("\x80", 0, "a continuation byte alone");
	expect_len("\xc3\x28", 0, "a lead byte before ASCII");
	expect_len("\xe2\x82", 0, "a three-byte sequence cut after two");
	CHECK_INT(atlas_utf8_len((const unsigned char *)"\xf0\x9f\x94\xa5", 3), 0,
		  "a four-byte sequence with only three bytes given");

	/* the first invalid byte, wherever it is */
	CHECK_INT(atlas_utf8_invalid_at("", 0), -1, "empty text");
	const char *ok = "plain ASCII, then é, € and 🔥, then ASCII again for more than eight bytes";
	CHECK_INT(atlas_utf8_invalid_at(ok, strlen(ok)), -1, "valid mixed text");
	char buf[64];
	int wrong = 0;
	for (size_t at = 0; at < 40; at++) {
		memset(buf, 'a', sizeof(buf));
		if (at % 3 == 1 && at >= 2)
			memcpy(buf + at - 2, "\xc3\xa9", 2); /* a valid character just before */
		buf[at] = (char)0xff;
		wrong += atlas_utf8_invalid_at(buf, sizeof(buf)) != (long)at;
		buf[at] = (char)0xe2; /* cut: followed by ASCII */
		wrong += atlas_utf8_invalid_at(buf, sizeof(buf)) != (long)at;
	}
	CHECK_INT(wrong, 0, "invalid bytes at offsets 0 to 39 found elsewhere");
	memset(buf, 'a', sizeof(buf));
	memcpy(buf + sizeof(buf) - 2, "\xe2\x82", 2);
	CHECK_INT(atlas_utf8_invalid_at(buf, sizeof(buf)), (long)sizeof(buf) - 2,
		  "a sequence cut by the end of the text");
	CHECK_INT(atlas_utf8_invalid_at("a\0b", 3), -1, "a NUL byte is valid UTF-8");

	/* cleaning: what readers' input becomes */
	char dirty[] = "a\0b\x01"
		       "c\x7f"
		       "d\xff"
		       "e\xc3\xa9\xed\xa0\x80"
		       "f\xe2\x82";
	size_t n = sizeof(dirty) - 1;
	atlas_utf8_clean(dirty, n);
	static const char clean[] = "a b c d e\xc3\xa9   f  ";
	CHECK(memcmp(dirty, clean, n) == 0 && sizeof(clean) - 1 == n,
	      "control and invalid bytes become spaces, one a byte: \"%.*s\"", (int)n, dirty);
	char valid[] = "déjà vu, 日本語, 🔥";
	char copy[sizeof(valid)];
	memcpy(copy, valid, sizeof(valid));
	atlas_utf8_clean(valid, sizeof(valid) - 1);
	CHECK(memcmp(valid, copy, sizeof(valid)) == 0,
	      "valid text without control bytes is unchanged");

	/* random bytes: clean text is valid and has no control byte */
	unsigned seed = 2024;
	char noise[257];
	int bad = 0;
	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < sizeof(noise); i++) {
			seed = seed * 1103515245u + 12345u;
			/* many lead and continuation bytes, some ASCII */
			noise[i] =
			    (char)((seed >> 16) % 3 ? 0x80 | (seed >> 8) : (seed >> 20) & 0x7f);
		}
		atlas_utf8_clean(noise, sizeof(noise));
		if (atlas_utf8_invalid_at(noise, sizeof(noise)) != -1)
			bad++;
		for (size_t i = 0; i < sizeof(noise); i++)
			if ((unsigned char)noise[i] < 0x20 || noise[i] == 0x7f) {
				bad++;
				break;
			}
	}
	CHECK_INT(bad, 0, "cleaned random texts still invalid or holding control bytes");
	return check_done("test_utf8");
}
