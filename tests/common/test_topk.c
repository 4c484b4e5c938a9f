/* test_topk.c - common/topk.h: atlas_best_first puts the k best first, in the order a full sort
 * gives, and keeps every element (the rest in any order), for k from 0 to past n, on both of its
 * paths (the heap when k is small against n, the sort otherwise). usage: test_topk */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "topk.h"

/* An element as the engine ranks them: a score, ties broken by id (a total order). */
typedef struct {
	double score;
	int id;
	int pad;
} hit;

/* Best first: the higher score, then the lower id; ctx counts the calls. */
static int cmp_hit(const void *a, const void *b, void *ctx)
{
	const hit *x = a, *y = b;
	(*(long *)ctx)++;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* By id alone, for comparing two arrays as sets. */
static int cmp_id(const void *a, const void *b)
{
	const hit *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Runs atlas_best_first over n pseudo-random hits (few distinct scores, so that ties are many)
 * and checks the result against qsort of the same hits. */
static void check_case(size_t n, size_t k, unsigned seed)
{
	hit *a = malloc((n ? n : 1) * sizeof(*a));
	hit *want = malloc((n ? n : 1) * sizeof(*a));
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		a[i].score = (double)((seed >> 16) % 37) / 4.0;
		a[i].id = (int)i;
		a[i].pad = 0;
	}
	memcpy(want, a, n * sizeof(*a));
	long calls = 0;
	qsort_r(want, n, sizeof(*a), cmp_hit, &calls);
	calls = 0;
	atlas_best_first(a, n, k, sizeof(*a), cmp_hit, &calls);
	size_t top = k < n ? k : n;
	size_t wrong = 0;
	for (size_t i = 0; i < top; i++)
		wrong += a[i].id != want[i].id || a[i].score != want[i].score;
	CHECK(wrong == 0, "n %zu, k %zu: %zu of the first %zu differ from a full sort", n, k, wrong,
	      top);
	/* every element is still there, each once */
	qsort(a, n, sizeof(*a), cmp_id);
	size_t lost = 0;
	for (size_t i = 0; i < n; i++)
		lost += a[i].id != (int)i;
	CHECK(lost == 0, "n %zu, k %zu: every element kept once (%zu out of place)", n, k, lost);
	CHECK(n < 2 || k == 0 || calls > 0, "n %zu, k %zu: the comparison got its context", n, k);
	free(a);
	free(want);
}

int main(void)
{
	static const size_t ns[] = {0, 1, 2, 3, 10, 99, 1000, 5000};
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		size_t n = ns[i];
		size_t ks[] = {0, 1, 2, 5, 10, n / 2 ? n / 2 - 1 : 0, n / 2, n - (n > 0), n, n + 5};
		for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++)
			check_case(n, ks[j], (unsigned)(n * 31 + j));
	}

	/* the heap path compares far fewer times than a sort would need for the whole array */
	enum { BIG = 20000 };
	hit *a = malloc(BIG * sizeof(*a));
	for (int i = 0; i < BIG; i++)
		a[i] = (hit){(double)((i * 7919) % BIG), i, 0};
	long calls = 0;
	atlas_best_first(a, BIG, 10, sizeof(*a), cmp_hit, &calls);
	int in_order = 1;
	for (int i = 0; i < 10; i++)
		in_order &= a[i].score == (double)(BIG - 1 - i);
	CHECK(in_order, "the 10 best of 20,000 distinct scores, best first");
	CHECK(calls < 3L * BIG, "10 of 20,000 by a heap: %ld comparisons", calls);

	/* k == 0 below the sort threshold leaves the array as it was */
	for (int i = 0; i < BIG; i++)
		a[i] = (hit){(double)(i % 13), i, 0};
	atlas_best_first(a, BIG, 0, sizeof(*a), cmp_hit, &calls);
	int same = 1;
	for (int i = 0; i < BIG; i++)
		same &= a[i].id == i;
	CHECK(same, "k 0: nothing moved");
	free(a);
	return check_done("test_topk");
}
