/* utf8.h - UTF-8 validation and cleaning, one implementation for the corpus reader, the query
 * parser, the serializer and the server. */
#ifndef ATLAS_UTF8_H
#define ATLAS_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s[0..n) (n > 0), or 0 when it is invalid: overlong, a
 * surrogate, beyond U+10FFFF, or cut short. */
size_t atlas_utf8_len(const unsigned char *s, size_t n);

/* Byte offset of the first invalid sequence in s[0..n), or -1 when all of it is valid (an offset,
 * not an error code). */
long atlas_utf8_invalid_at(const char *s, size_t n);

/* Makes s[0..n) valid UTF-8 text in place, by the rule for readers' input: every byte of an
 * invalid sequence and every control byte (NUL included) becomes a space. */
void atlas_utf8_clean(char *s, size_t n);

/* Number of words in the NUL-terminated text s: runs of bytes above ASCII space, so a UTF-8
 * sequence counts as part of the word it sits in. Never fails; an empty text has 0. */
int atlas_text_words(const char *s);

#endif
