/* assets.h - the search page's files, embedded into atlas-serve at build time by embed.py. */
#ifndef ATLAS_ASSETS_H
#define ATLAS_ASSETS_H

#include <stddef.h>

typedef struct atlas_asset {
	const char *path;         /* URL path: "/" for index.html, "/app.js", ... */
	const char *type;         /* Content-Type */
	const char *etag;         /* strong ETag of the bytes, quoted */
	const unsigned char *data;
	size_t len;
} atlas_asset;

extern const atlas_asset atlas_assets[];
extern const int atlas_nassets;

#endif
