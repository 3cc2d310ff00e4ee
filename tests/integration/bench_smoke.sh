#!/bin/sh
# SPDX-License-Identifier: MIT
# bench_smoke.sh - `make bench` keeps working: tests/bench/run_bench.sh run
# at the smallest sizes measures every part and prints every goal of the
# performance work (README, Performance).  Nothing here is timed: the
# figures of so short a run mean nothing, only that each part ran.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
lf_require
for p in tests/bench/bench_client tests/bench/bench_floor \
	tests/bench/baseline_server tests/bench/bench_genledger \
	tests/bench/bench_restart ledgerfs-relay ledgerfs-mcp; do
	[ -x "$top_builddir/$p" ] || lf_skip_all "$p not built"
done
lf_setup

out=$(cd "$top_builddir" && BENCH_DIR=$work BENCH_KEEP=1 BENCH_CALLS_1=45 BENCH_CALLS_64=2 \
	BENCH_CS="1 64" BENCH_ROUNDS=1 BENCH_IDLE_CASES=40 BENCH_MEM_CALLS=128 \
	BENCH_SCALE_CALLING=8 BENCH_SCALE_CALLS=2 BENCH_LEDGER_MB=1 \
	BENCH_PATH_CALLS=4 BENCH_CONSOLE_CALLS=6 BENCH_RESTART="2 30" \
	top_builddir=$top_builddir top_srcdir=$top_srcdir \
	timeout 600 sh "$top_srcdir/tests/bench/run_bench.sh" 2>&1)
rc=$?

rule_begin the_bench_runs_every_part_to_its_end
rule_eq "exit status" 0 "$rc"
rule_hasnt "output" "$out" "not measured"
rule_hasnt "output" "$out" "run_bench:"
rule_end

rule_begin the_bench_prints_every_goal_as_a_ratio_of_its_own_run
for goal in "single call p50 / (overwrite floor + tmpfs call) =" \
	"beside it: / (append floor + tmpfs call) =" \
	"single call p50 with --pad-ledger=1M / (overwrite floor + tmpfs call) =" \
	"single call p50 with --sync=journal / (overwrite floor + tmpfs call) =" \
	"64 cases: disk calls/s / tmpfs calls/s =" \
	"64 cases with --sync=journal:" \
	"verify (chain + MAC, warm, wall):" \
	"verify --pubkey of a signed case (chain, tree, signature; its own figure):" \
	"memory per open case:" \
	"memory per recorded call (64 cases calling):" \
	"scale: 8 calling among 40 open:" \
	"scale with --sync=journal: 8 calling among 40 open:" \
	"relay overhead per call: +" \
	"a call the host runs: +" \
	"console streaming: call p50 x" \
	"restart of 2 cases x 30 rows each:"; do
	rule_has "goal line" "$out" "$goal"
done
rule_end

rule_begin every_side_prints_its_calls_per_second
# calls/s=N (while all cases call), then the whole rounds' N; floors "-".
rule_eq "sides without a figure" "" "$(echo "$out" | grep '^  C=' |
	grep -Ev 'calls/s=([0-9]+ \(whole rounds [0-9]+\)|- \(whole rounds -\))$')"
rule_end

rule_begin the_bench_leaves_no_mount_behind
rule_eq "mounts" "" "$(grep ledgerfs-bench /proc/mounts)"
rule_end

# BENCH_KEEP=1 kept the bench's folder: its daemons' and clients' logs
# (a sanitizer build reports there).
rule_begin the_bench_daemons_and_clients_report_no_sanitizer_error
rule_eq "reports" "" "$(cat "$work"/ledgerfs-bench.*/*.log 2>/dev/null |
	grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' | head -3)"
rule_end

lf_finish
