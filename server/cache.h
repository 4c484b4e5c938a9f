/* cache.h - an LRU cache of response bodies bounded by entries and by bytes, shared by the worker
 * threads under a mutex. */
#ifndef ATLAS_CACHE_H
#define ATLAS_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct atlas_cache atlas_cache;

/* One cached response. */
typedef struct cache_value {
	int status;    /* HTTP status */
	long count;    /* results in the body, -1 when not known */
	char *body;    /* the bytes (not NUL-terminated for the cache's purposes) */
	size_t len;
} cache_value;

/* Counters for /metrics. */
typedef struct cache_stats {
	size_t entries;
	size_t capacity;
	size_t bytes;      /* keys, bodies and per-entry overhead held */
	size_t max_bytes;
	unsigned long hits;
	unsigned long misses;
	unsigned long evictions;
} cache_stats;

/* FNV-1a 64 of s[0..n): the hash the cache keys by, also used for ETags. */
uint64_t cache_hash(const void *s, size_t n);

/* Creates a cache of at most capacity entries holding at most max_bytes (keys, bodies and a fixed
 * overhead per entry) into *out. A capacity or max_bytes of 0 sets *out to NULL, a disabled cache
 * that every function below accepts. Returns 0 or ATLAS_ENOMEM. */
int cache_new(atlas_cache **out, size_t capacity, size_t max_bytes);

/* Looks key[0..klen) up. On a hit fills *out with a malloc'd copy of the body (the caller frees
 * out->body) and returns 0; returns ATLAS_ENOTFOUND on a miss (or a disabled cache) and
 * ATLAS_ENOMEM when the copy cannot be made. */
int cache_get(atlas_cache *c, const char *key, size_t klen, cache_value *out);

/* Stores a copy of v under key[0..klen), replacing an entry of the same key and evicting least
 * recently used entries until both bounds hold. An entry larger than an eighth of max_bytes is not
 * stored (it would empty the cache for one answer). Returns 0 (also for a disabled cache or an
 * entry too large) or ATLAS_ENOMEM, in which case the cache is left as it was. */
int cache_put(atlas_cache *c, const char *key, size_t klen, const cache_value *v);

/* Drops every entry (on an index swap). */
void cache_clear(atlas_cache *c);

/* Fills *out with the current counters (zeros for a disabled cache). */
void cache_get_stats(atlas_cache *c, cache_stats *out);

/* Frees the cache and its entries. Accepts NULL. */
void cache_free(atlas_cache *c);

#endif
