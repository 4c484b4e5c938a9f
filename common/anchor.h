/* anchor.h - a heading's anchor, as GitHub makes it. */
#ifndef ATLAS_ANCHOR_H
#define ATLAS_ANCHOR_H

#include "strbuf.h"

/* Appends to out the anchor of heading (NUL-terminated): ASCII letters and digits lowercased,
 * spaces to '-', '-' and '_' kept, other ASCII dropped; non-ASCII letters kept, non-ASCII
 * punctuation and symbols dropped. A page's second heading of the same anchor gets "-1" after it,
 * its third "-2" (the indexer numbers them). */
void anchor_of(strbuf *out, const char *heading);

#endif
