/* grow.h - arrays grown by doubling: the one place their reallocation, its overflow check and its
 * failure are written. */
#ifndef ATLAS_GROW_H
#define ATLAS_GROW_H

#include <stddef.h>

/* Resizes the array whose pointer is at items (the address of a pointer to any element type, the
 * pointer NULL for none yet) to n elements of elem bytes. Returns 0, or ATLAS_ENOMEM (n * elem
 * too large, or out of memory) with the array as it was. */
int atlas_resize(void *items, size_t n, size_t elem);

/* Makes room in the array at items (as atlas_resize's), of *cap elements of elem bytes, for one
 * more after its first n: when n has reached *cap, it is resized to twice *cap, or to first (1 or
 * more) when *cap is 0, and *cap set. Returns 0, or ATLAS_ENOMEM with the array and *cap as they
 * were. */
int atlas_grow(void *items, int *cap, int n, size_t elem, int first);

/* Returns the capacity atlas_grow gives an array of cap elements (twice cap, first when 0), or -1
 * when that is more than an int holds; for arrays that grow together to one capacity. */
int atlas_grown_cap(int cap, int first);

#endif
