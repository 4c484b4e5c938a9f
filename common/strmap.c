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

static strmap_entry *find_slot(const strmap *m, const char *key, size_t n, unsigned h)
{
	size_t i = (size_t)h & (m->cap - 1);
	for (;;) {
		strmap_entry *e = &m->slots[i];
		if (!e->key || (e->hash == h && e->len == n && memcmp(e->key, key, n) == 0))
			return e;
		i = (i + 1) & (m->cap - 1);
	}
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
		if (old.slots[i].key) {
			strmap_entry *e = find_slot(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash);
			*e = old.slots[i];
		}
	}
	free(old.slots);
	return 0;
}

int *strmap_put(strmap *m, const char *key, size_t n, int init, int *added)
{
	if ((m->count + 1) * 2 > m->cap && grow(m))
		return NULL;
	unsigned h = (unsigned)hash_bytes(key, n);
	strmap_entry *e = find_slot(m, key, n, h);
	if (added)
		*added = !e->key;
	if (!e->key) {
		e->key = m->arena ? atlas_arena_alloc(m->arena, n + 1) : malloc(n + 1);
		if (!e->key)
			return NULL;
		memcpy(e->key, key, n);
		e->key[n] = '\0';
		e->value = init;
		e->hash = h;
		e->len = (unsigned)n;
		m->count++;
	}
	return &e->value;
}

void strmap_free(strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap && !m->arena; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}
