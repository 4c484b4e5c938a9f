/* test_arena.c - common/arena.h: allocations are aligned for any object, never overlap, survive
 * later allocations; a request larger than a block gets its own; strndup copies and terminates;
 * a freed arena is empty and can be used again. usage: test_arena */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "check.h"

/* The blocks chained in a (the head first). Counted through the block's first field, the link. */
static int blocks(const atlas_arena *a)
{
	int n = 0;
	for (void *b = a->head; b; b = *(void **)b)
		n++;
	return n;
}

int main(void)
{
	atlas_arena a = ATLAS_ARENA_INIT(1024);
	enum { N = 2000 };
	unsigned char *ptrs[N];
	size_t lens[N];
	unsigned seed = 7;
	int misaligned = 0;
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		lens[i] = 1 + (seed >> 16) % 200;
		ptrs[i] = atlas_arena_alloc(&a, lens[i]);
		if (!ptrs[i]) {
			CHECK(0, "allocation %d of %zu bytes", i, lens[i]);
			return check_done("test_arena");
		}
		misaligned += ((uintptr_t)ptrs[i] % alignof(max_align_t)) != 0;
		memset(ptrs[i], i & 0xff, lens[i]);
	}
	CHECK_INT(misaligned, 0, "allocations not aligned for max_align_t");
	int damaged = 0;
	for (int i = 0; i < N; i++)
		for (size_t k = 0; k < lens[i]; k++)
			damaged += ptrs[i][k] != (unsigned char)(i & 0xff);
	CHECK_INT(damaged, 0, "bytes overwritten by later allocations");
	int nblocks = blocks(&a);
	CHECK(nblocks > 100 && nblocks < N, "2,000 small allocations in %d blocks of 1 KiB",
	      nblocks);

	/* a request larger than a block: a block of its own, its bytes all usable */
	unsigned char *big = atlas_arena_alloc(&a, 10000);
	CHECK(big != NULL, "an allocation larger than a block");
	if (big) {
		memset(big, 0xab, 10000);
		CHECK(big[0] == 0xab && big[9999] == 0xab,
		      "the large allocation's bytes are usable");
	}
	CHECK_INT(blocks(&a), nblocks + 1, "blocks after the large allocation");
	CHECK(ptrs[0][0] == 0 && ptrs[N - 1][0] == (unsigned char)((N - 1) & 0xff),
	      "earlier allocations untouched by the large one");

	/* strndup: a copy of n bytes, terminated, not aligned beyond what it needs */
	const char *src = "consistent hashing";
	char *s = atlas_arena_strndup(&a, src, 10);
	CHECK_STR(s, "consistent", "strndup of 10 bytes");
	char *e = atlas_arena_strndup(&a, src, 0);
	CHECK_STR(e, "", "strndup of 0 bytes");
	char *t = atlas_arena_strndup(&a, "ab", 2);
	CHECK(t && s && t != s && t != e, "each strndup its own copy");
	CHECK_STR(s, "consistent", "the first copy after more copies");

	/* freed: empty, then usable again */
	atlas_arena_free(&a);
	CHECK(a.head == NULL && a.used == 0 && a.cap == 0, "a freed arena holds no block");
	void *p = atlas_arena_alloc(&a, 16);
	CHECK(p != NULL && blocks(&a) == 1, "a freed arena allocates again");
	atlas_arena_free(&a);
	atlas_arena_free(NULL);
	return check_done("test_arena");
}
