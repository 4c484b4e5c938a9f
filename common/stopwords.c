/* stopwords.c - a list of English stop words, looked up by binary search over their bytes. */
#include "stopwords.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const words[] = {
	"a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
	"because", "been", "before", "being", "between", "both", "but", "by", "can", "could", "did",
	"do", "does", "doing", "done", "each", "explain", "for", "from", "get", "gets", "had", "has",
	"have", "having", "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is",
	"it", "its", "just", "me", "more", "most", "my", "no", "not", "of", "on", "one", "only", "or",
	"other", "our", "out", "over", "she", "should", "so", "some", "such", "than", "that", "the",
	"their", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too",
	"under", "up", "us", "use", "very", "was", "way", "we", "were", "what", "when", "where",
	"whether", "which", "while", "who", "whom", "why", "will", "with", "work", "works", "would",
	"you", "your",
};

#define NWORDS (sizeof(words) / sizeof(words[0]))

/* The words as 64-bit keys (their bytes, zero-padded; none is longer than 8), sorted: a look-up
 * is a few integer comparisons instead of a string comparison a step (the read-next pass asks
 * for every token of the corpus). */
static uint64_t keys[NWORDS];
static pthread_once_t keys_once = PTHREAD_ONCE_INIT;

static uint64_t key_of(const char *w, size_t n)
{
	uint64_t k = 0;
	memcpy(&k, w, n);
	return k;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void make_keys(void)
{
	for (size_t i = 0; i < NWORDS; i++)
		keys[i] = key_of(words[i], strlen(words[i]));
	qsort(keys, NWORDS, sizeof(keys[0]), cmp_key);
}

bool atlas_is_stopword(const char *w, size_t n)
{
	if (n == 0 || n > sizeof(uint64_t) || memchr(w, '\0', n))
		return false;
	pthread_once(&keys_once, make_keys);
	uint64_t k = key_of(w, n);
	size_t lo = 0, hi = NWORDS;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (keys[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < NWORDS && keys[lo] == k;
}
