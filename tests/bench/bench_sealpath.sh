#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_sealpath.sh - how long sealpath takes over the Debian default PATH:
# the median wall time of RUNS runs, beside a baseline of `ls -ld` over the
# PATH folders (a walk that judges nothing), and their ratio.
# Usage: bench_sealpath.sh [SEALPATH] [RUNS]   (a benchmark, not a test)
set -eu

SEALPATH=${1:-./sealpath}
RUNS=${2:-200}
DEFAULT_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ -x "$SEALPATH" ] || { echo "no sealpath at $SEALPATH" >&2; exit 2; }

now_ns() { date +%s%N; }

# median of RUNS timings (ns) of the command "$@", printed in ns
median_ns() {
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		t0=$(now_ns)
		"$@" >/dev/null 2>&1 || true
		t1=$(now_ns)
		echo $((t1 - t0))
		i=$((i + 1))
	done | sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else printf "%d\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

baseline() {
	IFS=:
	# shellcheck disable=SC2086
	ls -ld $DEFAULT_PATH
}

"$SEALPATH" --path "$DEFAULT_PATH" >/dev/null 2>&1 || true # warm the caches
entries=$(for d in $(echo "$DEFAULT_PATH" | tr : ' '); do
	[ -d "$d" ] && ls -A "$d/"; done 2>/dev/null | wc -l)
seal=$(median_ns "$SEALPATH" --path "$DEFAULT_PATH")
base=$(median_ns baseline)
awk -v s="$seal" -v b="$base" -v n="$RUNS" -v e="$entries" 'BEGIN {
	printf "sealpath over %s (%d names listed): median %.2f ms of %d runs\n",
		"the default PATH", e, s / 1e6, n
	printf "baseline ls -ld over the PATH folders: median %.2f ms\n", b / 1e6
	printf "ratio sealpath / ls -ld: %.1f\n", (b > 0 ? s / b : 0)
}'
