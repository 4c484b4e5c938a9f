/* strmap.h - an open-addressing hash map from NUL-terminated strings to int values. */
#ifndef ATLAS_STRMAP_H
#define ATLAS_STRMAP_H

#include <stddef.h>

#include "arena.h"

/* A slot: 16 bytes (a map of 50,000 words, 131,072 slots, is 2 MiB). The key's length is kept
 * in the 4 bytes before its copy, read only once the hashes agree. */
typedef struct strmap_entry {
	char *key; /* owned copy, NUL-terminated (in the map's arena when it has one); NULL marks an
		    * empty slot */
	int value;
	unsigned hash; /* of the key, compared before the key itself */
} strmap_entry;

typedef struct strmap {
	strmap_entry *slots;
	size_t cap;   /* power of two */
	size_t count;
	atlas_arena *arena; /* where keys are copied, or NULL for one allocation each */
} strmap;

#define STRMAP_INIT { NULL, 0, 0, NULL }

/* Returns a pointer to the value stored for key, or NULL when absent. */
int *strmap_get(const strmap *m, const char *key);
/* Same for a key given as n bytes (not NUL-terminated). */
int *strmap_getn(const strmap *m, const char *key, size_t n);
/* Returns a pointer to key's value, inserting it with value init when absent (*added tells which,
 * when added is not NULL). Returns NULL when out of memory. */
int *strmap_put(strmap *m, const char *key, size_t n, int init, int *added);
/* The length of key, a key of a map (strmap_entry.key): its bytes but the terminating NUL, which
 * may hold NULs of their own. */
size_t strmap_key_len(const char *key);
/* Releases all keys (but those of an arena, which go with it) and slots. Accepts NULL. */
void strmap_free(strmap *m);

#endif
