/* image.c - index images: the bytes of an index file, read once and shared by every engine opened
 * on the same file (same device, inode, size and modification time), freed with the last of them;
 * with them, the full-text postings read by the first engine asked to hold them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "image.h"

static pthread_mutex_t images_lock = PTHREAD_MUTEX_INITIALIZER;
static index_image *images;

/* Returns a reference to the image of the open file f (whose stat is sb), reading it when no
 * engine holds it yet, or NULL when it cannot be read. Release with image_release. */
index_image *image_acquire(FILE *f, const struct stat *sb)
{
	pthread_mutex_lock(&images_lock);
	for (index_image *im = images; im; im = im->next)
		if (im->dev == sb->st_dev && im->ino == sb->st_ino && im->size == sb->st_size &&
		    im->mtime.tv_sec == sb->st_mtim.tv_sec && im->mtime.tv_nsec == sb->st_mtim.tv_nsec) {
			im->refs++;
			pthread_mutex_unlock(&images_lock);
			return im;
		}
	index_image *im = calloc(1, sizeof(*im));
	if (im)
		im->bytes = malloc((size_t)sb->st_size);
	if (!im || !im->bytes || fread(im->bytes, 1, (size_t)sb->st_size, f) != (size_t)sb->st_size) {
		if (im)
			free(im->bytes);
		free(im);
		pthread_mutex_unlock(&images_lock);
		return NULL;
	}
	im->dev = sb->st_dev;
	im->ino = sb->st_ino;
	im->size = sb->st_size;
	im->mtime = sb->st_mtim;
	im->refs = 1;
	pthread_mutex_init(&im->postings_lock, NULL);
	im->next = images;
	images = im;
	pthread_mutex_unlock(&images_lock);
	return im;
}

/* Drops a reference; the last one frees the bytes. Accepts NULL. */
void image_release(index_image *im)
{
	if (!im)
		return;
	pthread_mutex_lock(&images_lock);
	if (--im->refs == 0) {
		for (index_image **pp = &images; *pp; pp = &(*pp)->next)
			if (*pp == im) {
				*pp = im->next;
				break;
			}
		postings_free(im->postings);
		pthread_mutex_destroy(&im->postings_lock);
		free(im->bytes);
		free(im);
	}
	pthread_mutex_unlock(&images_lock);
}

int image_postings(index_image *im, sqlite3 *db, int ndocs, const atlas_postings **out, atlas_error *err)
{
	int rc = 0;
	pthread_mutex_lock(&im->postings_lock);
	if (!im->postings_read && !(rc = postings_load(&im->postings, db, ndocs, err)))
		im->postings_read = true;
	*out = im->postings;
	pthread_mutex_unlock(&im->postings_lock);
	return rc;
}
