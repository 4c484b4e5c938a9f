/* strmap.c - an open-addressing (linear probing) hash map from strings to int values. */
#include "strmap.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Each key's copy is its length (KEY_LEN_BYTES, unaligned), then the key and a NUL. */
#define KEY_LEN_BYTES sizeof(uint32_t)

size_t strmap_key_len(const char *key)
{
	uint32_t n;
	memcpy(&n, key - KEY_LEN_BYTES, sizeof(n));
	return n;
}

/* The slot of key[0..n) (hash h) in m, or the empty slot where it would go. */
static strmap_entry *find_slot(const strmap *m, const char *key, size_t n, unsigned h)
{
	size_t i = (size_t)h & (m->cap - 1);
	for (;;) {
		strmap_entry *e = &m->slots[i];
		if (!e->key || (e->hash == h && strmap_key_len(e->key) == n && memcmp(e->key, key, n) == 0))
			return e;
		i = (i + 1) & (m->cap - 1);
	}
}

/* The empty slot where a key of hash h goes in m, which does not hold it. */
static strmap_entry *free_slot(const strmap *m, unsigned h)
{
	size_t i = (size_t)h & (m->cap - 1);
	while (m->slots[i].key)
		i = (i + 1) & (m->cap - 1);
	return &m->slots[i];
}

int *strmap_getn(const strmap *m, const char *key, size_t n)
{
	if (!m->cap)
		return NULL;
	strmap_entry *e = find_slot(m, key, n, (unsigned)hash_bytes(key, n));
	return e->key ? &e->value : NULL;
}

int *strmap_get(const strmap *m, const char *key)
{
	return strmap_getn(m, key, strlen(key));
}

/* Doubles m's slots (64 at first), placing its entries again. Returns 0, or ATLAS_ENOMEM when out
 * of memory (m then as it was). */
static int grow(strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	strmap_entry *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return ATLAS_ENOMEM;
	strmap old = *m;
	m->slots = slots;
	m->cap = cap;
	for (size_t i = 0; i < old.cap; i++) {
		if (old.slots[i].key)
			*free_slot(m, old.slots[i].hash) = old.slots[i];
	}
	free(old.slots);
	return 0;
}

int *strmap_put(strmap *m, const char *key, size_t n, int init, int *added)
{
	if (n > UINT32_MAX - KEY_LEN_BYTES - 1)
		return NULL; /* no length to keep it by */
	if ((m->count + 1) * 2 > m->cap && grow(m))
		return NULL;
	unsigned h = (unsigned)hash_bytes(key, n);
	strmap_entry *e = find_slot(m, key, n, h);
	if (added)
		*added = !e->key;
	if (!e->key) {
		size_t size = KEY_LEN_BYTES + n + 1;
		char *copy = m->arena ? atlas_arena_alloc_bytes(m->arena, size) : malloc(size);
		if (!copy)
			return NULL;
		uint32_t len = (uint32_t)n;
		memcpy(copy, &len, sizeof(len));
		e->key = copy + KEY_LEN_BYTES;
		memcpy(e->key, key, n);
		e->key[n] = '\0';
		e->value = init;
		e->hash = h;
		m->count++;
	}
	return &e->value;
}

void strmap_free(strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap && !m->arena; i++)
		if (m->slots[i].key)
			free(m->slots[i].key - KEY_LEN_BYTES);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}
