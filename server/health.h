/* health.h - what /healthz and /metrics report beyond the served index: the outcome of the last
 * reindex (the status file the reindex job writes beside the index) and the pages the index kept
 * from the index it replaced (atlas-index --keep-going). */
#ifndef ATLAS_HEALTH_H
#define ATLAS_HEALTH_H

#include <stdbool.h>

#include "server.h"

/* The last reindex, as its status file says. */
typedef struct reindex_status {
	bool known;                  /* a status file was read */
	bool failed;                 /* its exit status was neither 0 nor 3 */
	int exit_code;
	long long at;                /* unix seconds of the run, 0 when not given */
	char error[512];             /* its error text, "" when it succeeded */
} reindex_status;

/* Returns the status file path of the index at index_path (index_path + ".status") in buf. */
void health_status_path(char *buf, size_t cap, const char *index_path);

/* Reads the status file of the index at index_path into *out (known false when there is none or
 * it is not the JSON object the reindex job writes). Never fails. */
void health_reindex(const char *index_path, reindex_status *out);

/* Returns the pages the served index kept from its predecessor (meta kept_pages), 0 for none. */
int health_kept_pages(server *s);

#endif
