/* fair.h - fairness between clients: who a request's client is (its peer, or the address a
 * trusted proxy names), and at most one expensive request in flight for a client that sent
 * expensive ones lately. */
#ifndef ATLAS_FAIR_H
#define ATLAS_FAIR_H

#include <stdbool.h>
#include <microhttpd.h>

#define FAIR_HEAVY_S 2.0         /* a client stays "heavy" this long after an expensive answer */
#define FAIR_HEAVY_INFLIGHT 1    /* engine requests in flight for a heavy client, at most */
#define FAIR_RETRY_AFTER "1"     /* seconds, the Retry-After of a 429 */
#define FAIR_SHARE 10            /* a heavy client's engine requests take at most 1/FAIR_SHARE of
				    a worker: after one that took t seconds, the next waits
				    (FAIR_SHARE - 1) t, at most FAIR_HEAVY_S */

/* A client, as fair_enter found it (copied into the request). */
typedef struct fair_client {
	char key[48];                /* the address, printable ("" when unknown: never limited) */
} fair_client;

/* Frees the table, after the daemon stopped. */
void fair_free(void);

/* Fills *out with the client of c: the peer's address, or for a peer that is a --trust-proxy
 * address, the last address of its X-Forwarded-For (the one the proxy appended) when that is a
 * numeric address. Never fails (an unknown client has key ""). */
void fair_client_of(struct MHD_Connection *c, fair_client *out);

/* Starts an engine request of client k. Returns false (nothing counted) when k is heavy and has
 * FAIR_HEAVY_INFLIGHT such requests in flight already, or its last one ended less than
 * (FAIR_SHARE - 1) times its duration ago: answer 429. */
bool fair_enter(const fair_client *k);

/* Ends a request started by fair_enter that took seconds; heavy: it was expensive (the work
 * budget or the deadline cut it), which marks the client heavy for FAIR_HEAVY_S and holds its
 * next engine request back for (FAIR_SHARE - 1) * seconds. */
void fair_leave(const fair_client *k, bool heavy, double seconds);

/* Returns whether the client of c has closed its side of the connection (sent FIN or reset), so
 * that an answer would reach no one. */
bool fair_client_gone(struct MHD_Connection *c);

#endif
