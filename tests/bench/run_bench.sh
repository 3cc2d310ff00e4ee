#!/bin/sh
# SPDX-License-Identifier: MIT
# run_bench.sh - the ledgerfs benchmark (`make bench`, run from the build
# folder).  A mediated call through a real ledgerfs mount against a
# Unix-socket baseline doing the same work (parse, policy, mocks, one
# fdatasync'd ledger row), at C = 1, 8 and 64 concurrent cases; the
# daemon's memory per open case and per recorded call; `ledgerctl verify`
# throughput.  Prints one table.  Sizes come from the environment:
#
#   BENCH_CALLS_1=2000 BENCH_CALLS_8=500 BENCH_CALLS_64=400  calls per case
#   BENCH_IDLE_CASES=10000    registered idle cases for the memory figure
#   BENCH_MEM_CALLS=1000000   recorded calls for the per-call memory figure
#   BENCH_LEDGER_MB=100       size of the ledger `verify` is timed on
#   BENCH_LEDGERFS_OPTS=      extra daemon options, e.g. "-o clone_fd"
#   BENCH_ROUNDS=20           at most this many interleaved rounds per C
#                             (calls split evenly, at least 25 per case
#                             and round)
#   BENCH_DIR=/var/tmp        where the backing folders live (the disk
#                             under test); BENCH_KEEP=1 keeps them
#   BENCH_CS="1 8 64"         the concurrencies to run
#   BENCH_PARTS="calls memory verify"  the parts to run
set -u

B=${top_builddir:-.}
S=${top_srcdir:-$(dirname "$0")/../..}
CALLS_1=${BENCH_CALLS_1:-2000}
CALLS_8=${BENCH_CALLS_8:-500}
CALLS_64=${BENCH_CALLS_64:-400}
IDLE_CASES=${BENCH_IDLE_CASES:-10000}
MEM_CALLS=${BENCH_MEM_CALLS:-1000000}
LEDGER_MB=${BENCH_LEDGER_MB:-100}
MAX_ROUNDS=${BENCH_ROUNDS:-20}
CS=${BENCH_CS:-1 8 64}
PARTS=${BENCH_PARTS:-calls memory verify}
T=600 # bound on any single step, seconds

POLICY=$S/tests/bench/bench.policy.json
MOCKS=$S/tests/bench/bench.mocks.json
CLIENT=$B/tests/bench/bench_client

for p in "$B/ledgerfs" "$CLIENT" "$B/tests/bench/baseline_server" \
	"$B/tests/bench/bench_genledger"; do
	[ -x "$p" ] || { echo "run_bench: $p is not built" >&2; exit 2; }
done

# The daemon holds descriptors per open case; give it room for the idle
# cases (the limit is reported with the results).
ulimit -n $((IDLE_CASES * 3 + 1024)) 2>/dev/null
NOFILE=$(ulimit -n)

# Root-owned 0700 folder below a sticky one: the daemon accepts it.
WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/ledgerfs-bench.XXXXXX") || exit 2
chmod 0700 "$WORK"
SHM=
MOUNTS=
PIDS=

cleanup() {
	for m in $MOUNTS; do
		fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	for p in $PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $PIDS; do
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	done
	for m in $MOUNTS; do
		if mountpoint -q "$m"; then
			echo "run_bench: $m still mounted; $WORK kept" >&2
			return
		fi
	done
	[ -n "$SHM" ] && rm -rf "$SHM"
	[ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

die() {
	echo "run_bench: $*" >&2
	for f in "$WORK"/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }
	done
	exit 1
}

# A value in kB from /proc/PID/status (VmRSS, VmHWM).
vm() {
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"
}

now_ns() {
	date +%s%N
}

# start_daemon TAG: mounts $WORK/mnt-TAG; sets DPID (the daemon itself).
start_daemon() {
	mkdir -m 0700 "$WORK/backing-$1" "$WORK/key-$1" || die mkdir
	mkdir -m 0755 "$WORK/mnt-$1" || die mkdir
	timeout -s TERM $((T * 3)) "$B/ledgerfs" -f ${BENCH_LEDGERFS_OPTS:-} --backing="$WORK/backing-$1" \
		--key="$WORK/key-$1/host.key" "$WORK/mnt-$1" \
		>"$WORK/ledgerfs-$1.log" 2>&1 &
	tpid=$!
	PIDS="$PIDS $tpid"
	MOUNTS="$MOUNTS $WORK/mnt-$1"
	i=0
	until mountpoint -q "$WORK/mnt-$1" && [ -d "$WORK/mnt-$1/cases" ]; do
		i=$((i + 1))
		[ $i -gt 100 ] && die "ledgerfs did not mount"
		kill -0 "$tpid" 2>/dev/null || die "ledgerfs exited"
		sleep 0.1
	done
	DPID=$(pgrep -P "$tpid" | head -1)
	[ -n "$DPID" ] || die "no daemon process"
}

# run MODE TARGET C CALLS PREFIX [--out FILE]: prints the RESULT line.
run() {
	timeout $T "$CLIENT" run --mode "$1" --target "$2" --clients "$3" \
		--calls "$4" --prefix "$5" --policy "$POLICY" --mocks "$MOCKS" \
		"$6" "$7" 2>>"$WORK/client.log" | grep '^RESULT' ||
		die "client run $1 C=$3 failed"
}

field() {
	echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print $2 }'
}

echo "== ledgerfs benchmark"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: nproc=$(nproc), cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
	"kernel $(uname -r), $(awk '/MemTotal/ { printf "%d MiB RAM", $2 / 1024 }' /proc/meminfo)"
echo "backing: $WORK on $(findmnt -n -o FSTYPE -T "$WORK") ($(df -P "$WORK" | awk 'NR == 2 { print $1 }')); libfuse $(pkg-config --modversion fuse3 2>/dev/null || echo '?')"
echo "descriptor limit (ulimit -n) for the daemon: $NOFILE"
echo "calls per case: C=1 $CALLS_1, C=8 $CALLS_8, C=64 $CALLS_64;" \
	"mix 1/3 pass (+ result), 1/3 mock (scenario), 1/3 block"

# want PART: is PART among the parts to run?
want() {
	case " $PARTS " in *" $1 "*) return 0 ;; esac
	return 1
}

# --- latency and throughput, same workload, same run ---------------------
ROWS=
THREADS=
if want calls; then
start_daemon run
MNT=$WORK/mnt-run
mkdir -m 0700 "$WORK/base" "$WORK/base-key" || die mkdir
timeout -s TERM $((T * 3)) "$B/tests/bench/baseline_server" "$WORK/base.sock" \
	"$WORK/base" "$WORK/base-key/host.key" "$POLICY" "$MOCKS" \
	>"$WORK/baseline.log" 2>&1 &
PIDS="$PIDS $!"
i=0
until [ -S "$WORK/base.sock" ]; do
	i=$((i + 1))
	[ $i -gt 100 ] && die "baseline did not start"
	sleep 0.1
done

# The daemon's threads, read after each run rather than sampled during
# it: a sampling loop would take CPU from the side being measured.  The
# daemon keeps up to 64 idle workers, so this is the run's peak.
daemon_threads() {
	nt=$(vm "$DPID" Threads)
	[ "${nt:-0}" -gt "$(cat "$WORK/threads")" ] && echo "$nt" >"$WORK/threads"
}

# rounds_for N: interleaved rounds for N calls per case.
rounds_for() {
	_r=$(($1 / 25))
	[ "$_r" -le "$MAX_ROUNDS" ] || _r=$MAX_ROUNDS
	[ "$_r" -ge 1 ] || _r=1
	echo "$_r"
}

# Disk latency drifts within seconds (fdatasync here can go from 250 to
# 450 us and back), so the two sides run interleaved in short rounds
# (alternating which goes first) and the latencies are pooled; calls/s is
# all calls over the summed wall time of each side.
for C in $CS; do
	eval N=\$CALLS_$C
	ROUNDS=$(rounds_for "$N")
	n=$((N / ROUNDS))
	rm -f "$WORK/lat-f" "$WORK/lat-s"
	fw=0
	sw=0
	echo 0 >"$WORK/threads"
	r=1
	while [ $r -le $ROUNDS ]; do
		for side in $( [ $((r % 2)) = 1 ] && echo "f s" || echo "s f"); do
			if [ $side = f ]; then
				R=$(run fuse "$MNT" "$C" "$n" "f$C-$r-" --out "$WORK/lat-f")
				daemon_threads
				fw=$(awk -v a="$fw" -v b="$(field "$R" wall_s)" 'BEGIN { print a + b }')
			else
				R=$(run socket "$WORK/base.sock" "$C" "$n" "s$C-$r-" --out "$WORK/lat-s")
				sw=$(awk -v a="$sw" -v b="$(field "$R" wall_s)" 'BEGIN { print a + b }')
			fi
			echo "  round $r $R"
		done
		r=$((r + 1))
	done
	THREADS="$THREADS C=$C:$(cat "$WORK/threads")"
	F=$("$CLIENT" stats "$WORK/lat-f") || die stats
	K=$("$CLIENT" stats "$WORK/lat-s") || die stats
	total=$(field "$F" calls)
	fc=$(awk -v c="$total" -v w="$fw" 'BEGIN { printf "%.1f", c / w }')
	sc=$(awk -v c="$total" -v w="$sw" 'BEGIN { printf "%.1f", c / w }')
	echo "  C=$C ($ROUNDS rounds) ledgerfs $F cps=$fc"
	echo "  C=$C baseline $K cps=$sc"
	ROWS="$ROWS
$C $total $(field "$F" p50_us) $(field "$F" p90_us) $(field "$F" p99_us) $fc $(field "$K" p50_us) $(field "$K" p90_us) $(field "$K" p99_us) $sc"
done
# The daemon's own count for one case: every call and result recorded.
n=$((CALLS_1 / $(rounds_for "$CALLS_1")))
expect_rows=$((n + (n + 2) / 3 + 2))
if [ -d "$MNT/cases/f1-1-0" ]; then
	rows=$(sed -n 's/.*"rows": *\([0-9]*\).*/\1/p' "$MNT/cases/f1-1-0/status")
	[ "$rows" = "$expect_rows" ] || die "case f1-1-0 has $rows rows, expected $expect_rows"
fi
fi

# --- memory: idle cases, then recorded calls, on a fresh daemon ----------
per_case=
per_call=
if want memory; then
start_daemon mem
MMNT=$WORK/mnt-mem
sleep 0.5
rss0=$(vm "$DPID" VmRSS)
O=$(timeout $T "$CLIENT" open --target "$MMNT" --cases "$IDLE_CASES" \
	--procs 8 --prefix idle- --policy "$POLICY" --mocks "$MOCKS" \
	2>>"$WORK/client.log") || die "opening $IDLE_CASES cases failed"
hwm1=$(vm "$DPID" VmHWM)
# Warm up the call path (worker threads, arenas) so the next delta is
# what the recorded calls themselves keep.
run fuse "$MMNT" 64 20 w- --out /dev/null >/dev/null
hwm2=$(vm "$DPID" VmHWM)
t0=$(now_ns)
MR=$(run fuse "$MMNT" 64 $((MEM_CALLS / 64)) m- --out /dev/null)
t1=$(now_ns)
hwm3=$(vm "$DPID" VmHWM)
mem_calls=$(field "$MR" calls)
per_case=$(( (hwm1 - rss0) * 1024 / IDLE_CASES ))
# The 64 cases of the measured run are charged at the idle per-case cost.
per_call=$(( ((hwm3 - hwm2) * 1024 - 64 * per_case) / mem_calls ))

fi

# --- ledgerctl verify on a large ledger ---------------------------------
vcpu=
if want verify; then
# Rows come from the real ledger_append; on tmpfs its fdatasync is free,
# so a 100 MB ledger takes seconds.  Verify runs on the disk under test.
SHM=$(mktemp -d /dev/shm/ledgerfs-bench.XXXXXX) || die "no /dev/shm"
mkdir -m 0700 "$WORK/vkey" || die mkdir
G=$(timeout $T "$B/tests/bench/bench_genledger" "$SHM" ledger.jsonl \
	bench-verify "$WORK/vkey/host.key" "$LEDGER_MB") || die "genledger failed"
cp "$SHM/ledger.jsonl" "$WORK/verify.jsonl" && sync
rm -rf "$SHM"
SHM=
bytes=$(stat -c %s "$WORK/verify.jsonl")
if [ -x "$B/ledgerctl" ]; then
	VERIFY="$B/ledgerctl verify"
else
	VERIFY="$B/tests/bench/bench_verify verify"
fi
# Wall-clock MB/s, and MB/s of the verifier's own CPU time (user + sys):
# on a shared machine the second is the one that does not depend on load.
verify_mbs() {
	t0=$(now_ns)
	timeout $T sh -c "$VERIFY \"\$1\" --key \"\$2\" >/dev/null; times" sh \
		"$WORK/verify.jsonl" "$WORK/vkey/host.key" >"$WORK/times" ||
		die "verify failed"
	t1=$(now_ns)
	# `times` prints the shell's, then its children's user and sys time.
	cpu=$(awk 'NR == 2 { u = $1; s = $2; sub(/m/, " ", u); sub(/m/, " ", s);
		split(u, a, " "); split(s, b, " "); sub(/s/, "", a[2]); sub(/s/, "", b[2]);
		print a[1] * 60 + a[2] + b[1] * 60 + b[2] }' "$WORK/times")
	awk -v b="$bytes" -v ns=$((t1 - t0)) -v cpu="$cpu" 'BEGIN {
		printf "%.1f (cpu %.1f)", b / 1048576 / (ns / 1e9),
			(cpu > 0 ? b / 1048576 / cpu : 0) }'
}
cold=n/a
if echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
	cold=$(verify_mbs)
fi
warm=$(verify_mbs)
warm2=$(verify_mbs)
vcpu=$(echo "$warm2" | sed 's/.*cpu \([0-9.]*\).*/\1/')
fi

# --- the table ----------------------------------------------------------
echo
echo "$ROWS" | awk 'BEGIN {
	printf "%-4s %7s | %-28s | %-28s | %-17s\n", "C", "calls",
		"ledgerfs p50/p99 us  calls/s", "baseline p50/p99 us  calls/s",
		"p50 x   calls/s x"
	print "-----+---------+------------------------------+------------------------------+------------------"
}
NF == 10 {
	printf "%-4s %7s | %7.0f %7.0f %12.0f | %7.0f %7.0f %12.0f | %6.2f %10.2f\n",
		$1, $2, $3, $5, $6, $7, $9, $10, $3 / $7, $6 / $10
}'
echo
[ -z "$THREADS" ] || echo "daemon peak threads during the ledgerfs runs:$THREADS"
if want memory; then
	echo "memory (daemon VmHWM; base VmRSS after start $rss0 kB):"
	echo "  $IDLE_CASES registered idle cases: $hwm1 kB -> $per_case bytes per open case ($(field "$O" secs) s to open)"
	echo "  $mem_calls recorded calls on 64 more cases: $hwm2 -> $hwm3 kB -> $per_call bytes per recorded call ($(((t1 - t0) / 1000000000)) s)"
fi
if want verify; then
	echo "verify: $(echo "$G" | sed 's/GENERATED //') ($VERIFY):" \
		"MB/s cold cache $cold, warm $warm, $warm2"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates wall times)"
echo
echo "$ROWS" | awk -v pc="$per_case" -v pk="$per_call" -v vw="$vcpu" '
function verdict(ok) { return ok ? "met" : "MISSED" }
$1 == 1 { p = $3 / $7; printf "target C=1 p50 <= 1.25 x baseline: %.2f x  %s\n", p, verdict(p <= 1.25) }
$1 == 64 { c = $6 / $10; printf "target C=64 calls/s >= 1.0 x baseline: %.2f x  %s\n", c, verdict(c >= 1.0) }
END {
	if (pc != "")
		printf "target <= 8192 bytes per open case: %d  %s\n", pc, verdict(pc <= 8192)
	if (pk != "")
		printf "target <= 256 bytes per recorded call: %d  %s\n", pk, verdict(pk <= 256)
	if (vw != "")
		printf "target verify >= 200 MB/s (cpu time, warm cache): %s  %s\n", vw, verdict(vw >= 200)
}'
