/* fair.c - fairness between clients: who a request's client is, the engine requests in flight
 * per client, and which clients sent expensive requests lately. A client that did is held to
 * FAIR_HEAVY_INFLIGHT engine request in flight and to a FAIR_SHARE-th of a worker's time (the
 * rest answered 429), so that one client sending the worst queries at full speed takes a small
 * share of one worker, not all of them, while
 * clients whose requests are ordinary are never limited. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "error.h"
#include "fair.h"
#include "framing.h"

#define BUCKETS 1024

typedef struct client_node {
	struct client_node *next;
	char key[48];
	int inflight;
	double heavy_until;          /* CLOCK_MONOTONIC seconds; 0: not heavy */
	double rest_until;           /* a heavy client starts no engine request before this */
} client_node;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static client_node *buckets[BUCKETS];

/* Returns CLOCK_MONOTONIC in seconds. */
static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void fair_free(void)
{
	for (int i = 0; i < BUCKETS; i++)
		while (buckets[i]) {
			client_node *n = buckets[i];
			buckets[i] = n->next;
			free(n);
		}
}

/* Writes the printable form of addr into out (cap bytes); "" when it is neither IPv4 nor IPv6.
 * An IPv4-mapped IPv6 address is written as its IPv4 address. */
static void addr_text(const struct sockaddr *addr, char *out, size_t cap)
{
	out[0] = '\0';
	if (!addr)
		return;
	if (addr->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)addr)->sin_addr, out, (socklen_t)cap);
	} else if (addr->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)addr)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a))
			inet_ntop(AF_INET, a->s6_addr + 12, out, (socklen_t)cap);
		else
			inet_ntop(AF_INET6, a, out, (socklen_t)cap);
	}
}

/* Copies the last comma-separated entry of xff, trimmed, into out when it is a numeric IPv4 or
 * IPv6 address (written canonically). Returns whether it was. */
static bool last_forwarded(const char *xff, char *out, size_t cap)
{
	const char *start = strrchr(xff, ',');
	start = start ? start + 1 : xff;
	while (*start == ' ' || *start == '\t')
		start++;
	size_t n = strcspn(start, " \t");
	char buf[64];
	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, start, n);
	buf[n] = '\0';
	unsigned char bin[16];
	if (inet_pton(AF_INET, buf, bin) == 1)
		return inet_ntop(AF_INET, bin, out, (socklen_t)cap) != NULL;
	if (inet_pton(AF_INET6, buf, bin) == 1)
		return inet_ntop(AF_INET6, bin, out, (socklen_t)cap) != NULL;
	return false;
}

void fair_client_of(struct MHD_Connection *c, fair_client *out)
{
	out->key[0] = '\0';
	const union MHD_ConnectionInfo *ai =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *peer = ai ? ai->client_addr : NULL;
	if (peer && framing_is_proxy(peer)) {
		const char *xff = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Forwarded-For");
		if (xff && last_forwarded(xff, out->key, sizeof(out->key)))
			return;
	}
	addr_text(peer, out->key, sizeof(out->key));
}

/* Returns the bucket of key. */
static unsigned bucket_of(const char *key)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h % BUCKETS;
}

/* Returns the node of key (lock held), creating it when create is set (NULL when out of memory
 * or absent). */
static client_node *find(const char *key, bool create)
{
	client_node **pp = &buckets[bucket_of(key)];
	for (; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->key, key) == 0)
			return *pp;
	if (!create)
		return NULL;
	client_node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	snprintf(n->key, sizeof(n->key), "%s", key);
	*pp = n;
	return n;
}

/* Frees n when it keeps nothing (lock held). */
static void maybe_drop(client_node *n, double now)
{
	if (n->inflight > 0 || n->heavy_until > now)
		return;
	client_node **pp = &buckets[bucket_of(n->key)];
	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	free(n);
}

bool fair_enter(const fair_client *k)
{
	if (!k->key[0])
		return true;
	double now = mono_now();
	bool ok = true;
	pthread_mutex_lock(&lock);
	client_node *n = find(k->key, true);
	if (n) {
		if (n->heavy_until > now &&
		    (n->inflight >= FAIR_HEAVY_INFLIGHT || n->rest_until > now))
			ok = false;
		else
			n->inflight++;
		if (!ok)
			maybe_drop(n, now);
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

void fair_leave(const fair_client *k, bool heavy, double seconds)
{
	if (!k->key[0])
		return;
	double now = mono_now();
	pthread_mutex_lock(&lock);
	client_node *n = find(k->key, false);
	if (n) {
		if (n->inflight > 0)
			n->inflight--;
		if (heavy) {
			double rest = (FAIR_SHARE - 1) * (seconds > 0 ? seconds : 0);
			n->heavy_until = now + FAIR_HEAVY_S;
			n->rest_until = now + (rest < FAIR_HEAVY_S ? rest : FAIR_HEAVY_S);
		}
		maybe_drop(n, now);
	}
	pthread_mutex_unlock(&lock);
}

bool fair_client_gone(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *fi =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!fi)
		return false;
	struct pollfd p = { fi->connect_fd, POLLRDHUP, 0 };
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}
