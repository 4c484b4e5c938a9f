/* fuzz_batch.c - arbitrary bytes as the body of POST /api/batch, through the server's own batch
 * parser (batch_parse) and dispatch (batch_answer), parameter mapping (params_from_json, search_request_parse,
 * next_request_parse) and answers (answer_search, answer_next) on the engine over the fuzzing index.
 *
 * Property: a body is refused as a whole with a 400 (code and message), or read into 1 to
 * BATCH_MAX items, each refused alone with a 4xx or answered without a 5xx in JSON of valid UTF-8;
 * nothing crashes or leaks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "batch.h"
#include "fuzz.h"
#include "fuzz_server.h"

/* batch_compute_fn of the target: fn on the engine ctx, without a cache. */
static void compute(void *ctx, const strbuf *norm, answer_fn fn, const void *args, reply *rp, long *count)
{
	(void)norm;
	fn(ctx, args, rp, count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	batch b;
	param_error pe;
	if (batch_parse(&b, (const char *)data, size, &pe)) {
		if (pe.status != 400 || !pe.code || !pe.msg[0] || b.n || b.items)
			fuzz_fail(data, size, "a refused batch: status %d code %s \"%s\", %d items", pe.status,
				  pe.code ? pe.code : "(none)", pe.msg, b.n);
		fuzz_outcome("batch", "%d %s: %s", pe.status, pe.code, pe.msg);
		return 0;
	}
	if (b.n < 1 || b.n > BATCH_MAX)
		fuzz_fail(data, size, "a batch of %d items", b.n);
	atlas_engine *e = fuzz_engine();
	for (int i = 0; i < b.n; i++) {
		const batch_item *it = &b.items[i];
		if (it->kind == BATCH_REFUSED && (it->pe.status != 400 || !it->pe.code || !it->pe.msg[0]))
			fuzz_fail(data, size, "item %d refused with status %d code %s", i, it->pe.status,
				  it->pe.code ? it->pe.code : "(none)");
		reply rp;
		long count;
		memset(&rp, 0, sizeof(rp));
		batch_answer(it, compute, e, &rp, &count);
		fuzz_check_reply(data, size, "batch", &rp);
	}
	batch_free(&b);
	return 0;
}
