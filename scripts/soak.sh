#!/bin/bash
# SPDX-License-Identifier: MIT
# soak.sh - crash trials under load (ledgerfs(8) RESTART): several cases
# call in loops while the daemon is killed with SIGKILL, or while the disk
# under the backing folder is cut off as at a power cut (an ext4 image
# shut down with EXT4_IOC_SHUTDOWN, journal not flushed, then mounted
# again).  Each trial ends with `ledgerctl verify` of every ledger and a
# check that every call and result a client saw acknowledged has its row.
#
#   sudo scripts/soak.sh              2 trials of each kind (about 30 s)
#   SOAK_TRIALS=50 scripts/soak.sh    longer
# Environment: SOAK_TRIALS (trials of each kind, default 2), SOAK_CASES
# (cases calling at once, default 4), SOAK_SECONDS (load before each cut,
# default 2), LEDGERFS_BUILD (default build/plain), SOAK_DAEMON_OPTS
# (extra daemon options, e.g. --pad-ledger=64K).  Power cuts are
# skipped, saying so, where loop mounts are not available.
# Prints one line per trial and a summary; exit 1 when any trial failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${LEDGERFS_BUILD:-$top/build/plain}
trials=${SOAK_TRIALS:-2}
ncases=${SOAK_CASES:-4}
load_s=${SOAK_SECONDS:-2}
[ "$(id -u)" -eq 0 ] || { echo "soak: run as root (FUSE, loop mounts)" >&2; exit 2; }
# A mount namespace of its own: a sandbox that another program creates
# meanwhile would copy the image's mount and keep its shut-down instance
# alive, and the next mount of the image would find that one again.
if [ -z "${SOAK_PRIVATE_NS:-}" ] && command -v unshare >/dev/null; then
	SOAK_PRIVATE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi
for b in ledgerfs ledgerctl; do
	[ -x "$build/$b" ] || { echo "soak: $build/$b not built" >&2; exit 2; }
done
shutdown_bin=$build/tests/integration/lfshutdown
[ -x "$shutdown_bin" ] || make -s -C "$build" tests/integration/lfshutdown >/dev/null 2>&1

work=$(mktemp -d /tmp/lfsoak.XXXXXX) || exit 2
chmod 0755 "$work"
mnt=$work/mnt disk=$work/disk key=$work/keys/host.key
mkdir -p "$mnt" "$disk" "$work/keys" "$work/logs"
chmod 0700 "$work/keys"
daemon= clients= loop_ok=

cleanup() {
	for p in $clients; do kill -9 "$p" 2>/dev/null; done
	[ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
	grep -q " $mnt " /proc/mounts && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	grep -q " $disk " /proc/mounts && umount -l "$disk"
	if [ -n "${SOAK_KEEP:-}" ]; then echo "soak: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The backing folder lives on an ext4 image when loop mounts work, so a
# power cut can be simulated; else on /tmp, and only kill -9 is tried.
if command -v mkfs.ext4 >/dev/null && [ -x "$shutdown_bin" ] &&
	truncate -s 512M "$work/disk.img" &&
	mkfs.ext4 -q -F "$work/disk.img" >/dev/null 2>&1 &&
	mount -o loop "$work/disk.img" "$disk" 2>/dev/null; then
	loop_ok=1
	chmod 0755 "$disk"
else
	echo "soak: no loop-mounted ext4 here: power cuts skipped"
fi
backing=$disk/backing

start_daemon() {
	"$build/ledgerfs" -f --backing="$backing" --key="$key" \
		${SOAK_DAEMON_OPTS:-} "$mnt" \
		>>"$work/logs/daemon.out" 2>>"$work/logs/daemon.err" &
	daemon=$!
	for _ in $(seq 1 200); do
		[ -d "$mnt/cases" ] && return 0
		kill -0 "$daemon" 2>/dev/null || break
		sleep 0.05
	done
	echo "soak: the daemon did not start:" >&2
	tail -n 5 "$work/logs/daemon.err" >&2
	return 1
}

# The daemon is gone: wait for it, detach its dead mount.
reap_daemon() {
	kill -9 "$daemon" 2>/dev/null
	wait "$daemon" 2>/dev/null
	daemon=
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
}

policy='interactions:
  - match: lookup_*
    mode: pass
  - match: send_*
    mode: mock
    mock: {status: sent}
default: {mode: block}
'

open_case() { # NAME
	mkdir "$mnt/cases/$1" && printf '%s' "$policy" >"$mnt/cases/$1/policy" &&
		printf '{"case_id":"%s","token":"%s"}\n' "$1" \
			"$(tr -d '\n' <"$mnt/cases/$1/token")" >"$mnt/cases/$1/target/register"
}

# One target: calls until three writes in a row fail; logs "call ID" and
# "result ID" for what was acknowledged (the write returned success).
# At a power cut nothing runs on after it: an acknowledgement seen once
# the cut has begun ($work/cut exists) is one no client could have seen,
# so it is not logged; one logged before the cut must have its row.
client() { # TARGET-DIR LOG
	local d=$1 log=$2 i=0 fails=0 id tool
	while [ $fails -lt 3 ] && [ $i -lt 1000000 ]; do
		i=$((i + 1))
		id=c$i
		if [ $((i % 2)) -eq 0 ]; then tool=lookup_x; else tool=send_x; fi
		if printf '{"call_id":"%s","tool":"%s","args":{"i":%d}}\n' \
			"$id" "$tool" "$i" 2>/dev/null >"$d/request"; then
			[ -e "$work/cut" ] || echo "call $id" >>"$log"
			fails=0
		else
			fails=$((fails + 1))
			continue
		fi
		if [ $tool = lookup_x ] && [ $((i % 4)) -eq 0 ] &&
			printf '{"call_id":"%s","returned":{"i":%d},"is_error":false,"real_executed":true}\n' \
				"$id" "$i" 2>/dev/null >"$d/result"; then
			[ -e "$work/cut" ] || echo "result $id" >>"$log"
		fi
	done
}

# Every ledger verifies, and every call and result a client of this
# trial saw acknowledged has its row (earlier trials were checked).  Prints what failed; returns 1 then.
check_all() { # PREFIX: acknowledged rows are checked for its cases
	local bad=0 c led
	for c in "${cases[@]}"; do
		led=$backing/cases/$c/ledger.jsonl
		if ! out=$("$build/ledgerctl" verify "$backing/cases/$c" --key "$key" 2>&1); then
			echo "  $c: verify: $out"
			bad=1
		fi
		case $c in "$1"-*) ;; *) continue ;; esac
		grep -aF '"phase":"decision"' "$led" | grep -o '"call_id":"[^"]*"' |
			sed 's/.*:"\(.*\)"/\1/' | sort -u >"$work/have.calls"
		grep -aF '"phase":"completion"' "$led" | grep -o '"call_id":"[^"]*"' |
			sed 's/.*:"\(.*\)"/\1/' | sort -u >"$work/have.results"
		for kind in call result; do
			sed -n "s/^$kind //p" "$work/logs/$c.acks" 2>/dev/null | sort -u >"$work/acked"
			lost=$(comm -23 "$work/acked" "$work/have.${kind}s" | wc -l)
			if [ "$lost" -ne 0 ]; then
				echo "  $c: $lost acknowledged ${kind}s have no row: $(comm -23 "$work/acked" "$work/have.${kind}s" | head -3 | tr '\n' ' ')"
				bad=1
			fi
		done
	done
	return $bad
}

# Mount the image again (its journal is replayed).  A lazy unmount would
# leave the dead instance alive beside the new one, on the same image, so
# a disk that stays busy stops the soak instead.
remount_disk() {
	local i
	for i in $(seq 1 100); do
		umount "$disk" 2>/dev/null && break
		sleep 0.1
	done
	if grep -q " $disk " /proc/mounts; then
		echo "soak: $disk stays busy after the cut:" >&2
		fuser -vm "$disk" >&2 2>&1
		return 1
	fi
	mount -o loop "$work/disk.img" "$disk" || { echo "soak: remount failed" >&2; return 1; }
}

cases=()
acked_total=0
run_trial() { # KIND NUMBER
	local kind=$1 n=$2 k c
	clients=
	for k in $(seq 1 "$ncases"); do
		c=$kind$n-$k
		open_case "$c" || { echo "soak: cannot open case $c" >&2; return 1; }
		cases+=("$c")
		client "$mnt/cases/$c/target" "$work/logs/$c.acks" &
		clients="$clients $!"
	done
	sleep "$load_s"
	if [ "$kind" = kill ]; then
		kill -9 "$daemon"
		wait "$daemon" 2>/dev/null
	else
		: >"$work/cut" # before the cut: see client()
		"$shutdown_bin" "$disk" nologflush
		sleep 0.3 # the clients meet the dead disk
		kill -9 "$daemon"
		wait "$daemon" 2>/dev/null
	fi
	for p in $clients; do wait "$p" 2>/dev/null; done
	clients=
	rm -f "$work/cut"
	reap_daemon
	if [ "$kind" = cut ]; then
		remount_disk || return 2
	fi
	start_daemon || return 1
	acked=$(cat "$work/logs/$kind$n"-*.acks 2>/dev/null | wc -l)
	acked_total=$((acked_total + acked))
	if out=$(check_all "$kind$n"); then
		echo "soak: $kind trial $n: ok ($acked acknowledged rows, ${#cases[@]} ledgers verify)"
		return 0
	fi
	echo "soak: $kind trial $n: FAILED"
	echo "$out"
	return 1
}

start_daemon || exit 1
failed=0 done_kill=0 done_cut=0
for n in $(seq 1 "$trials"); do
	run_trial kill "$n" || failed=$((failed + 1))
	done_kill=$((done_kill + 1))
	if [ -n "$loop_ok" ]; then
		run_trial cut "$n"
		case $? in
		0) ;;
		2)
			echo "soak: stopped: the disk could not be mounted again" >&2
			exit 2
			;;
		*) failed=$((failed + 1)) ;;
		esac
		done_cut=$((done_cut + 1))
	fi
done
# a clean stop: unmount, the daemon saves its counters and exits
fusermount3 -u "$mnt" 2>/dev/null
wait "$daemon" 2>/dev/null
daemon=
echo "soak: $done_kill kill -9 trials, $done_cut power cuts, $ncases cases each, $acked_total acknowledged rows checked, $failed failed"
[ "$failed" -eq 0 ]
