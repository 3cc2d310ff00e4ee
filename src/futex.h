/* SPDX-License-Identifier: MIT */
/*
 * futex.h - sleeping on an atomic int of this process, and waking who
 * sleeps there.  The group commit needs it where a condition variable
 * would need a lock the waker cannot take: a waiter's state is set by
 * the flush's leader, and a count is brought to zero by whoever tells
 * the last row.  A stray wake is harmless: every sleeper here checks its
 * value again in a loop.
 */
#ifndef LF_FUTEX_H
#define LF_FUTEX_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Sleep while *addr is still val (returns at once otherwise). */
static inline void futex_wait(atomic_int *addr, int val)
{
	syscall(SYS_futex, (int *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* Wake up to n sleepers on addr (INT_MAX: all). */
static inline void futex_wake(atomic_int *addr, int n)
{
	syscall(SYS_futex, (int *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* Count one down; the one that brings it to zero wakes every sleeper. */
static inline void futex_count_down(atomic_int *count)
{
	if (atomic_fetch_sub(count, 1) == 1)
		futex_wake(count, INT_MAX);
}

#endif
