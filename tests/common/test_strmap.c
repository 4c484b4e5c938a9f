/* test_strmap.c - common/strmap.h: keys inserted are found with their values, absent ones are
 * not; the map grows past its first table keeping every key; keys whose home slots collide are
 * each found; keys are copies, in the map's arena when it has one. usage: test_strmap */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "strmap.h"

/* The number of keys of m stored away from their home slot (hash & (cap - 1)): where linear
 * probing had to step past another key. */
static size_t displaced(const strmap *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key && (m->slots[i].hash & (m->cap - 1)) != i)
			n++;
	return n;
}

int main(void)
{
	strmap m = STRMAP_INIT;
	CHECK(strmap_get(&m, "x") == NULL, "an empty map finds nothing");
	CHECK(strmap_getn(&m, "", 0) == NULL, "an empty map finds no empty key");

	/* insert and look up */
	int added = -1;
	int *v = strmap_put(&m, "raft", 4, 7, &added);
	CHECK(v && *v == 7 && added == 1, "a new key is added with its initial value");
	*v = 42;
	int *again = strmap_put(&m, "raft", 4, 9, &added);
	CHECK(again == v && *again == 42 && added == 0,
	      "putting a key again gives its value, unchanged");
	CHECK_INT(m.count, 1, "keys after one key put twice");
	CHECK(strmap_get(&m, "raft") == v, "get finds the key");
	CHECK(strmap_get(&m, "Raft") == NULL, "keys are compared byte for byte");
	CHECK(strmap_get(&m, "raf") == NULL && strmap_get(&m, "rafts") == NULL,
	      "a prefix or an extension of a key is another key");
	CHECK(strmap_getn(&m, "rafts", 4) == v, "getn reads only its n bytes");
	strmap_put(&m, "", 0, 3, &added);
	CHECK(added == 1 && strmap_get(&m, "") && *strmap_get(&m, "") == 3,
	      "the empty string is a key");
	strmap_put(&m, "a\0b", 3, 5, &added);
	CHECK(added == 1 && strmap_getn(&m, "a\0b", 3) && *strmap_getn(&m, "a\0b", 3) == 5 &&
		  strmap_get(&m, "a") == NULL,
	      "a key of n bytes may hold a NUL");

	/* the key is the map's copy */
	char buf[16];
	strcpy(buf, "paxos");
	strmap_put(&m, buf, 5, 11, NULL);
	strcpy(buf, "xxxxx");
	CHECK(strmap_get(&m, "paxos") && *strmap_get(&m, "paxos") == 11 &&
		  strmap_get(&m, "xxxxx") == NULL,
	      "changing the caller's bytes after put changes nothing");
	strmap_free(&m);
	CHECK(m.slots == NULL && m.cap == 0 && m.count == 0 && strmap_get(&m, "raft") == NULL,
	      "a freed map is empty and usable");

	/* growth: 20,000 keys, each with its own value; the table a power of two, at most half full
	 */
	enum { N = 20000 };
	char key[32];
	size_t caps_seen = 0, last_cap = 0;
	for (int i = 0; i < N; i++) {
		int n = snprintf(key, sizeof(key), "key-%d", i * 7919);
		int *p = strmap_put(&m, key, (size_t)n, i, &added);
		if (!p || !added) {
			CHECK(0, "key %d added", i);
			break;
		}
		if (m.cap != last_cap) {
			caps_seen++;
			last_cap = m.cap;
		}
	}
	CHECK_INT(m.count, N, "keys after 20,000 distinct puts");
	CHECK(m.cap && (m.cap & (m.cap - 1)) == 0, "capacity %zu is a power of two", m.cap);
	CHECK(m.count * 2 <= m.cap, "at most half full: %zu of %zu", m.count, m.cap);
	CHECK(caps_seen >= 8, "the table grew %zu times", caps_seen);
	int wrong = 0;
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "key-%d", i * 7919);
		int *p = strmap_get(&m, key);
		if (!p || *p != i)
			wrong++;
		snprintf(key, sizeof(key), "key-%d", i * 7919 + 1);
		if (strmap_get(&m, key)) /* never a multiple of 7919: absent */
			wrong++;
	}
	CHECK_INT(wrong, 0, "keys found with a wrong value, or absent keys found");
	size_t stepped = displaced(&m);
	CHECK(stepped > 0, "some keys share a home slot (%zu displaced), and all are found",
	      stepped);
	strmap_free(&m);

	/* a small table where collisions are all but certain: 32 keys in 64 slots, several
	 * displaced */
	for (int i = 0; i < 32; i++) {
		int n = snprintf(key, sizeof(key), "%c%d", 'a' + i % 26, i);
		strmap_put(&m, key, (size_t)n, i * 3, NULL);
	}
	CHECK_INT(m.cap, 64, "capacity of a table of 32 keys");
	stepped = displaced(&m);
	wrong = 0;
	for (int i = 0; i < 32; i++) {
		snprintf(key, sizeof(key), "%c%d", 'a' + i % 26, i);
		int *p = strmap_get(&m, key);
		wrong += !p || *p != i * 3;
	}
	CHECK(stepped > 0, "32 keys in 64 slots: %zu stored past their home slot", stepped);
	CHECK_INT(wrong, 0, "keys of the small table found with a wrong value");
	strmap_free(&m);

	/* keys in an arena: the same answers; freeing the map leaves the keys to the arena */
	atlas_arena arena = ATLAS_ARENA_INIT(4096);
	strmap am = STRMAP_INIT;
	am.arena = &arena;
	for (int i = 0; i < 1000; i++) {
		int n = snprintf(key, sizeof(key), "term%d", i);
		strmap_put(&am, key, (size_t)n, -i, NULL);
	}
	wrong = 0;
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "term%d", i);
		int *p = strmap_get(&am, key);
		wrong += !p || *p != -i;
	}
	CHECK_INT(wrong, 0, "arena map: keys found with a wrong value");
	CHECK(arena.head != NULL, "arena map: the keys are in the arena");
	strmap_free(&am);
	atlas_arena_free(&arena);
	strmap_free(NULL);
	return check_done("test_strmap");
}
