/* error.h - error codes and the message kept beside them, shared by every Atlas component. */
#ifndef ATLAS_ERROR_H
#define ATLAS_ERROR_H

#include <stddef.h>

/* Every fallible function returns 0 on success or one of these negative codes; the message that
 * explains the failure travels in an atlas_error filled by the function that first saw it and is
 * propagated unchanged by its callers. */
enum {
	ATLAS_OK = 0,
	ATLAS_ENOMEM = -1,   /* allocation failed */
	ATLAS_EIO = -2,      /* file or directory could not be read or written */
	ATLAS_EINVAL = -3,   /* input is malformed (corpus, query parameter, index) */
	ATLAS_ENOTFOUND = -4,/* the named thing does not exist */
	ATLAS_ESQL = -5,     /* SQLite reported an error */
	ATLAS_ESCHEMA = -6,  /* the index has another schema version or is not an Atlas index */
};

typedef struct atlas_error {
	int code;
	char msg[512];
} atlas_error;

/* Records code and a printf-style message in err (which may be NULL) and returns code. */
int atlas_error_set(atlas_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Resets err to "no error". Accepts NULL. */
void atlas_error_clear(atlas_error *err);

#endif
