#!/bin/bash
# SPDX-License-Identifier: MIT
# attack-memory.sh - the figure for README "Hardening": one target opens
# 2,000 descriptors on its request file, each holding an unterminated line
# of about 1 MiB (8 writers at once), while another case calls; prints
# the daemon's resident memory before, at its peak, during and after the
# attack, and the p50/p99 latency of the other case's calls with and
# without it.  Run by hand, as root, after a build:
#   sudo scripts/attack-memory.sh
# Environment: ATTACK_FDS (2000), ATTACK_BYTES (1048000), ATTACK_CALLS
# (500 calls timed each way), ATTACK_CASES (1: the descriptors of one
# target; 8 spreads them over 8 cases, past the one-case share), LEDGERFS_BUILD (build/plain); extra daemon
# options as arguments (e.g. --max-pending=16M).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${LEDGERFS_BUILD:-$top/build/plain}
fds=${ATTACK_FDS:-2000}
bytes=${ATTACK_BYTES:-1048000}
ncalls=${ATTACK_CALLS:-500}
acases=${ATTACK_CASES:-1}
hold=$build/tests/integration/lfhold
[ "$(id -u)" -eq 0 ] || { echo "attack-memory: run as root" >&2; exit 2; }
[ -x "$hold" ] || make -s -C "$build" tests/integration/lfhold >/dev/null 2>&1
ulimit -n "$(ulimit -Hn)" 2>/dev/null

work=$(mktemp -d /tmp/lfattack.XXXXXX) || exit 2
chmod 0755 "$work"
mnt=$work/mnt
mkdir -p "$mnt" "$work/keys"
chmod 0700 "$work/keys"
daemon= holders=
cleanup() {
	for p in $holders; do kill -9 "$p" 2>/dev/null; done
	grep -q " $mnt " /proc/mounts && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	[ -n "$daemon" ] && { sleep 0.3; kill -9 "$daemon" 2>/dev/null; }
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

"$build/ledgerfs" -f --backing="$work/backing" --key="$work/keys/host.key" \
	"$@" "$mnt" 2>"$work/daemon.err" &
daemon=$!
until [ -d "$mnt/cases" ]; do sleep 0.05; done

mem() { awk -v k="$1:" '$1 == k {print int($2 / 1024)}' "/proc/$daemon/status"; }
open_case() {
	mkdir "$mnt/cases/$1"
	printf 'interactions:\n  - match: lookup_*\n    mode: pass\ndefault: {mode: block}\n' \
		>"$mnt/cases/$1/policy"
	printf '{"case_id":"%s","token":"%s"}\n' "$1" "$(tr -d '\n' <"$mnt/cases/$1/token")" \
		>"$mnt/cases/$1/target/register"
}

# timed_calls CASE PREFIX: ncalls calls, one write(2) each; prints
# "p50 p99" in ms.  bash's own printf, timed by EPOCHREALTIME: no fork.
timed_calls() {
	local d=$mnt/cases/$1/target i t0 t1
	: >"$work/lat"
	for i in $(seq 1 "$ncalls"); do
		t0=$EPOCHREALTIME
		printf '{"call_id":"%s%d","tool":"lookup_a","args":{}}\n' "$2" "$i" >"$d/request"
		t1=$EPOCHREALTIME
		echo "$t0 $t1" >>"$work/lat"
	done
	awk '{print ($2 - $1) * 1000}' "$work/lat" | sort -n |
		awk '{v[NR] = $1} END {printf "%.2f %.2f\n", v[int(NR * 0.5)], v[int(NR * 0.99)]}'
}

for k in $(seq 1 "$acases"); do open_case "A$k"; done
open_case B
echo "attack-memory: RSS at start $(mem VmRSS) MiB"
read -r p50 p99 < <(timed_calls B quiet)
echo "attack-memory: case B alone: p50 $p50 ms, p99 $p99 ms ($ncalls calls)"

mkfifo "$work/hold.in"
per=$((fds / 8))
for k in 1 2 3 4 5 6 7 8; do
	"$hold" "$mnt/cases/A$(((k - 1) % acases + 1))/target/request" "$per" "$bytes" <"$work/hold.in" \
		>"$work/hold$k.out" 2>&1 &
	holders="$holders $!"
done
exec 3>"$work/hold.in"
t0=$EPOCHREALTIME
read -r p50 p99 < <(timed_calls B busy)
until [ "$(cat "$work"/hold*.out 2>/dev/null | grep -c '^ready')" -eq 8 ]; do sleep 0.1; done
t1=$EPOCHREALTIME
echo "attack-memory: $((per * 8)) descriptors x $bytes bytes on $acases case(s): $(cat "$work"/hold*.out | grep held= | awk -F'[= ]' '{h += $2; r += $4} END {print h " held, " r " refused"}') in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s"
echo "attack-memory: case B during the attack: p50 $p50 ms, p99 $p99 ms"
echo "attack-memory: RSS while held $(mem VmRSS) MiB, peak $(mem VmHWM) MiB, threads $(awk '$1 == "Threads:" {print $2}' "/proc/$daemon/status")"
exec 3>&-
for p in $holders; do wait "$p" 2>/dev/null; done
holders=
sleep 1
echo "attack-memory: RSS after the descriptors closed $(mem VmRSS) MiB"
