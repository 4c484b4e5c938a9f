/* error.c - recording an error code with its message. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

int atlas_error_set(atlas_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return code;
}

void atlas_error_clear(atlas_error *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
