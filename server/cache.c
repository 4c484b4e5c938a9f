/* cache.c - the LRU response cache: a chained hash table over a doubly linked recency list,
 * bounded by entries and by bytes. */
#include "cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* what an entry costs beyond its key and body: the entry itself and the allocator's headers */
#define ENTRY_OVERHEAD (sizeof(entry) + 48)

typedef struct entry {
	struct entry *prev, *next; /* recency list, most recent after the sentinel */
	struct entry *chain;       /* next entry of the same bucket */
	uint64_t hash;
	char *key;
	size_t klen;
	cache_value v;             /* v.body owned by the entry */
	size_t cost;               /* klen + v.len + ENTRY_OVERHEAD */
} entry;

struct atlas_cache {
	pthread_mutex_t lock;
	entry lru;                 /* sentinel of the recency list */
	entry **buckets;
	size_t nbuckets;           /* power of two, at least twice the capacity */
	size_t count, capacity;
	size_t bytes, max_bytes;   /* sum of the entries' cost, its bound */
	unsigned long hits, misses, evictions;
};

/* Returns the FNV-1a 64 hash of s[0..n). Never fails. */
uint64_t cache_hash(const void *s, size_t n)
{
	const unsigned char *p = s;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* Creates a cache (NULL for a capacity or max_bytes of 0). Returns 0 or ATLAS_ENOMEM; *out owns
 * the cache. */
int cache_new(atlas_cache **out, size_t capacity, size_t max_bytes)
{
	*out = NULL;
	if (capacity == 0 || max_bytes == 0)
		return 0;
	atlas_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return ATLAS_ENOMEM;
	c->nbuckets = 16;
	while (c->nbuckets < capacity * 2)
		c->nbuckets *= 2;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets)
		goto free_cache;
	if (pthread_mutex_init(&c->lock, NULL))
		goto free_buckets;
	c->capacity = capacity;
	c->max_bytes = max_bytes;
	c->lru.prev = c->lru.next = &c->lru;
	*out = c;
	return 0;
free_buckets:
	free(c->buckets);
free_cache:
	free(c);
	return ATLAS_ENOMEM;
}

/* Unlinks e from the recency list. */
static void lru_unlink(entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

/* Links e as the most recently used entry of c. */
static void lru_push(atlas_cache *c, entry *e)
{
	e->prev = &c->lru;
	e->next = c->lru.next;
	c->lru.next->prev = e;
	c->lru.next = e;
}

/* Returns the address of the bucket slot that points at key's entry (or at NULL when absent). */
static entry **find_slot(atlas_cache *c, const char *key, size_t klen, uint64_t h)
{
	entry **slot = &c->buckets[h & (c->nbuckets - 1)];
	for (; *slot; slot = &(*slot)->chain) {
		const entry *e = *slot;
		if (e->hash == h && e->klen == klen && memcmp(e->key, key, klen) == 0)
			break;
	}
	return slot;
}

/* Frees an entry that is linked nowhere any more. */
static void entry_free(entry *e)
{
	free(e->key);
	free(e->v.body);
	free(e);
}

/* Removes e from its bucket and the recency list and frees it; c->lock held. */
static void remove_entry(atlas_cache *c, entry *e)
{
	entry **slot = find_slot(c, e->key, e->klen, e->hash);
	*slot = e->chain;
	lru_unlink(e);
	c->bytes -= e->cost;
	entry_free(e);
	c->count--;
}

/* Looks key up; see cache.h. Returns 0 (a hit, out->body malloc'd), ATLAS_ENOTFOUND or
 * ATLAS_ENOMEM. */
int cache_get(atlas_cache *c, const char *key, size_t klen, cache_value *out)
{
	if (!c)
		return ATLAS_ENOTFOUND;
	uint64_t h = cache_hash(key, klen);
	int rc = ATLAS_ENOTFOUND;
	pthread_mutex_lock(&c->lock);
	entry *e = *find_slot(c, key, klen, h);
	if (!e) {
		c->misses++;
		goto unlock;
	}
	*out = e->v;
	out->body = malloc(e->v.len ? e->v.len : 1);
	if (!out->body) {
		rc = ATLAS_ENOMEM;
		goto unlock;
	}
	memcpy(out->body, e->v.body, e->v.len);
	lru_unlink(e);
	lru_push(c, e);
	c->hits++;
	rc = 0;
unlock:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Stores a copy of v under key; see cache.h. Returns 0 or ATLAS_ENOMEM. */
int cache_put(atlas_cache *c, const char *key, size_t klen, const cache_value *v)
{
	if (!c)
		return 0;
	size_t cost = klen + v->len + ENTRY_OVERHEAD;
	if (cost > c->max_bytes / 8)
		return 0;
	/* copy outside the lock: the lock only guards the links */
	entry *n = calloc(1, sizeof(*n));
	if (!n)
		return ATLAS_ENOMEM;
	n->key = malloc(klen ? klen : 1);
	n->v = *v;
	n->v.body = malloc(v->len ? v->len : 1);
	if (!n->key || !n->v.body) {
		entry_free(n);
		return ATLAS_ENOMEM;
	}
	memcpy(n->key, key, klen);
	memcpy(n->v.body, v->body, v->len);
	n->klen = klen;
	n->cost = cost;
	n->hash = cache_hash(key, klen);
	pthread_mutex_lock(&c->lock);
	entry *old = *find_slot(c, key, klen, n->hash);
	if (old)
		remove_entry(c, old);
	while (c->count && (c->count >= c->capacity || c->bytes + cost > c->max_bytes)) {
		remove_entry(c, c->lru.prev);
		c->evictions++;
	}
	entry **slot = &c->buckets[n->hash & (c->nbuckets - 1)];
	n->chain = *slot;
	*slot = n;
	lru_push(c, n);
	c->count++;
	c->bytes += cost;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Drops every entry; c->lock taken inside. Never fails. */
void cache_clear(atlas_cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	while (c->lru.next != &c->lru)
		remove_entry(c, c->lru.next);
	pthread_mutex_unlock(&c->lock);
}

/* Copies the counters into *out. Never fails. */
void cache_get_stats(atlas_cache *c, cache_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	out->entries = c->count;
	out->capacity = c->capacity;
	out->bytes = c->bytes;
	out->max_bytes = c->max_bytes;
	out->hits = c->hits;
	out->misses = c->misses;
	out->evictions = c->evictions;
	pthread_mutex_unlock(&c->lock);
}

/* Frees the cache; no other thread may use it any more. Accepts NULL. */
void cache_free(atlas_cache *c)
{
	if (!c)
		return;
	cache_clear(c);
	pthread_mutex_destroy(&c->lock);
	free(c->buckets);
	free(c);
}
