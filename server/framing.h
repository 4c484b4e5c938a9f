/* framing.h - strict HTTP/1.1 framing and the receive deadline, checked on the bytes that
 * libmicrohttpd reads from each connection, and the per-address connection limit. */
#ifndef ATLAS_FRAMING_H
#define ATLAS_FRAMING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

/* What the checks made of a request's head (line and header fields). */
typedef enum framing_verdict {
	FRAMING_OK = 0,
	FRAMING_BAD,                 /* malformed framing: answer 400 and close */
	FRAMING_UNSUPPORTED,         /* a transfer coding other than chunked: 501 and close */
	FRAMING_NUL_PATH,            /* the path holds an encoded NUL (%00): 400 and close */
} framing_verdict;

/* The limits, set once before the daemon starts. */
typedef struct framing_config {
	double receive_timeout_s;    /* a request's bytes, head and body, within this of its first */
	unsigned per_address;        /* connections from one address (0: no limit) */
	const struct sockaddr_storage *proxies;  /* addresses exempt from per_address */
	int nproxies;
} framing_config;

/* Sets the limits (cfg is copied; proxies must outlive the daemon). Returns 0, or ATLAS_ENOMEM. */
int framing_init(const framing_config *cfg);

/* Frees what framing_init allocated, after the daemon stopped. */
void framing_free(void);

/* MHD_OPTION_NOTIFY_CONNECTION: starts checking a new connection's bytes, stops at its close. */
void framing_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode toe);

/* MHD's accept policy: refuses a connection from an address that has per_address open already
 * (proxies exempt). Returns MHD_YES or MHD_NO. */
enum MHD_Result framing_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen);

/* Returns the verdict of the oldest request head of c not yet taken, with *why set to a static
 * explanation, and marks it taken. Call once per request, at the handler's first call. A
 * connection that is not tracked is FRAMING_OK. */
framing_verdict framing_take(struct MHD_Connection *c, const char **why);

/* Returns whether addr is one of the configured proxies. */
bool framing_is_proxy(const struct sockaddr *addr);

#endif
