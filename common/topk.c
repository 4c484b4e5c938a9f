/* topk.c - partial selection of the best elements: a bounded heap, then a sort of the few kept. */
#include "topk.h"

#include <stdlib.h>
#include <string.h>

static void swap(unsigned char *a, unsigned char *b, size_t size)
{
	unsigned char t[64];
	memcpy(t, a, size);
	memcpy(a, b, size);
	memcpy(b, t, size);
}

/* Sifts element i down the heap a[0..k) whose root is the worst of the best kept. */
static void sift_down(unsigned char *a, size_t k, size_t i, size_t size, atlas_cmp_fn cmp, void *ctx)
{
	for (;;) {
		size_t worst = i, l = 2 * i + 1, r = l + 1;
		if (l < k && cmp(a + l * size, a + worst * size, ctx) > 0)
			worst = l;
		if (r < k && cmp(a + r * size, a + worst * size, ctx) > 0)
			worst = r;
		if (worst == i)
			return;
		swap(a + i * size, a + worst * size, size);
		i = worst;
	}
}

void atlas_best_first(void *base, size_t n, size_t k, size_t size, atlas_cmp_fn cmp, void *ctx)
{
	unsigned char *a = base;
	if (n < 2 || size > 64)
		return;
	if (k >= n / 2) {
		qsort_r(a, n, size, cmp, ctx);
		return;
	}
	if (k == 0)
		return;
	for (size_t i = k / 2; i-- > 0;)
		sift_down(a, k, i, size, cmp, ctx);
	for (size_t i = k; i < n; i++)
		if (cmp(a + i * size, a, ctx) < 0) {
			swap(a, a + i * size, size);
			sift_down(a, k, 0, size, cmp, ctx);
		}
	qsort_r(a, k, size, cmp, ctx);
}
