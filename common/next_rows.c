/* next_rows.c - the packed read-next candidates of a page: one blob, rows in the order made. */
#include "next_rows.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "varint.h"

/* The first byte of a row: the signal code in the low bits, and two flags. */
#define ROW_CODE_MASK 0x3fu
#define ROW_WEIGHT_ONE 0x40u /* the weight is 1 and not stored */
#define ROW_DETAIL 0x80u     /* a detail follows */

static const char *const names[NEXT_NSIGNALS] = {
	[NEXT_GUIDE_NEXT] = SIG_GUIDE_NEXT, [NEXT_GUIDE_PREV] = SIG_GUIDE_PREV,
	[NEXT_GUIDE_START] = SIG_GUIDE_START, [NEXT_LINK_OUT] = SIG_LINK_OUT,
	[NEXT_LINK_IN] = SIG_LINK_IN, [NEXT_BUILDS_ON] = SIG_BUILDS_ON,
	[NEXT_PREREQ] = SIG_PREREQ, [NEXT_TOPIC] = SIG_TOPIC,
	[NEXT_TOPIC_START] = SIG_TOPIC_START, [NEXT_SIMILAR] = SIG_SIMILAR,
	[NEXT_GRAPH] = SIG_GRAPH, [NEXT_GUIDE_AFTER] = SIG_GUIDE_AFTER,
	[NEXT_LIST_NEXT] = SIG_LIST_NEXT, [NEXT_TOPIC_NEXT] = SIG_TOPIC_NEXT,
	[NEXT_TOPIC_AFTER] = SIG_TOPIC_AFTER,
	[NEXT_NUMBER_NEXT] = SIG_NUMBER_NEXT, [NEXT_PAGE_NEXT] = SIG_PAGE_NEXT,
};

const char *next_signal_name(int code)
{
	return code >= 0 && code < NEXT_NSIGNALS ? names[code] : NULL;
}

const char *next_weight_name(int k)
{
	switch (k) {
	case NEXT_W_CONTEXT_INDEX:
		return "context";
	case NEXT_W_TYPE_TOPIC_INDEX:
		return "type_topic";
	case NEXT_W_TYPE_GUIDE_INDEX:
		return "type_guide";
	default:
		return next_signal_name(k);
	}
}

int next_weight_code(const char *name)
{
	for (int k = 0; k < NEXT_NWEIGHTS; k++)
		if (strcmp(next_weight_name(k), name) == 0)
			return k;
	return -1;
}

int next_signal_code(const char *name)
{
	for (int k = 0; k < NEXT_NSIGNALS; k++)
		if (strcmp(names[k], name) == 0)
			return k;
	return -1;
}

int next_rows_put(strbuf *out, const next_row *r)
{
	if (r->signal < 0 || (unsigned)r->signal > ROW_CODE_MASK || r->dst < 0 || r->ndetail < 0)
		return ATLAS_EINVAL;
	unsigned char head = (unsigned char)r->signal;
	if (r->weight == 1.0)
		head |= ROW_WEIGHT_ONE;
	if (r->ndetail > 0)
		head |= ROW_DETAIL;
	int rc = strbuf_append(out, (const char *)&head, 1);
	if (!rc)
		rc = atlas_varint_put(out, (unsigned)r->dst);
	if (!rc && !(head & ROW_WEIGHT_ONE)) {
		/* the double's bits, least significant byte first */
		uint64_t bits;
		memcpy(&bits, &r->weight, sizeof(bits));
		char b[8];
		for (int k = 0; k < 8; k++)
			b[k] = (char)(bits >> (8 * k));
		rc = strbuf_append(out, b, sizeof(b));
	}
	if (!rc && (head & ROW_DETAIL)) {
		rc = atlas_varint_put(out, (unsigned)r->ndetail);
		if (!rc)
			rc = strbuf_append(out, r->detail, (size_t)r->ndetail);
	}
	return rc ? ATLAS_ENOMEM : 0;
}

int next_rows_get(const unsigned char **p, const unsigned char *end, next_row *r)
{
	if (*p >= end)
		return 0;
	unsigned head = *(*p)++, dst, n = 0;
	if (atlas_varint_get(p, end, &dst) || dst > INT_MAX)
		return ATLAS_EINVAL;
	r->signal = (int)(head & ROW_CODE_MASK);
	r->dst = (int)dst;
	r->weight = 1.0;
	if (!(head & ROW_WEIGHT_ONE)) {
		if (end - *p < 8)
			return ATLAS_EINVAL;
		uint64_t bits = 0;
		for (int k = 0; k < 8; k++)
			bits |= (uint64_t)(*p)[k] << (8 * k);
		memcpy(&r->weight, &bits, sizeof(bits));
		*p += 8;
	}
	if ((head & ROW_DETAIL) && (atlas_varint_get(p, end, &n) || n > (unsigned)(end - *p)))
		return ATLAS_EINVAL;
	r->detail = (const char *)*p;
	r->ndetail = (int)n;
	*p += n;
	return 1;
}
