/* stopwords.h - English function words and question words that never decide a ranking. */
#ifndef ATLAS_STOPWORDS_H
#define ATLAS_STOPWORDS_H

#include <stdbool.h>
#include <stddef.h>

/* True when the folded lowercase word w[0..n) is a stop word ("the", "how", "does", "what"...). */
bool atlas_is_stopword(const char *w, size_t n);

#endif
