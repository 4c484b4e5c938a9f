/* fuzz_server.h - what the HTTP fuzz targets (fuzz_http_params, fuzz_meili, fuzz_batch) share: the
 * checks of an answer the server's own code (the server library) put together. */
#ifndef ATLAS_FUZZ_SERVER_H
#define ATLAS_FUZZ_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

/* Checks reply rp of the server's answer_* for the input data: never a 5xx, a body that parses as
 * JSON, valid UTF-8 for a 200 (invalid UTF-8 echoed into an error is a soft finding), a 400 that
 * carries an error code and message. Frees rp's body. Aborts through fuzz_fail otherwise. */
void fuzz_check_reply(const uint8_t *data, size_t size, const char *what, reply *rp);

/* Checks that json (len bytes) parses and is valid UTF-8. Aborts through fuzz_fail otherwise. */
void fuzz_check_json(const uint8_t *data, size_t size, const char *what, const char *json, size_t len);

/* With ATLAS_FUZZ_VERBOSE set, prints what the server would answer (for reading saved inputs). */
void fuzz_outcome(const char *route, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
