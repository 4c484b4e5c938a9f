/* stopwords.c - a sorted list of English stop words, looked up by binary search. */
#include "stopwords.h"

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

static int cmp(const void *key, const void *elem)
{
	return strcmp((const char *)key, *(const char *const *)elem);
}

bool atlas_is_stopword(const char *w, size_t n)
{
	char buf[16];
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, w, n);
	buf[n] = '\0';
	return bsearch(buf, words, sizeof(words) / sizeof(words[0]), sizeof(words[0]), cmp) != NULL;
}
