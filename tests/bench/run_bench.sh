#!/bin/sh
# SPDX-License-Identifier: MIT
# run_bench.sh - the ledgerfs benchmark (`make bench`, run from the build
# folder; README, Performance).  In one run, on the same machine and the
# same disk: a mediated call through a real ledgerfs mount whose backing
# folder is on the disk under test, the same build with its backing
# folder on a tmpfs (the ceiling: FUSE, decision and MAC with free
# flushes), and the two floors of a durable row on that disk (a 400-byte
# append + fdatasync; an overwrite of already flushed bytes + fdatasync);
# then memory per open case and per recorded call, 10,000 open cases with
# 1,000 calling, `ledgerctl verify` throughput, the relay's and the MCP
# server's overhead per call, the console's effect on a call while it
# streams, and restart time.  Prints each goal of the performance issue
# as a ratio against figures taken in the same run (a shared machine moves
# every absolute figure; the ratios stay meaningful).
#
# BENCH_QUICK=1 runs every part at a size that takes a minute or two (for
# CI and for a shared machine); sizes can also be set one by one:
#   BENCH_CALLS_1=2000 BENCH_CALLS_8=500 BENCH_CALLS_64=400  calls per case
#   BENCH_IDLE_CASES=10000    registered idle cases (memory and scale)
#   BENCH_MEM_CALLS=200000    recorded calls for the per-call memory figure
#   BENCH_SCALE_CALLING=1000 BENCH_SCALE_CALLS=20  cases calling at once
#                             among the idle ones, calls each
#   BENCH_LEDGER_MB=100       size of the ledger `verify` is timed on
#   BENCH_PATH_CALLS=1000     calls for the relay/MCP overhead
#   BENCH_CONSOLE_CALLS=2000  calls timed with and without the console
#   BENCH_RESTART="100 10000" cases and rows each for the restart figure
#   BENCH_LEDGERFS_OPTS=      extra daemon options, e.g. "--sync=file"
#   BENCH_ROUNDS=20           at most this many interleaved rounds per C
#   BENCH_SIDES="f p j t"     f: ledgerfs on disk, p: the same with
#                             --pad-ledger=1M, j: with --sync=journal,
#                             t: on tmpfs,
#                             s: the Unix-socket baseline server
#   BENCH_DIR=/var/tmp        where the disk backing folders live (the
#                             disk under test); BENCH_KEEP=1 keeps them
#   BENCH_CS="1 64"           the concurrencies to run
#   BENCH_SCALE_SIDES="f j"   memory and scale on the default daemon (f),
#                             scale on one with --sync=journal (j)
#   BENCH_PARTS="calls memory scale verify paths console restart"
set -u

B=${top_builddir:-.}
S=${top_srcdir:-$(dirname "$0")/../..}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
	q() { echo "$1"; }
else
	q() { echo "$2"; }
fi
CALLS_1=${BENCH_CALLS_1:-$(q 300 2000)}
CALLS_8=${BENCH_CALLS_8:-$(q 50 500)}
CALLS_64=${BENCH_CALLS_64:-$(q 25 400)}
IDLE_CASES=${BENCH_IDLE_CASES:-$(q 1000 10000)}
MEM_CALLS=${BENCH_MEM_CALLS:-$(q 12800 200000)}
SCALE_CALLING=${BENCH_SCALE_CALLING:-$(q 100 1000)}
SCALE_CALLS=${BENCH_SCALE_CALLS:-$(q 10 20)}
LEDGER_MB=${BENCH_LEDGER_MB:-$(q 20 100)}
PATH_CALLS=${BENCH_PATH_CALLS:-$(q 100 1000)}
CONSOLE_CALLS=${BENCH_CONSOLE_CALLS:-$(q 200 2000)}
RESTART=${BENCH_RESTART:-$(q "10 1000" "100 10000")}
MAX_ROUNDS=${BENCH_ROUNDS:-$(q 4 20)}
SIDES=${BENCH_SIDES:-f p j t}
CS=${BENCH_CS:-1 64}
SCALE_SIDES=${BENCH_SCALE_SIDES:-f j}
PARTS=${BENCH_PARTS:-calls memory scale verify paths console restart}
T=600 # bound on any single step, seconds
WARM=20 # a case's first calls, also left out in a figure beside (C = 1)

POLICY=$S/tests/bench/bench.policy.json
MOCKS=$S/tests/bench/bench.mocks.json
CLIENT=$B/tests/bench/bench_client
FLOOR=$B/tests/bench/bench_floor

for p in "$B/ledgerfs" "$CLIENT" "$FLOOR" "$B/tests/bench/baseline_server" \
	"$B/tests/bench/bench_genledger" "$B/tests/bench/bench_restart"; do
	[ -x "$p" ] || { echo "run_bench: $p is not built" >&2; exit 2; }
done

# The daemon holds descriptors per open case; give it room for the idle
# cases (the limit is reported with the results).
ulimit -n $((IDLE_CASES * 3 + SCALE_CALLING * 3 + 1024)) 2>/dev/null
NOFILE=$(ulimit -n)

# Root-owned 0700 folders below a sticky one: the daemon accepts them.
WORK=$(mktemp -d "${BENCH_DIR:-/var/tmp}/ledgerfs-bench.XXXXXX") || exit 2
chmod 0700 "$WORK"
SHM=$(mktemp -d /dev/shm/ledgerfs-bench.XXXXXX) || { rmdir "$WORK"; exit 2; }
chmod 0700 "$SHM"
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
			echo "run_bench: $m still mounted; $WORK and $SHM kept" >&2
			return
		fi
	done
	rm -rf "$SHM"
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

# The CPU time of a process in ms (user + system).
cpu_ms() {
	awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$1/stat"
}

now_ns() {
	date +%s%N
}

# calc EXPR: awk arithmetic, printed with up to two decimals.
calc() {
	awk "BEGIN { v = $1; printf (v == int(v) ? \"%d\" : \"%.2f\"), v }"
}

# start_daemon TAG PARENT [OPTION]: mounts $WORK/mnt-TAG over
# PARENT/backing-TAG; sets DPID (the daemon itself).
start_daemon() {
	mkdir -m 0700 "$2/backing-$1" "$WORK/key-$1" 2>/dev/null ||
		[ -d "$2/backing-$1" ] || die mkdir
	mkdir -m 0755 "$WORK/mnt-$1" || die mkdir
	timeout -s TERM $((T * 3)) "$B/ledgerfs" -f ${BENCH_LEDGERFS_OPTS:-} ${3:-} \
		--backing="$2/backing-$1" --key="$WORK/key-$1/host.key" \
		"$WORK/mnt-$1" >"$WORK/ledgerfs-$1.log" 2>&1 &
	tpid=$!
	PIDS="$PIDS $tpid"
	MOUNTS="$MOUNTS $WORK/mnt-$1"
	i=0
	until mountpoint -q "$WORK/mnt-$1" && [ -d "$WORK/mnt-$1/cases" ]; do
		i=$((i + 1))
		[ $i -gt $((T * 10)) ] && die "ledgerfs did not mount"
		kill -0 "$tpid" 2>/dev/null || die "ledgerfs exited"
		sleep 0.1
	done
	DPID=$(pgrep -P "$tpid" | head -1)
	[ -n "$DPID" ] || die "no daemon process"
}

# stop_daemon TAG
stop_daemon() {
	fusermount3 -u "$WORK/mnt-$1" 2>/dev/null || umount -l "$WORK/mnt-$1"
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

# want PART: is PART among the parts to run?
want() {
	case " $PARTS " in *" $1 "*) return 0 ;; esac
	return 1
}

# rounds_for N: interleaved rounds for N calls per case.
rounds_for() {
	_r=$(($1 / 25))
	[ "$_r" -le "$MAX_ROUNDS" ] || _r=$MAX_ROUNDS
	[ "$_r" -ge 1 ] || _r=1
	echo "$_r"
}

# Figures for the goals, read by the summary at the end.
G=$WORK/figures
: >"$G"
fig() { echo "$1=$2" >>"$G"; }
got() { awk -F= -v k="$1" '$1 == k { v = $2 } END { print v }' "$G"; }

echo "== ledgerfs benchmark$([ "${BENCH_QUICK:-0}" = 1 ] && echo " (quick sizes)")"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: nproc=$(nproc), cpu: $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)," \
	"kernel $(uname -r), $(awk '/MemTotal/ { printf "%d MiB RAM", $2 / 1024 }' /proc/meminfo)"
echo "disk under test: $WORK on $(findmnt -n -o FSTYPE -T "$WORK") ($(df -P "$WORK" | awk 'NR == 2 { print $1 }')); tmpfs: $SHM; libfuse $(pkg-config --modversion fuse3 2>/dev/null || echo '?')"
echo "descriptor limit (ulimit -n) for the daemon: $NOFILE"

# --- calls: ledgerfs on disk, on tmpfs, the floors; interleaved --------
if want calls; then
echo "calls per case: C=1 $CALLS_1, C=8 $CALLS_8, C=64 $CALLS_64;" \
	"mix 1/3 pass (+ result), 1/3 mock (scenario), 1/3 block"
case " $SIDES " in *" f "*) start_daemon disk "$WORK" ;; esac
case " $SIDES " in *" p "*) start_daemon pad "$WORK" --pad-ledger=1M ;; esac
case " $SIDES " in *" j "*) start_daemon jrn "$WORK" --sync=journal ;; esac
case " $SIDES " in *" t "*) start_daemon shm "$SHM" ;; esac
case " $SIDES " in *" s "*)
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
	done ;;
esac

# side X C N ROUND: one run of side X; prints its RESULT line.
side() {
	case $1 in
	f) run fuse "$WORK/mnt-disk" "$2" "$3" "f$2-$4-" --out "$WORK/lat-f" ;;
	p) run fuse "$WORK/mnt-pad" "$2" "$3" "p$2-$4-" --out "$WORK/lat-p" ;;
	j) run fuse "$WORK/mnt-jrn" "$2" "$3" "j$2-$4-" --out "$WORK/lat-j" ;;
	t) run fuse "$WORK/mnt-shm" "$2" "$3" "t$2-$4-" --out "$WORK/lat-t" ;;
	s) run socket "$WORK/base.sock" "$2" "$3" "s$2-$4-" --out "$WORK/lat-s" ;;
	a | o)
		[ $1 = a ] && m=append || m=overwrite
		timeout $T "$FLOOR" $m "$WORK/floor.dat" "$3" --out "$WORK/lat-$1" ||
			die "floor $m failed" ;;
	esac
}

# Disk latency drifts within seconds, so the sides run interleaved in
# short rounds (rotating which goes first) and the latencies are pooled;
# calls/s is all calls over the summed wall time of each side.  At C = 1
# the two floors run in the same rounds.
NAMES="f:ledgerfs-disk p:ledgerfs-padded j:ledgerfs-journal t:ledgerfs-tmpfs s:socket-baseline a:floor-append o:floor-overwrite"
for C in $CS; do
	eval N=\$CALLS_$C
	ROUNDS=$(rounds_for "$N")
	n=$((N / ROUNDS))
	ss=$SIDES
	[ "$C" = 1 ] && ss="$ss a o"
	for x in $ss; do
		rm -f "$WORK/lat-$x"
		eval W_$x=0 A_$x=0 K_$x=0
	done
	r=1
	while [ $r -le $ROUNDS ]; do
		order=$ss
		k=1
		while [ $k -lt $r ]; do # rotate the order by r - 1
			# one side alone has nothing to rotate (cut would repeat it)
			case $order in *" "*) order="${order#* } ${order%% *}" ;; esac
			k=$((k + 1))
		done
		for x in $order; do
			R=$(side "$x" "$C" "$n" "$r")
			case $x in
			a | o) t=$(awk -v c="$n" -v p="$(field "$R" p50_us)" 'BEGIN { print c * p / 1e6 }') ;;
			*)
				t=$(field "$R" wall_s)
				eval "A_$x=\$(awk -v a=\"\$A_$x\" -v b=\"$(field "$R" all_calling_s)\" 'BEGIN { print a + b }')"
				eval "K_$x=\$((K_$x + $(field "$R" all_calling_calls)))"
				;;
			esac
			eval "W_$x=\$(awk -v a=\"\$W_$x\" -v b=\"$t\" 'BEGIN { print a + b }')"
			[ -n "${BENCH_VERBOSE:-}" ] && echo "  round $r $x $R"
		done
		r=$((r + 1))
	done
	for x in $ss; do
		F=$("$CLIENT" stats "$WORK/lat-$x") || die stats
		eval w=\$W_$x a=\$A_$x k=\$K_$x
		total=$(field "$F" calls)
		# calls/s while all C cases were calling (bench_client.c,
		# bench_all_calling); the whole rounds' figure beside.
		cpsw=$(awk -v c="$total" -v w="$w" 'BEGIN { printf "%.0f", c / w }')
		cps=$(awk -v c="$k" -v w="$a" 'BEGIN { printf "%.0f", (w > 0 ? c / w : 0) }')
		name=$(echo "$NAMES" | tr ' ' '\n' | sed -n "s/^$x://p")
		case $x in a | o) cps="-" cpsw="-" ;; esac
		printf '  C=%-3s %-16s calls=%-6s p50=%7.0f us  p90=%7.0f us  p99=%7.0f us  calls/s=%s (whole rounds %s)\n' \
			"$C" "$name" "$total" "$(field "$F" p50_us)" "$(field "$F" p90_us)" "$(field "$F" p99_us)" "$cps" "$cpsw"
		fig "p50_${x}_$C" "$(field "$F" p50_us)"
		# A lone case's first calls after its registration run slower
		# on this kind of disk (README, Performance): the same rounds
		# past each case's first WARM calls, beside.
		if [ "$C" = 1 ] && [ "$n" -gt $((WARM * 2)) ]; then
			FW=$("$CLIENT" stats "$WORK/lat-$x" --skip $WARM --every "$n") ||
				die stats
			fig "p50w_${x}_1" "$(field "$FW" p50_us)"
			case $x in
			a | o) what="its file's first $WARM writes" ;;
			*) what="each case's first $WARM calls" ;;
			esac
			printf '        past %s: p50=%7.0f us\n' "$what" "$(field "$FW" p50_us)"
		fi
		fig "p99_${x}_$C" "$(field "$F" p99_us)"
		fig "cps_${x}_$C" "$cps"
		fig "cpsw_${x}_$C" "$cpsw"
	done
done
for x in disk pad jrn shm; do
	mountpoint -q "$WORK/mnt-$x" && stop_daemon $x
done
fi

# --- memory, then scale, on one fresh daemon on disk --------------------
# For each of SCALE_SIDES: f, the default daemon (memory, then scale);
# j, one with --sync=journal (scale alone).
if want memory || want scale; then
for SX in $SCALE_SIDES; do
case $SX in
f) sfx= label= mtag=mem mopt= ;;
j) sfx=_j label=" (--sync=journal)" mtag=memj mopt=--sync=journal ;;
*) die "BENCH_SCALE_SIDES: f or j, not $SX" ;;
esac
start_daemon $mtag "$WORK" $mopt
MMNT=$WORK/mnt-$mtag
mem_calls=
sleep 0.5
rss0=$(vm "$DPID" VmRSS)
O=$(timeout $T "$CLIENT" open --target "$MMNT" --cases "$IDLE_CASES" \
	--procs 8 --prefix idle- --policy "$POLICY" --mocks "$MOCKS" \
	2>>"$WORK/client.log") || die "opening $IDLE_CASES cases failed"
hwm1=$(vm "$DPID" VmHWM)
per_case=$(((hwm1 - rss0) * 1024 / IDLE_CASES))
echo "memory$label: $IDLE_CASES registered idle cases: $rss0 -> $hwm1 kB (VmHWM) -> $per_case bytes per open case ($(field "$O" secs) s to open)"
fig per_case$sfx "$per_case"
if want memory && [ $SX = f ]; then
	# Warm up the call path (worker threads, arenas) so the next delta
	# is what the recorded calls themselves keep.
	run fuse "$MMNT" 64 20 w- --out /dev/null >/dev/null
	hwm2=$(vm "$DPID" VmHWM)
	t0=$(now_ns)
	MR=$(run fuse "$MMNT" 64 $((MEM_CALLS / 64)) m- --out /dev/null)
	t1=$(now_ns)
	hwm3=$(vm "$DPID" VmHWM)
	mem_calls=$(field "$MR" calls)
	# The 64 cases of the measured run are charged at the idle per-case cost.
	per_call=$((((hwm3 - hwm2) * 1024 - 64 * per_case) / mem_calls))
	echo "memory: $mem_calls recorded calls on 64 more cases: $hwm2 -> $hwm3 kB -> $per_call bytes per recorded call ($(((t1 - t0) / 1000000)) ms; $(field "$MR" cps) calls/s)"
	fig per_call "$per_call"
	fig cps_mem_64 "$(field "$MR" cps)"
fi
if want scale; then
	# Among the idle cases, SCALE_CALLING more cases call at once; the
	# 64-case figure beside it is taken on the same daemon just before.
	R64=$(run fuse "$MMNT" 64 "$SCALE_CALLS" x64- --out /dev/null)
	hwm4=$(vm "$DPID" VmHWM)
	SR=$(run fuse "$MMNT" "$SCALE_CALLING" "$SCALE_CALLS" scale- --out /dev/null)
	hwm5=$(vm "$DPID" VmHWM)
	thr=$(vm "$DPID" Threads)
	open_now=$(ls "$MMNT/cases" | wc -l)
	echo "scale$label: $open_now open cases, $SCALE_CALLING calling at once ($SCALE_CALLS calls each): $(field "$SR" all_calling_cps) calls/s while all call ($(field "$SR" cps) over the whole run), p50 $(field "$SR" p50_us) us, p99 $(field "$SR" p99_us) us; 64 calling on the same daemon: $(field "$R64" all_calling_cps) calls/s ($(field "$R64" cps)), p99 $(field "$R64" p99_us) us"
	echo "scale$label: daemon VmHWM $hwm4 -> $hwm5 kB ($(((hwm5 - hwm4) * 1024 / SCALE_CALLING)) bytes per added calling case, its rows and the worker threads it woke included), $thr threads after the run"
	fig scale_cps$sfx "$(field "$SR" all_calling_cps)"
	fig scale_cpsw$sfx "$(field "$SR" cps)"
	fig scale_cpsw64$sfx "$(field "$R64" cps)"
	fig scale_p99$sfx "$(field "$SR" p99_us)"
	fig scale_cps64$sfx "$(field "$R64" all_calling_cps)"
	# Each open case's share of the peak, once the recorded calls are
	# charged at the per-call figure above (when it was taken).
	calls_done=$(( ${mem_calls:-0} + $( [ -n "${mem_calls:-}" ] && echo 1280 || echo 0) + 64 * SCALE_CALLS + $(field "$SR" calls) ))
	fig scale_per_case$sfx "$((((hwm5 - rss0) * 1024 - calls_done * ${per_call:-0}) / open_now))"
fi
stop_daemon $mtag
done
fi

# --- ledgerctl verify on a large ledger ---------------------------------
if want verify; then
# Rows come from the real ledger_append; on tmpfs its fdatasync is free,
# so a 100 MB ledger takes seconds.  Verify runs on the disk under test.
mkdir -m 0700 "$SHM/gen" "$WORK/vkey" || die mkdir
GEN=$(timeout $T "$B/tests/bench/bench_genledger" "$SHM/gen" ledger.jsonl \
	bench-verify "$WORK/vkey/host.key" "$LEDGER_MB") || die "genledger failed"
cp "$SHM/gen/ledger.jsonl" "$WORK/verify.jsonl" && sync
rm -rf "$SHM/gen"
bytes=$(stat -c %s "$WORK/verify.jsonl")
if [ -x "$B/ledgerctl" ]; then
	VERIFY="$B/ledgerctl verify"
else
	VERIFY="$B/tests/bench/bench_verify verify"
fi
# Wall-clock MB/s, and MB/s of the verifier's own CPU time (user + sys),
# timed from its exec to its exit: no shell, `timeout` or `date` process
# of the harness inside the interval (each costs milliseconds here).  No
# timeout on the wait either: Python polls for a child's exit with one,
# in sleeps of up to 50 ms (the whole bench runs under `timeout`).
# time_mbs BYTES CMD...: "wall CPU" MB/s of CMD over BYTES.
time_mbs() {
	python3 - "$@" <<'PY' || die "verify failed: $*"
import resource, subprocess, sys, time
size, cmd = int(sys.argv[1]), sys.argv[2:]
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.perf_counter()
p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
t1 = time.perf_counter()
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
if p.returncode != 0:
    sys.exit(1)
mb = size / 1048576
print("%.0f %.0f" % (mb / (t1 - t0), mb / cpu if cpu > 0 else 0))
PY
}
# verify_mbs [FILE [ARGS...]]: the bench's ledger with the host key, or
# FILE with it and ARGS.
verify_mbs() {
	local file=${1:-$WORK/verify.jsonl}
	[ $# -gt 0 ] && shift
	time_mbs "$(stat -c %s "$file")" $VERIFY "$file" --key \
		"$WORK/vkey/host.key" "$@"
}
cold=n/a
if echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then
	cold=$(verify_mbs | cut -d' ' -f1)
fi
best=0
runs=
for k in 1 2 3; do
	v=$(verify_mbs)
	runs="$runs $(echo "$v" | cut -d' ' -f1) (cpu $(echo "$v" | cut -d' ' -f2))"
	w=$(echo "$v" | cut -d' ' -f1)
	[ "$w" -gt "$best" ] && best=$w
done
echo "verify: $(echo "$GEN" | sed 's/GENERATED //') ($VERIFY): MB/s cold cache $cold, warm$runs"
fig verify_mbs "$best"
# The daemon's own ledgers are sealed (ledgerfs-ledger(5) SEALS): the
# same size sealed, read with its seal key file (the last epoch's MACs)
# and with its initial seal key (every epoch's), beside.
if [ -x "$B/ledgerctl" ]; then
	mkdir -m 0700 "$SHM/gens" "$WORK/sealed" || die mkdir
	GENS=$(timeout $T "$B/tests/bench/bench_genledger" "$SHM/gens" \
		ledger.jsonl bench-sealed "$WORK/vkey/host.key" "$LEDGER_MB" \
		"$WORK/sealed/k0") || die "genledger (sealed) failed"
	cp "$SHM/gens/ledger.jsonl" "$SHM/gens/ledger.jsonl.seal" \
		"$WORK/sealed/" && sync
	rm -rf "$SHM/gens"
	for how in file k0; do
		set -- "$WORK/sealed/ledger.jsonl"
		[ "$how" = k0 ] && set -- "$@" --seal-key "$WORK/sealed/k0"
		verify_mbs "$@" >/dev/null # into the page cache
		runs=
		for k in 1 2 3; do
			runs="$runs $(verify_mbs "$@" | cut -d' ' -f1)"
		done
		echo "verify, sealed ($how): $(echo "$GENS" | sed 's/GENERATED //'): MB/s warm$runs"
	done
	# A signed case as the daemon leaves it (ledgerfs-ledger(5) SIGNED
	# CHECKPOINTS), its calls made through the daemon's core: `verify
	# --pubkey` of its folder (chain, tree and signature, no secret),
	# and `verify --key` of it (the current epoch's MACs, the tree and
	# the checkpoint every turn needs).  About 790 bytes a call.
	mkdir -m 0700 "$WORK/pkey" || die mkdir
	timeout $T "$B/tests/bench/bench_restart" "$SHM/pub" \
		"$WORK/pkey/host.key" 1 $((LEDGER_MB * 1330)) --sign ||
		die "bench_restart --sign failed"
	cp -a "$SHM/pub/cases/bench000" "$WORK/pubcase" && sync
	rm -rf "$SHM/pub"
	"$B/ledgerctl" pubkey --key "$WORK/pkey/host.key" >"$WORK/pub.vkey" ||
		die "ledgerctl pubkey failed"
	pbytes=$(stat -c %s "$WORK/pubcase/ledger.jsonl")
	prows=$(wc -l <"$WORK/pubcase/ledger.jsonl")
	for how in pubkey key; do
		if [ $how = pubkey ]; then
			set -- "$B/ledgerctl" verify --pubkey="$WORK/pub.vkey" \
				"$WORK/pubcase"
		else
			set -- "$B/ledgerctl" verify "$WORK/pubcase" --key \
				"$WORK/pkey/host.key"
		fi
		time_mbs "$pbytes" "$@" >/dev/null # into the page cache
		runs= best=0
		for k in 1 2 3; do
			w=$(time_mbs "$pbytes" "$@" | cut -d' ' -f1)
			runs="$runs $w"
			[ "$w" -gt "$best" ] && best=$w
		done
		echo "verify, signed case (--$how): rows=$prows bytes=$pbytes: MB/s warm$runs"
		fig "verify_case_${how}_mbs" "$best"
	done
fi
fi

# --- relay and MCP server: overhead per call over a direct file call ----
if want paths; then
P=$(top_srcdir=$S top_builddir=$B timeout $T sh "$S/tests/bench/relay_overhead.sh" "$PATH_CALLS" 2>"$WORK/paths.log" | tail -1)
case $P in
'{'*)
	js() { echo "$P" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$1', ''))"; }
	echo "paths: direct call p50 $(js direct_p50_us) us; relay p50 $(js relay_p50_us) us (+$(js relay_overhead_p50_us)); direct call and its result p50 $(js direct_result_p50_us) us; MCP p50 $(js mcp_p50_us) us (+$(js mcp_overhead_p50_us), over the call and its result: both record two rows); $PATH_CALLS calls each, interleaved"
	fig relay_over "$(js relay_overhead_p50_us)"
	fig mcp_over "$(js mcp_overhead_p50_us)"
	fig direct_p50 "$(js direct_p50_us)"
	fig direct_result_p50 "$(js direct_result_p50_us)"
	if [ -n "$(js host_p50_us)" ]; then
		echo "paths: a call the host runs (/bin/cat as its executor) p50 $(js host_p50_us) us (+$(js host_overhead_p50_us) over the direct call and its result)"
		fig host_p50 "$(js host_p50_us)"
		fig host_over "$(js host_overhead_p50_us)"
	fi ;;
*) echo "paths: not measured: ${P:-$(grep -v '^ *$' "$WORK/paths.log" | tail -1)}" ;;
esac
fi

# --- the console streaming a busy case: its effect on that case's calls --
if want console && [ -x "$B/ledgerctl" ]; then
start_daemon con "$WORK"
"$B/ledgerctl" console --key="$WORK/key-con/host.key" "$WORK/mnt-con" \
	>"$WORK/console.url" 2>"$WORK/console.log" &
CPID=$!
PIDS="$PIDS $CPID"
i=0
until grep -q console: "$WORK/console.url" 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 200 ] && die "the console did not start"
	sleep 0.05
done
URL=$(sed -n 's/^console: //p' "$WORK/console.url")
TOK=${URL##*token=}
BASE=${URL%%/\?*}
rm -f "$WORK/lat-cq" "$WORK/lat-cs"
rounds=$(rounds_for "$CONSOLE_CALLS")
n=$((CONSOLE_CALLS / rounds))
r=1
while [ $r -le $rounds ]; do
	run fuse "$WORK/mnt-con" 1 "$n" "cq$r-" --out "$WORK/lat-cq" >/dev/null
	# A page following the busy case: its event stream, and the case
	# read again (status, then its last 100 rows) ten times a second.
	curl -s -N -H "Authorization: Bearer $TOK" "$BASE/api/events?case=cs$r-0" >"$WORK/events" 2>/dev/null &
	EPID=$!
	(while :; do
		t=$(curl -s -H "Authorization: Bearer $TOK" "$BASE/api/cases/cs$r-0?limit=0" |
			sed -n 's/.*"rows_total": *\([0-9][0-9]*\).*/\1/p')
		o=$((${t:-0} > 100 ? ${t:-0} - 100 : 0))
		curl -s -o /dev/null -H "Authorization: Bearer $TOK" "$BASE/api/cases/cs$r-0?offset=$o&limit=100"
		sleep 0.1
	done) &
	LPID=$!
	run fuse "$WORK/mnt-con" 1 "$n" "cs$r-" --out "$WORK/lat-cs" >/dev/null
	kill "$EPID" "$LPID" 2>/dev/null
	wait "$EPID" "$LPID" 2>/dev/null
	r=$((r + 1))
done
Q=$("$CLIENT" stats "$WORK/lat-cq")
W=$("$CLIENT" stats "$WORK/lat-cs")
echo "console: call p50/p99 alone $(field "$Q" p50_us)/$(field "$Q" p99_us) us, while the console streams $(field "$W" p50_us)/$(field "$W" p99_us) us ($(field "$W" calls) calls each; $(grep -c '^data:' "$WORK/events") events in the last round)"
fig console_ratio "$(calc "$(field "$W" p50_us) / $(field "$Q" p50_us)")"
kill "$CPID" 2>/dev/null
stop_daemon con
fi

# --- restart: cases x rows made through the core, then a timed mount -----
if want restart; then
set -- $RESTART
rcases=$1 rrows=$2
mkdir -m 0700 "$WORK/key-rs" || die mkdir
t0=$(now_ns)
timeout $((T * 3)) "$B/tests/bench/bench_restart" "$SHM/backing-rs" \
	"$WORK/key-rs/host.key" "$rcases" "$rrows" ||
	die "bench_restart failed"
t1=$(now_ns)
mb=$(du -sm "$SHM/backing-rs" | cut -f1)
t2=$(now_ns)
start_daemon rs "$SHM"
t3=$(now_ns)
rcpu=$(cpu_ms "$DPID")
rrss=$(vm "$DPID" VmRSS)
echo "restart: $rcases cases x $rrows calls ($mb MB of backing on tmpfs, made in $(((t1 - t0) / 1000000)) ms): mounted after $(((t3 - t2) / 1000000)) ms wall, $rcpu ms of the daemon's CPU; RSS $((rrss / 1024)) MiB"
fig restart_ms "$(((t3 - t2) / 1000000))"
fig restart_cpu "$rcpu"
stop_daemon rs
fi

# --- the goals, as ratios of figures from this run ----------------------
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine inflates wall times)"
echo "goals (performance issue), from this run:"
verdict() { awk "BEGIN { exit !($1) }" && echo met || echo MISSED; }
f1=$(got p50_f_1) t1=$(got p50_t_1) o1=$(got p50_o_1) a1=$(got p50_a_1)
if [ -n "$f1" ] && [ -n "$t1" ] && [ -n "$o1" ]; then
	x=$(calc "$f1 / ($o1 + $t1)")
	echo "  single call p50 / (overwrite floor + tmpfs call) = $f1 / ($o1 + $t1) = $x  (<= 1.1: $(verdict "$x <= 1.1"))"
	echo "    beside it: / (append floor + tmpfs call) = $(calc "$f1 / ($a1 + $t1)"); call over the overwrite floor: +$(calc "$f1 - $o1") us, tmpfs call $t1 us"
	awk "BEGIN { exit !($o1 > 1000) }" &&
		echo "    (a flush of overwritten bytes took over 1 ms: other work contended for the disk, so this ratio says little)"
fi
p1=$(got p50_p_1)
if [ -n "$p1" ] && [ -n "$t1" ] && [ -n "$o1" ]; then
	x=$(calc "$p1 / ($o1 + $t1)")
	echo "  single call p50 with --pad-ledger=1M / (overwrite floor + tmpfs call) = $p1 / ($o1 + $t1) = $x  (<= 1.1: $(verdict "$x <= 1.1"))"
fi
j1=$(got p50_j_1)
if [ -n "$j1" ] && [ -n "$t1" ] && [ -n "$o1" ]; then
	x=$(calc "$j1 / ($o1 + $t1)")
	echo "  single call p50 with --sync=journal / (overwrite floor + tmpfs call) = $j1 / ($o1 + $t1) = $x  (<= 1.1: $(verdict "$x <= 1.1"))"
fi
tw=$(got p50w_t_1) ow=$(got p50w_o_1)
if [ -n "$tw" ] && [ -n "$ow" ]; then
	line="    beside them, each case past its first $WARM calls (and each floor's file past its first $WARM writes):"
	for x in f p j; do
		v=$(got "p50w_${x}_1")
		[ -n "$v" ] && line="$line $x $(calc "$v / ($ow + $tw)")"
	done
	echo "$line  (f default, p padded, j journal; the goal is the line above)"
fi
# whole X: the same ratio over whole rounds, tails included.
whole() { calc "$(got "cpsw_${1}_64") / $(got cpsw_t_64)"; }
j64=$(got cps_j_64)
[ -n "$j64" ] && [ -n "$(got cps_t_64)" ] &&
	echo "  64 cases with --sync=journal: $j64 / $(got cps_t_64) = $(calc "$j64 / $(got cps_t_64)")  (>= 0.85: $(verdict "$j64 / $(got cps_t_64) >= 0.85")); p99 $(got p99_j_64) us; whole rounds $(whole j)"
p64=$(got cps_p_64)
[ -n "$p64" ] && [ -n "$(got cps_t_64)" ] &&
	echo "  64 cases with --pad-ledger=1M: $p64 / $(got cps_t_64) = $(calc "$p64 / $(got cps_t_64)")  (>= 0.85: $(verdict "$p64 / $(got cps_t_64) >= 0.85")); p99 $(got p99_p_64) us; whole rounds $(whole p)"
f64=$(got cps_f_64) t64=$(got cps_t_64)
if [ -n "$f64" ] && [ -n "$t64" ]; then
	x=$(calc "$f64 / $t64")
	echo "  64 cases: disk calls/s / tmpfs calls/s = $f64 / $t64 = $x  (>= 0.85: $(verdict "$x >= 0.85")); p99 disk $(got p99_f_64) us, tmpfs $(got p99_t_64) us; whole rounds $(whole f)"
	echo "    (calls/s while all 64 cases call: in each round, from its start until a first case is done, each call counted for its share of that time; whole rounds include each round's tail)"
fi
v=$(got verify_mbs)
[ -n "$v" ] && echo "  verify (chain + MAC, warm, wall): $v MB/s  (>= 800: $(verdict "$v >= 800"))"
v=$(got verify_case_pubkey_mbs)
[ -n "$v" ] && echo "  verify --pubkey of a signed case (chain, tree, signature; its own figure): $v MB/s; verify --key of it: $(got verify_case_key_mbs) MB/s"
v=$(got per_case)
[ -n "$v" ] && echo "  memory per open case: $v bytes  (<= 8192: $(verdict "$v <= 8192"))"
v=$(got per_call)
[ -n "$v" ] && echo "  memory per recorded call (64 cases calling): $v bytes  (<= 256: $(verdict "$v <= 256"))"
for sfx in "" _j; do
	v=$(got scale_cps$sfx)
	[ -n "$v" ] || continue
	[ -z "$sfx" ] && label= || label=" with --sync=journal"
	b=$(got scale_cps64$sfx)
	x=$(calc "$v / $b")
	p=$(got scale_p99$sfx) m=$(got scale_per_case$sfx)
	echo "  scale$label: $SCALE_CALLING calling among $IDLE_CASES open: $v calls/s / 64-case $b = $x  (>= 0.8: $(verdict "$x >= 0.8")); p99 $p us  (< 100000: $(verdict "$p < 100000")); $m bytes an open case  (<= 8192: $(verdict "$m <= 8192"))"
	echo "    (calls/s while all of them call; over the whole runs $(calc "$(got scale_cpsw$sfx) / $(got scale_cpsw64$sfx)"))"
done
v=$(got relay_over)
[ -n "$v" ] && echo "  relay overhead per call: +$v us p50 (direct call $(got direct_p50) us); MCP server: +$(got mcp_over) us (direct call and its result $(got direct_result_p50) us)"
v=$(got host_over)
[ -n "$v" ] && echo "  a call the host runs: +$v us p50 over the direct call and its result ($(got host_p50) us)"
v=$(got console_ratio)
[ -n "$v" ] && echo "  console streaming: call p50 x $v of the same calls without it"
v=$(got restart_ms)
set -- $RESTART
[ -n "$v" ] && echo "  restart of $1 cases x $2 rows each: $v ms wall, $(got restart_cpu) ms CPU"
exit 0
