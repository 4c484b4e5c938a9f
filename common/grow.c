/* grow.c - arrays grown by doubling. */
#include "grow.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int atlas_resize(void *items, size_t n, size_t elem)
{
	if (elem && n > SIZE_MAX / elem)
		return ATLAS_ENOMEM;
	void *old;
	memcpy(&old, items, sizeof(old));
	size_t bytes = n * elem;
	void *p = realloc(old, bytes ? bytes : 1);
	if (!p)
		return ATLAS_ENOMEM;
	memcpy(items, &p, sizeof(p));
	return 0;
}

int atlas_grown_cap(int cap, int first)
{
	if (cap <= 0)
		return first > 0 ? first : 1;
	return cap > INT_MAX / 2 ? -1 : cap * 2;
}

int atlas_grow(void *items, int *cap, int n, size_t elem, int first)
{
	if (n < *cap)
		return 0;
	int c = atlas_grown_cap(*cap, first);
	if (c < 0 || atlas_resize(items, (size_t)c, elem))
		return ATLAS_ENOMEM;
	*cap = c;
	return 0;
}
