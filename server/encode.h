/* encode.h - response compression: the encoding a client's Accept-Encoding asks for, and gzip
 * (zlib) or br (libbrotli) bodies. */
#ifndef ATLAS_ENCODE_H
#define ATLAS_ENCODE_H

#include <stddef.h>

enum { ENC_IDENTITY, ENC_GZIP, ENC_BR };

/* Bodies shorter than this are sent as they are: compression would save less than a packet. */
#define ENCODE_MIN_BYTES 512

/* Returns the encoding to answer with for the Accept-Encoding header value h (NULL: identity):
 * br when it is accepted with the highest quality among those known, else gzip, else identity.
 * "*" stands for any encoding not named; a quality of 0 refuses. Never fails. */
int encode_choose(const char *h);

/* Returns the Content-Encoding token of enc ("gzip", "br"), NULL for identity. */
const char *encode_name(int enc);

/* Compresses in[0..n) with enc (ENC_GZIP or ENC_BR) into a malloc'd *out of *outlen bytes (the
 * caller frees it). Returns 0, or ATLAS_ENOMEM (or ATLAS_EINVAL for an unknown enc) with *out
 * NULL. */
int encode_body(int enc, const char *in, size_t n, char **out, size_t *outlen);

#endif
