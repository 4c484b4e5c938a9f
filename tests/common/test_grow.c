/* test_grow.c - common/grow.h: atlas_grow keeps an array's elements as it doubles from its first
 * capacity, grows only when full, and refuses a size that overflows, leaving the array as it was;
 * atlas_grown_cap's doubling and its limit. usage: test_grow */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "error.h"
#include "grow.h"

typedef struct {
	int id;
	double w;
} item;

int main(void)
{
	item *v = NULL;
	int n = 0, cap = 0, grew = 0;
	for (int i = 0; i < 10000; i++) {
		int before = cap;
		if (!CHECK(atlas_grow(&v, &cap, n, sizeof(*v), 16) == 0, "growing to hold %d", i + 1))
			break;
		if (cap != before) {
			grew++;
			CHECK(before == 0 ? cap == 16 : cap == before * 2, "capacity %d after %d", cap, before);
			CHECK(n == before, "grown only when full (n %d, capacity was %d)", n, before);
		}
		v[n++] = (item){ i, i * 0.5 };
	}
	int kept = 1;
	for (int i = 0; i < n; i++)
		kept &= v[i].id == i && v[i].w == i * 0.5;
	CHECK(kept, "every element kept through the reallocations");
	CHECK(cap == 16384 && grew == 11, "10,000 elements from 16: capacity 16384 in 11 steps (%d, %d)", cap, grew);
	item *same = v;
	int capsame = cap;
	CHECK(atlas_grow(&v, &cap, n, sizeof(*v), 16) == 0 && v == same && cap == capsame,
	      "room left: nothing reallocated");
	CHECK(atlas_resize(&v, SIZE_MAX / 2, sizeof(*v)) == ATLAS_ENOMEM && v == same,
	      "an overflowing size is refused, the array kept");
	int huge = INT_MAX / 2 + 1;
	CHECK(atlas_grow(&v, &huge, huge, sizeof(*v), 16) == ATLAS_ENOMEM && huge == INT_MAX / 2 + 1 && v == same,
	      "a capacity past an int is refused, the array and its capacity kept");
	CHECK(atlas_grown_cap(0, 8) == 8 && atlas_grown_cap(8, 8) == 16 && atlas_grown_cap(INT_MAX, 8) == -1 &&
		      atlas_grown_cap(0, 0) == 1,
	      "atlas_grown_cap: first, doubling, -1 past an int, at least 1");
	free(v);
	char *s = NULL;
	CHECK(atlas_resize(&s, 0, 1) == 0 && s != NULL, "a size of 0 is an allocation of its own");
	free(s);
	return check_done("test_grow");
}
