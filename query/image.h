/* image.h - an index file's bytes shared by the engines opened on it (image.c). */
#ifndef ATLAS_IMAGE_H
#define ATLAS_IMAGE_H

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "error.h"
#include "postings.h"

typedef struct index_image {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	unsigned char *bytes;
	int refs;
	struct index_image *next;
	/* the full-text postings, read by the first engine asked to hold them */
	pthread_mutex_t postings_lock;
	bool postings_read;
	atlas_postings *postings; /* NULL when too large to hold */
} index_image;

/* Returns a reference to the image of the open file f (whose stat is sb), reading it when no
 * engine holds it yet, or NULL when it cannot be read. Release with image_release. */
index_image *image_acquire(FILE *f, const struct stat *sb);
/* Drops a reference; the last one frees the bytes and the postings. Accepts NULL. */
void image_release(index_image *im);
/* Sets *out to the full-text postings of im, read from db (the image's connection, ndocs pages) by
 * the first engine asking; NULL when too large to hold. Returns 0, or what postings_load returns
 * with err set. */
int image_postings(index_image *im, sqlite3 *db, int ndocs, const atlas_postings **out, atlas_error *err);

#endif
