/* next_rows.h - a page's read-next candidates packed in one blob (next_candidates.rows), written
 * by the indexer's signals thread, read by the query side. */
#ifndef ATLAS_NEXT_ROWS_H
#define ATLAS_NEXT_ROWS_H

#include "strbuf.h"

/* The signals, by name and by the code a packed row holds. */
#define SIG_GUIDE_NEXT "guide_next"     /* detail: "guide id|step number" */
#define SIG_GUIDE_PREV "guide_prev"
#define SIG_GUIDE_START "guide_start"   /* from a guide to its first step */
#define SIG_LINK_OUT "link_out"         /* the source page links to the candidate */
#define SIG_LINK_IN "link_in"           /* the candidate links to the source page */
#define SIG_BUILDS_ON "builds_on"       /* the candidate lists the source as a prerequisite */
#define SIG_PREREQ "prereq"             /* the source lists the candidate as a prerequisite */
#define SIG_TOPIC "same_topic"          /* detail: the shared topic: "#" and its page's doc id, or
					   its path when it has no page */
#define SIG_TOPIC_START "topic_member"  /* from a topic page to a member explainer; detail: likewise */
#define SIG_SIMILAR "similar"           /* weight: cosine; detail: the shared terms, each the id
					   of its similar_terms row as a varint */
#define SIG_GRAPH "graph"               /* weight: personalized PageRank, normalized to the best */
#define SIG_GUIDE_AFTER "guide_after"   /* the candidate comes 2 or more steps after the source in a
					   guide; weight: 1 / the distance; detail as guide_next */
#define SIG_LIST_NEXT "list_next"       /* the candidate is the next page a page's links name after
					   the source (a table of contents, a topic's list);
					   detail: "that page's doc id|position", then "|m" when
					   the two links are not both in a list's entries (the
					   page's prose names them in that order) */
#define SIG_TOPIC_NEXT "topic_next"     /* the candidate is next to the source in a shared topic's
					   order (priority, then path); detail as same_topic */
#define SIG_TOPIC_AFTER "topic_after"   /* the candidate comes right after the source in a shared
					   topic's order by path (or, for pages in no topic, in
					   their folder's): a reading order where the site's file
					   names follow it (ch01, ch02); detail as same_topic, or
					   the folder page's title */
#define SIG_PAGE_NEXT "page_next"       /* the page a built site's page names as its next (rel=next,
					   or a link marked next): the site's own reading order */
#define SIG_NUMBER_NEXT "number_next"   /* the candidate's title is numbered after the source's
					   (9.2 or 9.1.1 after 9.1, 9.1 after Chapter 9;
					   indexer/numbering.c); detail: the source's number as
					   its title writes it ("9.1", "Chapter 9") */

enum {
	NEXT_GUIDE_NEXT,
	NEXT_GUIDE_PREV,
	NEXT_GUIDE_START,
	NEXT_LINK_OUT,
	NEXT_LINK_IN,
	NEXT_BUILDS_ON,
	NEXT_PREREQ,
	NEXT_TOPIC,
	NEXT_TOPIC_START,
	NEXT_SIMILAR,
	NEXT_GRAPH,
	NEXT_GUIDE_AFTER,
	NEXT_LIST_NEXT,
	NEXT_TOPIC_NEXT,
	NEXT_NUMBER_NEXT,
	NEXT_TOPIC_AFTER,
	NEXT_PAGE_NEXT,
	NEXT_NSIGNALS
};

/* The read-next blend's weights, one per signal code, then one for the context (the candidates of
 * the pages read just before this one) and the factors of the page types suggested (topic pages,
 * guides; an explainer's is 1): a candidate's score is the sum over its rows of weight[signal] x
 * the row's weight, times its type's factor. The indexer fits them on the site's guides and
 * stores them (table next_fit, by next_weight_name); query/rank.h holds the defaults. */
#define NEXT_W_CONTEXT_INDEX NEXT_NSIGNALS
#define NEXT_W_TYPE_TOPIC_INDEX (NEXT_NSIGNALS + 1)
#define NEXT_W_TYPE_GUIDE_INDEX (NEXT_NSIGNALS + 2)
#define NEXT_NWEIGHTS (NEXT_NSIGNALS + 3)

/* How far a guide_after row reaches (steps after the source), and how many of the pages read
 * last lend their candidates as context, each half as much as the one read after it. */
#define NEXT_AFTER_SPAN 3
#define NEXT_CONTEXT_PAGES 3

/* The name of signal code (NULL for a code this build does not know). */
const char *next_signal_name(int code);

/* The name of weight k of the blend (a signal's name, "context", "type_topic", "type_guide"), or
 * NULL for a k out of range. */
const char *next_weight_name(int k);

/* The index of a weight's name in the blend, or -1 for a name this build does not know. */
int next_weight_code(const char *name);

/* The code of a signal name, or -1 for a name this build does not know: not an error code. */
int next_signal_code(const char *name);

/* One candidate of a page. */
typedef struct next_row {
	int dst;            /* the candidate's doc id */
	int signal;         /* its code; one this build does not know is read as it is */
	double weight;
	const char *detail; /* ndetail bytes, not NUL-terminated */
	int ndetail;
} next_row;

/* Appends r to out, a page's packed rows: a byte of signal code and flags (weight 1, a detail),
 * the doc id as a varint, the weight (an IEEE double, least significant byte first; not stored
 * when 1), the detail's length as a varint and its bytes (when not empty). Returns 0, ATLAS_ENOMEM, or ATLAS_EINVAL for a code or doc id out of range. */
int next_rows_put(strbuf *out, const next_row *r);

/* Reads the row at *p (before end) into r, its detail pointing into the blob, and advances *p.
 * Returns 1, 0 at the end of the blob, or ATLAS_EINVAL when the blob is malformed (a field running
 * past its end, a doc id out of range). */
int next_rows_get(const unsigned char **p, const unsigned char *end, next_row *r);

#endif
