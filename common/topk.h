/* topk.h - the k best elements of an array put first, in order, without sorting the rest. */
#ifndef ATLAS_TOPK_H
#define ATLAS_TOPK_H

#include <stddef.h>

/* qsort_r's comparison: negative when a comes before b. */
typedef int (*atlas_cmp_fn)(const void *a, const void *b, void *ctx);

/* Rearranges base[0..n) (elements of size bytes, at most 64) so that its k best under cmp come
 * first, sorted; the rest follow in no order. A heap of the k best met so far when k is small
 * against n, a plain sort otherwise. cmp must be a total order for the result to be deterministic. */
void atlas_best_first(void *base, size_t n, size_t k, size_t size, atlas_cmp_fn cmp, void *ctx);

#endif
