/* arena.c - bump allocation in chained blocks, freed all at once. */
#include "arena.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

struct atlas_arena_block {
	atlas_arena_block *next;
	alignas(max_align_t) unsigned char data[];
};

/* n bytes at the given alignment (a power of two) from the head block, or from a new one. */
static void *bump(atlas_arena *a, size_t n, size_t align)
{
	size_t at = (a->used + align - 1) & ~(align - 1);
	if (!a->head || at + n > a->cap) {
		size_t cap = n > a->block ? n : a->block;
		atlas_arena_block *b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		a->head = b;
		a->cap = cap;
		at = 0;
	}
	a->used = at + n;
	return a->head->data + at;
}

void *atlas_arena_alloc(atlas_arena *a, size_t n)
{
	return bump(a, n, alignof(max_align_t));
}

void *atlas_arena_alloc_bytes(atlas_arena *a, size_t n)
{
	return bump(a, n, 1);
}

char *atlas_arena_strndup(atlas_arena *a, const char *s, size_t n)
{
	char *p = bump(a, n + 1, 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void atlas_arena_free(atlas_arena *a)
{
	if (!a)
		return;
	while (a->head) {
		atlas_arena_block *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	a->used = a->cap = 0;
}
