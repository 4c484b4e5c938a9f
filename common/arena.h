/* arena.h - a bump allocator for many small objects freed together: they live in a few large
 * blocks, so freeing the arena returns whole blocks (mapped and unmapped whole when large) instead
 * of leaving thousands of small holes in the heap. */
#ifndef ATLAS_ARENA_H
#define ATLAS_ARENA_H

#include <stddef.h>

typedef struct atlas_arena_block atlas_arena_block;

typedef struct atlas_arena {
	atlas_arena_block *head; /* the block being filled; earlier ones chained behind it */
	size_t used, cap;        /* bytes of head used and usable */
	size_t block;            /* bytes of a new block (a larger request gets a block of its own) */
} atlas_arena;

#define ATLAS_ARENA_INIT(block_bytes) { NULL, 0, 0, (block_bytes) }

/* Returns n bytes aligned for any object, owned by the arena (valid until atlas_arena_free), or
 * NULL when out of memory. */
void *atlas_arena_alloc(atlas_arena *a, size_t n);

/* Returns n bytes with no alignment (for strings and bytes: no padding before them), owned by
 * the arena, or NULL when out of memory. */
void *atlas_arena_alloc_bytes(atlas_arena *a, size_t n);

/* Returns a NUL-terminated copy of s[0..n) owned by the arena, or NULL when out of memory. */
char *atlas_arena_strndup(atlas_arena *a, const char *s, size_t n);

/* Frees every block. Accepts NULL; the arena can be used again afterwards. */
void atlas_arena_free(atlas_arena *a);

#endif
