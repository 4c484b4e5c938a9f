/* main.c - atlas-serve: the site's search box over HTTP/JSON, with hot index swap. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <malloc.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fair.h"
#include "framing.h"
#include "pool.h"
#include "server.h"

#ifndef ATLAS_VERSION
#define ATLAS_VERSION "0"
#endif

#define CONNECTION_TIMEOUT_S 10
#define PER_IP_CONNECTIONS 64
#define TRUST_PROXY_MAX 16
#define MAX_CONNECTIONS 4096
#define CONNECTION_MEMORY (32 * 1024)
#define DRAIN_TIMEOUT_S 10.0
#define DEADLINE_MS 1000

static const char usage[] =
	"usage: atlas-serve --index FILE [--bind ADDR] [--port N] [--threads N]\n"
	"                   [--cors ORIGIN]... [--cache-size N] [--cache-bytes N]\n"
	"                   [--log FILE]\n"
	"                   [--max-index-age SECONDS] [--request-timeout SECONDS]\n"
	"                   [--trust-proxy ADDR]... [--budget P[,C[,E]]] [--deadline MS]\n"
	"                   [--index-uid NAME] [--api-key-file FILE]\n"
	"                   [--analytics FILE [--analytics-days N]]\n"
	"\n"
	"Serves the Atlas index FILE over HTTP: /api/search, /api/suggest, /api/next,\n"
	"/api/batch, /api/click, /healthz, /metrics, a read-only Meilisearch-compatible subset\n"
	"(/indexes/NAME/search, /multi-search, /health, /version) and a search page at /. The index file is watched: a new file\n"
	"renamed over it is validated and swapped in without dropping a request (SIGHUP\n"
	"checks at once); a file that fails validation is refused and the previous index\n"
	"stays in service.\n"
	"\n"
	"  --index FILE           the index built by atlas-index (required)\n"
	"  --bind ADDR            IPv4 or IPv6 address to listen on (default 127.0.0.1)\n"
	"  --port N               TCP port, 0 for any free port (default 8080)\n"
	"  --threads N            HTTP threads, and as many search workers, which take the\n"
	"                         engine requests in order of arrival (default: one per CPU core)\n"
	"  --cors ORIGIN          allow cross-origin requests from ORIGIN (repeatable; * for any)\n"
	"  --cache-size N         responses kept in the memory cache, at most 100000\n"
	"                         (default 1024; 0: none)\n"
	"  --cache-bytes N        bytes the memory cache holds, K/M/G suffixes for KiB/MiB/GiB\n"
	"                         (default 32M; 0: none)\n"
	"  --log FILE             append the access log to FILE (default: standard error)\n"
	"  --max-index-age SECS   /healthz says \"stale\" when the index is older (0: never)\n"
	"  --index-uid NAME       the index's uid on the Meilisearch routes (default pages)\n"
	"  --api-key-file FILE    the Meilisearch routes ask for Authorization: Bearer KEY,\n"
	"                         KEY read from FILE\n"
	"  --request-timeout SECS a request's head and body within SECS of its first byte,\n"
	"                         else 408 and the connection closed (default 10)\n"
	"  --trust-proxy ADDR     a reverse proxy on ADDR (repeatable): exempt from the limit of\n"
	"                         64 connections per address, and its X-Forwarded-For names the\n"
	"                         client whose expensive requests are limited\n"
	"  --budget P[,C[,E]]     the work budget of a search: postings, candidates,\n"
	"                         expansions (default 400000,20000,20000, as atlas-query's;\n"
	"                         postings 400000 per 10000 pages on larger indexes)\n"
	"  --deadline MS          a search past MS milliseconds after its request arrived takes\n"
	"                         no further retrieval step and answers \"partial\": true\n"
	"                         (default 1000; 0: none)\n"
	"  --analytics FILE       record settled searches and the clicks the widget reports\n"
	"                         (POST /api/click) in the SQLite file FILE: no address,\n"
	"                         cookie or user agent; read with atlas-query --analytics\n"
	"  --analytics-days N     keep analytics rows N days (default 90; the nightly job\n"
	"                         deletes older rows with atlas-query)\n"
	"  --help                 show this help\n"
	"  --version              show the version\n"
	"\n"
	"SIGTERM or SIGINT: stop accepting, finish the requests in flight, exit 0.\n"
	"Exit status: 0 clean shutdown, 1 unusable index or listening failure, 2 usage error.\n";

/* Parses s as a decimal number in lo..hi into *out. Returns 0 or ATLAS_EINVAL. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return ATLAS_EINVAL;
	*out = v;
	return 0;
}

/* Returns whether s is a Meilisearch index uid: 1 to 64 of a-z A-Z 0-9 - _. */
static bool valid_uid(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 64)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
	return true;
}

/* Reads the API key of cfg->api_key_file into cfg->api_key (white space around it left out).
 * Returns 0, or 1 with the reason on stderr (unreadable, empty). */
static int read_api_key(serve_config *cfg)
{
	FILE *f = fopen(cfg->api_key_file, "r");
	if (!f) {
		fprintf(stderr, "atlas-serve: cannot read --api-key-file %s: %s\n", cfg->api_key_file,
			strerror(errno));
		return 1;
	}
	char buf[1024];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *s = buf;
	while (*s && isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	if (n == 0) {
		fprintf(stderr, "atlas-serve: --api-key-file %s holds no key\n", cfg->api_key_file);
		return 1;
	}
	cfg->api_key = strdup(s);
	return cfg->api_key ? 0 : 1;
}

/* Parses s as a byte count, with an optional K, M or G suffix (KiB, MiB, GiB), up to 64 GiB,
 * into *out. Returns 0 or ATLAS_EINVAL. */
static int parse_size(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || end == s || errno || v < 0)
		return ATLAS_EINVAL;
	int shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (64L << 30) >> shift)
		return ATLAS_EINVAL;
	*out = v << shift;
	return 0;
}

/* The address to listen on, IPv4 or IPv6. */
typedef union listen_addr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
} listen_addr;

/* Fills *a from addr and port. Returns 0, or ATLAS_EINVAL when addr is not a numeric address. */
static int parse_addr(listen_addr *a, const char *addr, int port, bool *v6)
{
	memset(a, 0, sizeof(*a));
	*v6 = false;
	if (inet_pton(AF_INET, addr, &a->in4.sin_addr) == 1) {
		a->in4.sin_family = AF_INET;
		a->in4.sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &a->in6.sin6_addr) == 1) {
		a->in6.sin6_family = AF_INET6;
		a->in6.sin6_port = htons((uint16_t)port);
		*v6 = true;
		return 0;
	}
	return ATLAS_EINVAL;
}

/* Reports a usage error on stderr. Returns 2, the exit status of usage errors. */
static int usage_error(const char *msg)
{
	fprintf(stderr, "atlas-serve: %s\n", msg);
	return 2;
}

/* Applies the option ch (its value in optarg) to *cfg. Returns 0, 1 to exit 0 at once (--help,
 * --version), or 2 for a usage error (reported on stderr). */
static int apply_option(serve_config *cfg, int ch)
{
	long v;
	switch (ch) {
	case 'i': cfg->index = optarg; break;
	case 'b': cfg->bind = optarg; break;
	case 'p':
		if (parse_long(optarg, 0, 65535, &v)) {
			return usage_error("--port must be a number from 0 to 65535");
		}
		cfg->port = (int)v;
		break;
	case 't':
		if (parse_long(optarg, 1, 1024, &v)) {
			return usage_error("--threads must be a number from 1 to 1024");
		}
		cfg->threads = (int)v;
		break;
	case 'c':
		if (!*optarg) {
			return usage_error("--cors needs an origin (https://host) or *");
		}
		cfg->cors[cfg->ncors++] = optarg;
		break;
	case 'C':
		if (parse_long(optarg, 0, 100000, &v)) {
			return usage_error("--cache-size must be from 0 to 100000");
		}
		cfg->cache_size = v;
		break;
	case 'B':
		if (parse_size(optarg, &v)) {
			return usage_error("--cache-bytes must be a size up to 64G (K, M, G: "
					   "KiB, MiB, GiB)");
		}
		cfg->cache_bytes = v;
		break;
	case 'l': cfg->log_path = optarg; break;
	case 'a':
		if (parse_long(optarg, 0, 100L * 365 * 86400, &v)) {
			return usage_error("--max-index-age must be a number of seconds");
		}
		cfg->max_index_age = v;
		break;
	case 'u':
		if (!valid_uid(optarg))
			return usage_error("--index-uid must be 1 to 64 of a-z A-Z 0-9 - _");
		cfg->index_uid = optarg;
		break;
	case 'k': cfg->api_key_file = optarg; break;
	case 'r':
		if (parse_long(optarg, 1, 3600, &v)) {
			return usage_error("--request-timeout must be from 1 to 3600 seconds");
		}
		cfg->request_timeout = v;
		break;
	case 'P': {
		listen_addr a;
		bool is6;
		if (cfg->ntrust >= TRUST_PROXY_MAX) {
			return usage_error("--trust-proxy is given more than 16 times");
		}
		if (parse_addr(&a, optarg, 0, &is6)) {
			return usage_error("--trust-proxy needs a numeric IPv4 or IPv6 address");
		}
		memset(&cfg->trust[cfg->ntrust], 0, sizeof(cfg->trust[0]));
		memcpy(&cfg->trust[cfg->ntrust++], &a,
		       is6 ? sizeof(a.in6) : sizeof(a.in4));
		break;
	}
	case 'W': {
		atlas_work w;
		if (atlas_parse_work_budget(optarg, &w)) {
			return usage_error("--budget must be POSTINGS[,CANDIDATES[,EXPANSIONS]], "
					   "positive numbers");
		}
		atlas_set_work_budget(&w);
		break;
	}
	case 'D':
		if (parse_long(optarg, 0, 3600L * 1000, &v)) {
			return usage_error("--deadline must be from 0 to 3600000 milliseconds");
		}
		cfg->deadline_ms = v;
		break;
	case 'A': cfg->analytics_path = optarg; break;
	case 'Y':
		if (parse_long(optarg, 1, 36500, &v))
			return usage_error("--analytics-days must be a number from 1 to 36500");
		cfg->analytics_days = (int)v;
		break;
	case 'h': fputs(usage, stdout); return 1;
	case 'V': printf("atlas-serve %s\n", ATLAS_VERSION); return 1;
	default: fputs(usage, stderr); return 2;
	}
	return 0;
}

/* Parses the command line into *cfg (cfg->cors is malloc'd: free it). Returns 0, 1 to exit 0 at
 * once (--help, --version), or 2 for a usage error (reported on stderr). */
static int parse_args(serve_config *cfg, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "index", required_argument, NULL, 'i' },
		{ "bind", required_argument, NULL, 'b' },
		{ "port", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "cors", required_argument, NULL, 'c' },
		{ "cache-size", required_argument, NULL, 'C' },
		{ "cache-bytes", required_argument, NULL, 'B' },
		{ "log", required_argument, NULL, 'l' },
		{ "max-index-age", required_argument, NULL, 'a' },
		{ "index-uid", required_argument, NULL, 'u' },
		{ "api-key-file", required_argument, NULL, 'k' },
		{ "request-timeout", required_argument, NULL, 'r' },
		{ "trust-proxy", required_argument, NULL, 'P' },
		{ "budget", required_argument, NULL, 'W' },
		{ "deadline", required_argument, NULL, 'D' },
		{ "analytics", required_argument, NULL, 'A' },
		{ "analytics-days", required_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	*cfg = (serve_config){
		.bind = "127.0.0.1",
		.port = 8080,
		.threads = ncpu > 0 ? (int)ncpu : 1,
		.cache_size = 1024,
		.index_uid = "pages",
		.cache_bytes = 32L << 20,
		.request_timeout = CONNECTION_TIMEOUT_S,
		.deadline_ms = DEADLINE_MS,
		.analytics_days = ANALYTICS_DAYS_DEFAULT,
	};
	cfg->cors = calloc((size_t)argc, sizeof(*cfg->cors));
	if (!cfg->cors) {
		fprintf(stderr, "atlas-serve: out of memory\n");
		return 2;
	}
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int rc = apply_option(cfg, ch);
		if (rc)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "atlas-serve: unexpected argument '%s'\n%s", argv[optind], usage);
		return 2;
	}
	if (!cfg->index) {
		fprintf(stderr, "atlas-serve: --index is required\n%s", usage);
		return 2;
	}
	return 0;
}

/* MHD's error logger: one timestamped line on stderr per message (protocol errors, refused
 * connections), as the watcher logs its events; not the close of a connection whose client had
 * gone (serve_abandoned), which the access log records as "aborted". */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512], when[32];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (serve_abandoned && strstr(msg, "internal error")) {
		serve_abandoned = false;
		return;
	}
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s atlas-serve: http: %s\n", when, msg);
}

/* Waits for SIGHUP (index check), SIGTERM or SIGINT (returns), flushing the access log each
 * second. */
static void wait_signals(server *s, const sigset_t *set)
{
	for (;;) {
		struct timespec tick = { 1, 0 };
		int sig = sigtimedwait(set, NULL, &tick);
		if (sig == SIGHUP)
			live_kick(s->index);
		else if (sig == SIGTERM || sig == SIGINT)
			return;
		fflush(s->log);
	}
}

/* Stops accepting, lets the requests in flight finish (up to DRAIN_TIMEOUT_S), stops the daemon.
 * The listening socket MHD_quiesce_daemon hands back is shut down at once (no connection is
 * accepted any more) but closed only after MHD_stop_daemon: each of MHD's pool threads takes it
 * out of its own epoll set when it next wakes, and a socket closed before that makes the removal
 * fail, which MHD treats as fatal (an abort at SIGTERM). */
static void shut_down(server *s, struct MHD_Daemon *d)
{
	atomic_store(&s->closing, true);
	MHD_socket fd = MHD_quiesce_daemon(d);
	if (fd != MHD_INVALID_SOCKET)
		shutdown(fd, SHUT_RDWR);
	double until = serve_now() + DRAIN_TIMEOUT_S;
	while (atomic_load(&s->inflight) > 0 && serve_now() < until) {
		struct timespec pause = { 0, 10 * 1000000L };
		nanosleep(&pause, NULL);
	}
	/* the requests still with the workers are answered (their connections resumed) first */
	pool_stop(s->workers);
	MHD_stop_daemon(d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
}

/* Blocks SIGHUP, SIGTERM and SIGINT in this thread (set receives them, for sigtimedwait; every
 * thread started afterwards inherits the mask) and ignores SIGPIPE and SIGXFSZ. Never fails. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* a file size limit (ulimit -f) fails the analytics write with EFBIG instead of killing */
	signal(SIGXFSZ, SIG_IGN);
}

/* Starts MHD's daemon on addr (an IPv6 one when v6) with s's threads, limits and callbacks.
 * Returns the daemon, or NULL with errno set when the system said why it did not start. */
static struct MHD_Daemon *start_daemon(server *s, listen_addr *addr, bool v6)
{
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
			     MHD_USE_ERROR_LOG;
	if (v6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	/* one thread is MHD's internal polling thread itself (a pool of one draws a warning) */
	struct MHD_OptionItem mhd_pool[] = {
		{ MHD_OPTION_THREAD_POOL_SIZE, s->cfg->threads, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	if (s->cfg->threads < 2)
		mhd_pool[0].option = MHD_OPTION_END;
	return MHD_start_daemon(
		flags, (uint16_t)s->cfg->port, framing_accept, NULL, serve_request, s,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_SOCK_ADDR, &addr->sa,
		MHD_OPTION_ARRAY, mhd_pool,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
		MHD_OPTION_NOTIFY_CONNECTION, framing_notify, NULL,
		MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
		MHD_OPTION_NOTIFY_COMPLETED, serve_completed, s,
		MHD_OPTION_END);
}

/* Parses the flags, validates the index, serves until SIGTERM or SIGINT. Returns the exit status:
 * 0 after a clean shutdown, 1 when the index or the log is unusable or the port cannot be bound,
 * 2 for a usage error. */
int main(int argc, char **argv)
{
	/* a fixed threshold: index copies and other large blocks are mapped and go back to the
	 * system when freed (glibc otherwise raises the threshold after the first such free, and
	 * later copies stay in the heap), so memory does not ratchet up over index swaps */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	serve_config cfg;
	int rc = parse_args(&cfg, argc, argv);
	if (rc) {
		free(cfg.cors);
		return rc == 1 ? 0 : 2;
	}
	/* a heap per worker thread and one for the rest, no more: with fewer the workers wait on
	 * each other's allocations (a third of the throughput at two threads), with more each extra
	 * heap only keeps a high-water mark of its own */
	mallopt(M_ARENA_MAX, cfg.threads + 1);
	/* no allocation statistics: SQLite otherwise takes one process-wide mutex on every
	 * allocation and free to count them, which the worker threads then contend for */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	int status = 1;
	listen_addr addr;
	bool v6;
	if (parse_addr(&addr, cfg.bind, cfg.port, &v6)) {
		fprintf(stderr, "atlas-serve: --bind needs a numeric IPv4 or IPv6 address: '%s'\n",
			cfg.bind);
		status = 2;
		goto free_cors;
	}
	if (cfg.api_key_file && read_api_key(&cfg))
		goto free_cors;
	server s;
	memset(&s, 0, sizeof(s));
	s.cfg = &cfg;
	s.started = serve_now();
	atomic_init(&s.inflight, 0);
	atomic_init(&s.closing, false);
	for (int i = 0; i < cfg.ncors; i++)
		if (strcmp(cfg.cors[i], "*") == 0)
			s.cors_any = true;
	s.log = stderr;
	if (cfg.log_path) {
		s.log = fopen(cfg.log_path, "a");
		if (!s.log) {
			fprintf(stderr, "atlas-serve: cannot open log %s: %s\n", cfg.log_path,
				strerror(errno));
			goto free_cors;
		}
		setvbuf(s.log, NULL, _IOFBF, 64 * 1024);
	}
	atlas_error err = { 0, "" };
	if (live_open(&s.index, cfg.index, cfg.threads, serve_on_swap, &s, &err)) {
		fprintf(stderr, "atlas-serve: cannot serve %s: %s\n", cfg.index, err.msg);
		goto close_log;
	}
	framing_config fc = {
		.receive_timeout_s = (double)cfg.request_timeout,
		.per_address = PER_IP_CONNECTIONS,
		.proxies = cfg.trust,
		.nproxies = cfg.ntrust,
	};
	if (framing_init(&fc) || cache_new(&s.cache, (size_t)cfg.cache_size, (size_t)cfg.cache_bytes) ||
	    metrics_new(&s.metrics)) {
		fprintf(stderr, "atlas-serve: out of memory\n");
		goto free_state;
	}
	sigset_t set;
	block_signals(&set);
	if (cfg.analytics_path && analytics_open(&s.analytics, cfg.analytics_path, cfg.analytics_days, &err)) {
		fprintf(stderr, "atlas-serve: %s\n", err.msg);
		goto free_state;
	}
	if (live_start(s.index, &err)) {
		fprintf(stderr, "atlas-serve: %s\n", err.msg);
		goto free_state;
	}
	if (pool_start(&s.workers, cfg.threads, serve_work, &s)) {
		fprintf(stderr, "atlas-serve: cannot start the search workers\n");
		goto stop_watcher;
	}
	struct MHD_Daemon *d = start_daemon(&s, &addr, v6);
	if (!d) {
		fprintf(stderr, "atlas-serve: cannot listen on %s port %d: %s\n", cfg.bind,
			cfg.port, errno ? strerror(errno) : "the HTTP daemon did not start");
		goto stop_workers;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	live_info li;
	live_info_get(s.index, &li);
	unsigned port = info ? (unsigned)info->port : (unsigned)cfg.port;
	printf("atlas-serve: serving %s (build %s, %d pages) on http://%s%s%s:%u/ with %d "
	       "thread%s\n",
	       cfg.index, li.build_id, li.pages, v6 ? "[" : "", cfg.bind, v6 ? "]" : "", port,
	       cfg.threads, cfg.threads == 1 ? "" : "s");
	fflush(stdout);
	wait_signals(&s, &set);
	shut_down(&s, d);
	status = 0;
stop_workers:
	pool_free(s.workers);
stop_watcher:
	live_stop(s.index);
free_state:
	analytics_close(s.analytics);
	metrics_free(s.metrics);
	cache_free(s.cache);
	framing_free();
	fair_free();
	live_free(s.index);
close_log:
	if (s.log != stderr)
		fclose(s.log);
	else
		fflush(stderr);
free_cors:
	free(cfg.cors);
	free(cfg.api_key);
	return status;
}
