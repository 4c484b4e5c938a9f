/* framing.c - strict HTTP/1.1 framing and the receive deadline, checked on the bytes that
 * libmicrohttpd reads from each connection, and the per-address connection limit.
 *
 * libmicrohttpd 0.9.75 (Debian 12) accepts bare LF line ends, folds obs-fold lines, cuts a header
 * value at a NUL, uses the first of two Content-Length fields, reads a body of unknown coding
 * until the connection closes, and resets its idle timeout on every byte. Its
 * MHD_OPTION_STRICT_FOR_CLIENT only adds "HTTP/1.1 needs Host" and "no space in the URL". So the
 * server checks the framing itself: recv() is defined here, and libmicrohttpd's calls resolve to
 * it (an executable's definition comes first); each tracked connection's bytes pass through a
 * small state machine of RFC 9112 framing (request line, field lines, Content-Length or chunked
 * body) that records one verdict per request head, which the handler takes at its first call of
 * that request and answers 400/501 when it is not FRAMING_OK. The same state machine knows when a
 * request's first byte arrived: a request not complete within the receive timeout of it is
 * answered 408 and its connection closed, however slowly its bytes trickle. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <netinet/in.h>

#include "error.h"
#include "framing.h"

#define RING 16                  /* request heads checked ahead of the handler (pipelining) */
#define VALUE_KEEP 64            /* bytes kept of the values of Host, Content-Length, Transfer-Encoding */
#define NAME_KEEP 20             /* bytes kept of a field name (the longest one looked at is 17) */
#define ADDR_BUCKETS 1024

enum phase {
	PH_LINE,                     /* in (or before) a request line */
	PH_FIELD,                    /* in the field lines of a head */
	PH_BODY,                     /* in a Content-Length body */
	PH_CHUNK_SIZE,               /* in a chunk-size line (hex digits, then ;ext) */
	PH_CHUNK_EXT,
	PH_CHUNK_DATA,
	PH_CHUNK_CR,                 /* the CRLF after a chunk's data */
	PH_CHUNK_LF,
	PH_TRAILER,                  /* in the trailer fields after the last chunk */
	PH_PASS,                     /* no more checks on this connection (it is answered and closed) */
};

enum field { F_OTHER, F_HOST, F_LENGTH, F_CODING };

/* A connection's address, the key of the per-address count. */
typedef struct addr_key {
	int family;                  /* 0: unknown (not counted) */
	unsigned char bytes[16];
} addr_key;

/* One tracked connection: the framing state of the request being received, the verdicts of the
 * heads received but not yet taken by the handler. Touched only by the worker thread that owns
 * the connection. */
typedef struct fstate {
	int fd;
	addr_key key;
	enum phase phase;
	double started;              /* CLOCK_MONOTONIC of the current request's first byte; 0: none */
	/* the line being scanned */
	unsigned line_len;
	bool cr;                     /* the previous byte was CR: LF must follow */
	bool in_value;               /* past the colon of a field line */
	bool bad;                    /* the current head is malformed already */
	bool unsupported;            /* a transfer coding other than chunked */
	bool nul_path;
	/* the request line */
	unsigned spaces;
	bool in_target;              /* between the first and second space, before any '?' */
	int pct;                     /* 1: after '%' in the path, 2: after "%0" */
	char tail[8];                /* the request line's last 8 bytes (the version) */
	bool http11;
	/* the field being scanned */
	char name[NAME_KEEP];
	unsigned name_len;
	enum field field;
	char value[VALUE_KEEP + 1];
	unsigned value_len;
	/* the head's framing fields */
	unsigned hosts, lengths, codings;
	uint64_t length;
	bool length_bad;
	bool chunked;
	/* the body */
	uint64_t remaining;
	unsigned chunk_digits;
	/* the verdicts */
	uint8_t ring[RING];
	uint32_t heads, taken;
	bool overflow;
	bool answer_now;             /* a refused head with no answer pending before it */
} fstate;

typedef struct addr_node {
	struct addr_node *next;
	addr_key key;
	unsigned count;
} addr_node;

static framing_config config;
static _Atomic(fstate *) *table;      /* by file descriptor */
static int table_cap;
static pthread_mutex_t addr_lock = PTHREAD_MUTEX_INITIALIZER;
static addr_node *buckets[ADDR_BUCKETS];

#define TIMEOUT_BODY                                                                               \
	"{\"error\":{\"code\":\"request_timeout\",\"message\":\"the request was not received "        \
	"in time\"}}\n"
static char timeout_reply[256];       /* the 408 answer, with its length, made by framing_init */
static size_t timeout_len;

/* Returns CLOCK_MONOTONIC in seconds. */
static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int framing_init(const framing_config *cfg)
{
	config = *cfg;
	int k = snprintf(timeout_reply, sizeof(timeout_reply),
			 "HTTP/1.1 408 Request Timeout\r\n"
			 "Content-Type: application/json; charset=utf-8\r\n"
			 "Connection: close\r\nContent-Length: %zu\r\n\r\n%s",
			 sizeof(TIMEOUT_BODY) - 1, TIMEOUT_BODY);
	timeout_len = k > 0 && (size_t)k < sizeof(timeout_reply) ? (size_t)k : 0;
	struct rlimit rl;
	long cap = 65536;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		cap = (long)rl.rlim_cur;
	if (cap > (1L << 20))
		cap = 1L << 20;
	if (cap < 1024)
		cap = 1024;
	table = calloc((size_t)cap, sizeof(*table));
	if (!table)
		return ATLAS_ENOMEM;
	table_cap = (int)cap;
	return 0;
}

void framing_free(void)
{
	for (int i = 0; i < ADDR_BUCKETS; i++)
		while (buckets[i]) {
			addr_node *n = buckets[i];
			buckets[i] = n->next;
			free(n);
		}
	free(table);
	table = NULL;
	table_cap = 0;
}

/* Fills *k from addr (family 0 when it is neither IPv4 nor IPv6). An IPv4-mapped IPv6 address
 * counts as its IPv4 address. */
static void key_of(addr_key *k, const struct sockaddr *addr)
{
	memset(k, 0, sizeof(*k));
	if (!addr)
		return;
	if (addr->sa_family == AF_INET) {
		k->family = AF_INET;
		memcpy(k->bytes, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6) {
		const unsigned char *b = ((const struct sockaddr_in6 *)addr)->sin6_addr.s6_addr;
		static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (memcmp(b, mapped, 12) == 0) {
			k->family = AF_INET;
			memcpy(k->bytes, b + 12, 4);
		} else {
			k->family = AF_INET6;
			memcpy(k->bytes, b, 16);
		}
	}
}

/* Returns the bucket of k. */
static unsigned bucket_of(const addr_key *k)
{
	uint32_t h = 2166136261u ^ (uint32_t)k->family;
	for (int i = 0; i < 16; i++)
		h = (h ^ k->bytes[i]) * 16777619u;
	return h % ADDR_BUCKETS;
}

/* Returns the node of k (addr_lock held), NULL when it has no open connection. */
static addr_node *find_node(const addr_key *k)
{
	for (addr_node *n = buckets[bucket_of(k)]; n; n = n->next)
		if (n->key.family == k->family && memcmp(n->key.bytes, k->bytes, 16) == 0)
			return n;
	return NULL;
}

bool framing_is_proxy(const struct sockaddr *addr)
{
	addr_key k, p;
	key_of(&k, addr);
	if (!k.family)
		return false;
	for (int i = 0; i < config.nproxies; i++) {
		key_of(&p, (const struct sockaddr *)&config.proxies[i]);
		if (p.family == k.family && memcmp(p.bytes, k.bytes, 16) == 0)
			return true;
	}
	return false;
}

enum MHD_Result framing_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)cls;
	(void)addrlen;
	if (!config.per_address || framing_is_proxy(addr))
		return MHD_YES;
	addr_key k;
	key_of(&k, addr);
	if (!k.family)
		return MHD_YES;
	pthread_mutex_lock(&addr_lock);
	addr_node *n = find_node(&k);
	bool full = n && n->count >= config.per_address;
	pthread_mutex_unlock(&addr_lock);
	return full ? MHD_NO : MHD_YES;
}

/* Counts a connection from k in (delta 1) or out (delta -1), freeing the node at zero. Returns
 * the connections from k open now, counting this one (0 for an uncounted key, or when the node
 * could not be allocated). */
static unsigned count_address(const addr_key *k, int delta)
{
	unsigned now = 0;
	if (!k->family)
		return 0;
	pthread_mutex_lock(&addr_lock);
	addr_node *n = find_node(k);
	if (delta > 0) {
		if (!n) {
			n = calloc(1, sizeof(*n));
			if (n) {
				n->key = *k;
				unsigned b = bucket_of(k);
				n->next = buckets[b];
				buckets[b] = n;
			}
		}
		if (n)
			now = ++n->count;
	} else if (n && --n->count == 0) {
		addr_node **pp = &buckets[bucket_of(k)];
		while (*pp != n)
			pp = &(*pp)->next;
		*pp = n->next;
		free(n);
	} else if (n) {
		now = n->count;
	}
	pthread_mutex_unlock(&addr_lock);
	return now;
}

void framing_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fi =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		fstate *st = calloc(1, sizeof(*st));
		*socket_context = st;
		if (!st)
			return; /* not tracked: framing_take then answers FRAMING_BAD */
		st->fd = fi ? fi->connect_fd : -1;
		if (ai && !framing_is_proxy(ai->client_addr))
			key_of(&st->key, ai->client_addr);
		/* framing_accept's check and this count are not one step: two worker threads can both
		 * pass the check for an address one short of its limit. The count here is exact, so
		 * the connection over the limit is shut down at once (it is counted until it closes). */
		if (count_address(&st->key, 1) > config.per_address && config.per_address &&
		    st->fd >= 0)
			(void)shutdown(st->fd, SHUT_RDWR);
		if (st->fd >= 0 && st->fd < table_cap)
			atomic_store_explicit(&table[st->fd], st, memory_order_release);
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		fstate *st = *socket_context;
		*socket_context = NULL;
		if (!st)
			return;
		if (st->fd >= 0 && st->fd < table_cap)
			atomic_store_explicit(&table[st->fd], NULL, memory_order_release);
		count_address(&st->key, -1);
		free(st);
	}
}

/* Returns the explanation of verdict v. */
static const char *verdict_text(framing_verdict v)
{
	switch (v) {
	case FRAMING_BAD: return "the request's framing is malformed (RFC 9112)";
	case FRAMING_UNSUPPORTED: return "only the chunked transfer coding is supported";
	case FRAMING_NUL_PATH: return "the path holds an encoded NUL";
	default: return "";
	}
}

/* Writes the answer to a refused head on fd (400, or 501 for FRAMING_UNSUPPORTED), as the
 * handler words its errors, with Connection: close. Best effort: a full socket buffer drops it. */
static void refuse(int fd, framing_verdict v)
{
	char body[256], head[512];
	int bn = snprintf(body, sizeof(body), "{\"error\":{\"code\":\"%s\",\"message\":\"%s\"}}\n",
			  v == FRAMING_UNSUPPORTED ? "not_implemented" : "bad_request",
			  verdict_text(v));
	if (bn <= 0 || (size_t)bn >= sizeof(body))
		return;
	int hn = snprintf(head, sizeof(head),
			  "HTTP/1.1 %s\r\nContent-Type: application/json; charset=utf-8\r\n"
			  "X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
			  "Connection: close\r\nContent-Length: %d\r\n\r\n%s",
			  v == FRAMING_UNSUPPORTED ? "501 Not Implemented" : "400 Bad Request", bn,
			  body);
	if (hn > 0 && (size_t)hn < sizeof(head))
		(void)send(fd, head, (size_t)hn, MSG_NOSIGNAL | MSG_DONTWAIT);
}

framing_verdict framing_take(struct MHD_Connection *c, const char **why)
{
	const union MHD_ConnectionInfo *si =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	fstate *st = si ? si->socket_context : NULL;
	*why = "";
	if (!st) {
		*why = "the request's framing could not be checked";
		return FRAMING_BAD;
	}
	if (st->taken == st->heads) {
		/* the library found a request where the checks found none complete: a framing the
		 * two read differently is refused */
		*why = st->overflow ? "too many pipelined requests"
				    : "the request's framing is malformed";
		return FRAMING_BAD;
	}
	framing_verdict v = st->ring[st->taken % RING];
	st->taken++;
	*why = verdict_text(v);
	return v;
}

/* Returns whether ch is a tchar of RFC 9110 (field names, transfer codings). */
static bool tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
		return true;
	return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* Resets the per-request fields of st for the next request head. */
static void next_request(fstate *st)
{
	uint8_t ring[RING];
	memcpy(ring, st->ring, sizeof(ring));
	uint32_t heads = st->heads, taken = st->taken;
	int fd = st->fd;
	addr_key key = st->key;
	memset(st, 0, sizeof(*st));
	memcpy(st->ring, ring, sizeof(ring));
	st->heads = heads;
	st->taken = taken;
	st->fd = fd;
	st->key = key;
	st->phase = PH_LINE;
}

/* Returns whether value (len bytes, OWS trimmed) is exactly the coding "chunked". */
static bool is_chunked(const char *v, unsigned len)
{
	return len == 7 && strncasecmp(v, "chunked", 7) == 0;
}

/* Ends a field line of the head: counts Host, Content-Length and Transfer-Encoding. */
static void end_field(fstate *st)
{
	while (st->value_len && (st->value[st->value_len - 1] == ' ' ||
				 st->value[st->value_len - 1] == '\t'))
		st->value_len--;
	st->value[st->value_len] = '\0';
	switch (st->field) {
	case F_HOST: st->hosts++; break;
	case F_LENGTH: {
		st->lengths++;
		uint64_t n = 0;
		bool ok = st->value_len > 0 && st->value_len <= 15;
		for (unsigned i = 0; ok && i < st->value_len; i++) {
			if (st->value[i] < '0' || st->value[i] > '9')
				ok = false;
			else
				n = n * 10 + (uint64_t)(st->value[i] - '0');
		}
		if (!ok)
			st->length_bad = true;
		st->length = n;
		break;
	}
	case F_CODING: {
		st->codings++;
		/* a list of codings: only "chunked" alone is served; a list of other tokens is
		 * unsupported (501), anything else malformed (400) */
		if (is_chunked(st->value, st->value_len)) {
			st->chunked = true;
			break;
		}
		bool tokens = st->value_len > 0 && st->value_len < VALUE_KEEP;
		for (unsigned i = 0; tokens && i < st->value_len; i++) {
			unsigned char ch = (unsigned char)st->value[i];
			if (!tchar(ch) && ch != ',' && ch != ' ' && ch != '\t' && ch != ';' &&
			    ch != '=')
				tokens = false;
		}
		if (tokens)
			st->unsupported = true;
		else
			st->bad = true;
		break;
	}
	case F_OTHER: break;
	}
	st->field = F_OTHER;
	st->name_len = 0;
	st->value_len = 0;
	st->in_value = false;
}

/* Ends the head (the empty line): decides its verdict and where its body ends. */
static void end_head(fstate *st)
{
	framing_verdict v = FRAMING_OK;
	if (st->bad || (st->http11 && st->hosts != 1) || st->hosts > 1 || st->lengths > 1 ||
	    st->length_bad || st->codings > 1 || (st->codings && st->lengths))
		v = FRAMING_BAD;
	else if (st->unsupported)
		v = FRAMING_UNSUPPORTED;
	else if (st->nul_path)
		v = FRAMING_NUL_PATH;
	if (st->heads - st->taken >= RING) {
		st->overflow = true;
		st->phase = PH_PASS;
		return;
	}
	st->ring[st->heads % RING] = (uint8_t)v;
	st->heads++;
	if (v != FRAMING_OK) {
		/* answered by recv itself when no earlier request of the connection awaits its
		 * answer (the library never parses the head then); else by the handler */
		st->answer_now = st->heads - st->taken == 1;
		st->phase = PH_PASS;
		return;
	}
	if (st->chunked) {
		st->phase = PH_CHUNK_SIZE;
		st->remaining = 0;
		st->chunk_digits = 0;
	} else if (st->length) {
		st->phase = PH_BODY;
		st->remaining = st->length;
	} else {
		next_request(st);
	}
}

/* Scans one byte of a request line. */
static void line_byte(fstate *st, unsigned char ch)
{
	if (st->line_len == 0 && !st->cr && ch == '\r') {
		st->cr = true; /* an empty line before the request line, as RFC 9112 allows */
		return;
	}
	if (st->cr) {
		st->cr = false;
		if (ch != '\n') {
			st->bad = true;
		} else if (st->line_len == 0) {
			return;
		} else {
			st->http11 = memcmp(st->tail, "HTTP/1.1", 8) == 0;
			if (st->spaces != 2 || (!st->http11 && memcmp(st->tail, "HTTP/1.0", 8) != 0))
				st->bad = true;
			st->phase = PH_FIELD;
			st->line_len = 0;
			return;
		}
	}
	if (ch == '\r') {
		st->cr = true;
		st->line_len++;
		return;
	}
	if (ch < 0x20 || ch == 0x7f) {
		/* bare LF, NUL, any other control: malformed; the head is still followed to its end
		 * (the library answers a request line it cannot read by itself) */
		st->bad = true;
		if (ch == '\n') {
			st->phase = PH_FIELD;
			st->line_len = 0;
		}
		return;
	}
	st->line_len++;
	memmove(st->tail, st->tail + 1, 7);
	st->tail[7] = (char)ch;
	if (ch == ' ') {
		st->spaces++;
		st->in_target = st->spaces == 1;
		st->pct = 0;
		return;
	}
	if (!st->in_target)
		return;
	if (ch == '?') {
		st->in_target = false;
		return;
	}
	if (ch == '%')
		st->pct = 1;
	else if (st->pct == 1 && ch == '0')
		st->pct = 2;
	else if (st->pct == 2 && ch == '0')
		st->nul_path = true, st->pct = 0;
	else
		st->pct = 0;
}

/* Scans one byte of the field lines (trailer: in the trailer section, no verdict). */
static void field_byte(fstate *st, unsigned char ch, bool trailer)
{
	if (st->cr) {
		st->cr = false;
		if (ch != '\n') {
			st->bad = true;
			return;
		}
		if (st->line_len == 0) {
			if (trailer)
				next_request(st);
			else
				end_head(st);
			return;
		}
		if (!st->in_value)
			st->bad = true; /* a field line without a colon */
		end_field(st);
		st->line_len = 0;
		return;
	}
	if (ch == '\r') {
		st->cr = true;
		return;
	}
	if (ch == '\n') {
		st->bad = true; /* bare LF */
		if (st->line_len == 0) {
			if (trailer)
				next_request(st);
			else
				end_head(st);
		} else {
			end_field(st);
			st->line_len = 0;
		}
		return;
	}
	if (st->line_len == 0 && (ch == ' ' || ch == '\t'))
		st->bad = true; /* obs-fold (RFC 9112 5.2: reject) or whitespace before a name */
	st->line_len++;
	if (!st->in_value) {
		if (ch == ':') {
			if (st->name_len == 0)
				st->bad = true;
			st->in_value = true;
			st->field = F_OTHER;
			if (st->name_len == 4 && strncasecmp(st->name, "host", 4) == 0)
				st->field = F_HOST;
			else if (st->name_len == 14 && strncasecmp(st->name, "content-length", 14) == 0)
				st->field = F_LENGTH;
			else if (st->name_len == 17 &&
				 strncasecmp(st->name, "transfer-encoding", 17) == 0)
				st->field = F_CODING;
			if (trailer && st->field != F_OTHER)
				st->field = F_OTHER;
			return;
		}
		if (!tchar(ch))
			st->bad = true; /* a space before the colon, a control, a separator */
		if (st->name_len < NAME_KEEP)
			st->name[st->name_len] = (char)ch;
		st->name_len++;
		return;
	}
	if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
		st->bad = true; /* NUL or another control in a value */
		return;
	}
	if (st->field == F_OTHER)
		return;
	if (st->value_len == 0 && (ch == ' ' || ch == '\t'))
		return;
	if (st->value_len < VALUE_KEEP)
		st->value[st->value_len++] = (char)ch;
	else
		st->bad = st->bad || st->field != F_HOST; /* an implausibly long length or coding */
}

/* Scans one byte of a chunked body; a malformed chunk stops the checks (the library refuses it,
 * and a request after it would find no verdict, so it is refused too). */
static void chunk_byte(fstate *st, unsigned char ch)
{
	switch (st->phase) {
	case PH_CHUNK_SIZE: {
		int d = (ch >= '0' && ch <= '9') ? ch - '0' :
			(ch >= 'a' && ch <= 'f') ? ch - 'a' + 10 :
			(ch >= 'A' && ch <= 'F') ? ch - 'A' + 10 : -1;
		if (d >= 0 && !st->cr) {
			if (++st->chunk_digits > 15) {
				st->phase = PH_PASS;
				return;
			}
			st->remaining = st->remaining * 16 + (uint64_t)d;
			return;
		}
		if (ch == ';' && st->chunk_digits && !st->cr) {
			st->phase = PH_CHUNK_EXT;
			return;
		}
		/* fall through to the line end */
	}
	/* FALLTHROUGH */
	case PH_CHUNK_EXT:
		if (st->cr) {
			st->cr = false;
			if (ch != '\n' || !st->chunk_digits) {
				st->phase = PH_PASS;
				return;
			}
			if (st->remaining == 0) {
				st->phase = PH_TRAILER;
				st->line_len = 0;
			} else {
				st->phase = PH_CHUNK_DATA;
			}
			return;
		}
		if (ch == '\r')
			st->cr = true;
		else if (ch < 0x20 && ch != '\t')
			st->phase = PH_PASS;
		return;
	case PH_CHUNK_CR:
		st->phase = ch == '\r' ? PH_CHUNK_LF : PH_PASS;
		return;
	case PH_CHUNK_LF:
		if (ch != '\n') {
			st->phase = PH_PASS;
			return;
		}
		st->phase = PH_CHUNK_SIZE;
		st->remaining = 0;
		st->chunk_digits = 0;
		return;
	default: return;
	}
}

/* Runs the bytes p[0..n) of st's connection through the checks. */
static void scan(fstate *st, const unsigned char *p, size_t n)
{
	size_t i = 0;
	while (i < n && st->phase != PH_PASS) {
		switch (st->phase) {
		case PH_LINE:
			if (st->started == 0)
				st->started = mono_now();
			line_byte(st, p[i++]);
			break;
		case PH_FIELD: field_byte(st, p[i++], false); break;
		case PH_TRAILER: field_byte(st, p[i++], true); break;
		case PH_BODY:
		case PH_CHUNK_DATA: {
			size_t take = n - i;
			if ((uint64_t)take > st->remaining)
				take = (size_t)st->remaining;
			i += take;
			st->remaining -= take;
			if (st->remaining == 0) {
				if (st->phase == PH_BODY)
					next_request(st);
				else
					st->phase = PH_CHUNK_CR;
			}
			break;
		}
		default: chunk_byte(st, p[i++]); break;
		}
	}
}

/* libmicrohttpd's recv (see the top of this file): for a tracked connection whose current
 * request is past its receive deadline, answers 408 (when no earlier answer is pending) and
 * fails with ECONNRESET, so that the library closes the connection; otherwise reads and runs the
 * bytes through the checks. Any other descriptor is read as by recvfrom. Returns what recv(2)
 * returns (the bytes read, or -1 with errno set: the system call's convention, which
 * libmicrohttpd calls it by, not an ATLAS_E* code). */
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	fstate *st = NULL;
	if (fd >= 0 && fd < table_cap && table)
		st = atomic_load_explicit(&table[fd], memory_order_acquire);
	if (st && st->phase != PH_PASS && st->started > 0 && config.receive_timeout_s > 0 &&
	    mono_now() - st->started > config.receive_timeout_s) {
		if (st->heads == st->taken)
			(void)send(fd, timeout_reply, timeout_len,
				   MSG_NOSIGNAL | MSG_DONTWAIT);
		st->phase = PH_PASS;
		errno = ECONNRESET;
		return -1;
	}
	ssize_t n = recvfrom(fd, buf, len, flags, NULL, NULL);
	if (n > 0 && st) {
		scan(st, buf, (size_t)n);
		if (st->answer_now) {
			st->answer_now = false;
			st->taken = st->heads;
			refuse(fd, (framing_verdict)st->ring[(st->heads - 1) % RING]);
			errno = ECONNRESET;
			return -1;
		}
	}
	return n;
}
