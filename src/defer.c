/* SPDX-License-Identifier: MIT */
/*
 * defer.c - deferred acknowledgement of a view write (see defer.h).
 */
#include "defer.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "commit.h"

struct lf_defer {
	atomic_int refs; /* the opener's hold, and one per pending row */
	atomic_int err;	 /* the first flush error */
	bool held;	 /* a row joined it (set on the opener's thread) */
	defer_done_fn done;
	void *arg;
};

static _Thread_local struct lf_defer *defer_now;
/* The group this thread's last deferred rows went to (one per daemon). */
static _Thread_local struct commit_group *defer_group;

struct lf_defer *defer_open(defer_done_fn done, void *arg)
{
	struct lf_defer *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	atomic_init(&d->refs, 1);
	atomic_init(&d->err, 0);
	d->held = false;
	d->done = done;
	d->arg = arg;
	defer_now = d;
	return d;
}

struct lf_defer *defer_swap(struct lf_defer *d)
{
	struct lf_defer *was = defer_now;

	defer_now = d;
	return was;
}

struct lf_defer *defer_current(void)
{
	return defer_now;
}

void defer_hold(struct lf_defer *d)
{
	d->held = true;
	atomic_fetch_add(&d->refs, 1);
}

void defer_release(struct lf_defer *d, int err)
{
	int none = 0;

	if (err)
		atomic_compare_exchange_strong(&d->err, &none, err);
	if (atomic_fetch_sub(&d->refs, 1) == 1) {
		d->done(d->arg, atomic_load(&d->err));
		free(d);
	}
}

void defer_note_group(struct commit_group *g)
{
	defer_group = g;
}

bool defer_close(struct lf_defer *d)
{
	bool held = d->held; /* d may be gone once released */

	defer_now = NULL;
	defer_release(d, 0);
	return held;
}

void defer_kick(void)
{
	struct commit_group *g = defer_group;

	defer_group = NULL;
	if (g)
		commit_group_kick(g);
}
