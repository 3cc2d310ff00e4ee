#!/bin/sh
# SPDX-License-Identifier: MIT
# durability.sh - how rows are made durable (ledgerfs-ledger(5) DESCRIPTION;
# ledgerfs(8) --sync): by default rows that cases append at the same time
# share one flush (group commit), and the daemon's stop line says how many
# rows took how many flushes; --sync=file gives every row its own fdatasync,
# and so does a backing file system where syncfs is not known to be durable
# (ramfs here); any other --sync is refused.  Either way every acknowledged
# call is in a ledger that verifies.
. "$(dirname "$0")/lib.sh"
lf_setup
NCASES=8
NCALLS=60

# calls_in_parallel TAG: NCASES writers, NCALLS calls each, at once.
calls_in_parallel() {
	_tag=$1
	_k=1
	while [ $_k -le $NCASES ]; do
		lf_open_reg "$_tag$_k"
		_k=$((_k + 1))
	done
	set --
	_i=1
	while [ $_i -le $NCALLS ]; do
		set -- "$@" "{\"call_id\":\"c$_i\",\"tool\":\"send_x\",\"args\":{}}\\n"
		_i=$((_i + 1))
	done
	_pids=
	_k=1
	while [ $_k -le $NCASES ]; do
		timeout 120 "$LFWRITE" --rdwr "$(lf_tdir "$_tag$_k")/request" "$@" \
			>"$work/$_tag$_k.out" 2>&1 &
		_pids="$_pids $!"
		_k=$((_k + 1))
	done
	lf_bg_pids="$_pids"
	for _p in $_pids; do
		wait "$_p"
	done
	lf_bg_pids=
}

# every_call_landed TAG: each writer's calls acknowledged, in a ledger
# that verifies.  Sets rows: those appended after case_opened, in all.
every_call_landed() {
	_rows=0
	_k=1
	while [ $_k -le $NCASES ]; do
		_c=$1$_k
		[ "$(grep -c '^write=[0-9]' "$work/$_c.out")" -eq $NCALLS ] ||
			rule_fail "$_c: not every call acknowledged"
		[ "$(lf_rows "$_c" '"phase":"decision"')" -eq $NCALLS ] ||
			rule_fail "$_c: $(lf_rows "$_c" '"phase":"decision"') decision rows"
		lf_verify "$_c" >/dev/null 2>&1 || rule_fail "$_c: ledger does not verify"
		_rows=$((_rows + $(lf_rows "$_c") - 1))
		_k=$((_k + 1))
	done
	rows=$_rows
}

rule_begin concurrent_cases_share_flushes_and_every_row_is_counted
lf_start
calls_in_parallel G
every_call_landed G
lf_stop || rule_fail "daemon had to be killed"
line=$(grep "made durable" "$work/daemon.err")
echo "# $line"
got_rows=$(echo "$line" | sed -n 's/.*stopped; \([0-9]*\) rows made durable by \([0-9]*\) flushes/\1/p')
flushes=$(echo "$line" | sed -n 's/.*stopped; \([0-9]*\) rows made durable by \([0-9]*\) flushes/\2/p')
# case_opened rows are written before the case joins the group.
rule_eq "rows through the group" "$rows" "$got_rows"
[ -n "$flushes" ] && [ "$flushes" -lt "$got_rows" ] ||
	rule_fail "no flush was shared: $line"
rule_end

# ledgerfs(8) --sync: with group commit no thread waits through the flush
# of a target's write; the thread that led it (or the write's own, when
# that flush was over first) answers it.
rule_begin no_thread_waits_through_the_flush_of_a_targets_call
: >"$work/daemon.err"
lf_start
calls_in_parallel A
every_call_landed A
lf_stop || rule_fail "daemon had to be killed"
line=$(grep "writes of targets answered" "$work/daemon.err")
echo "# $line"
rule_eq "writes answered with no thread waiting" \
	"ledgerfs: $((NCASES * NCALLS)) writes of targets answered with no thread waiting for their flush" \
	"$line"
rule_end

# ledgerfs(8) LIFECYCLE: a close writes a completion_missing row for each
# pending passed call; they share the flush of the case_closed row, so a
# target that left thousands pending cannot hold the host's close.
rule_begin a_close_marks_pending_calls_missing_in_a_few_flushes
: >"$work/daemon.err"
lf_start
lf_open_reg PEND
python3 - "$(lf_tdir PEND)/request" <<'PY' || rule_fail "calls"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
for i in range(1000):
    os.write(fd, b'{"call_id":"p%d","tool":"lookup_a","args":{}}\n' % i)
    assert b'"mode":"pass"' in os.read(fd, 65536)
PY
rule_has "pending" "$(lf_status PEND)" '"pending": 1000,'
echo close >"$(lf_cdir PEND)/ctl" || rule_fail "close"
rule_eq "missing rows" 1000 "$(lf_rows PEND '"phase":"completion_missing"')"
lf_stop || rule_fail "daemon had to be killed"
line=$(grep "made durable" "$work/daemon.err")
echo "# $line"
got_rows=$(echo "$line" | sed -n 's/.*stopped; \([0-9]*\) rows made durable by \([0-9]*\) flushes/\1/p')
flushes=$(echo "$line" | sed -n 's/.*stopped; \([0-9]*\) rows made durable by \([0-9]*\) flushes/\2/p')
# 1,000 calls, one after another, take a flush each; the close a few more.
[ -n "$flushes" ] && [ "$got_rows" -ge 2000 ] && [ "$flushes" -lt 1050 ] ||
	rule_fail "the close took a flush a row: $line"
lf_verify PEND >/dev/null 2>&1 || rule_fail "PEND does not verify"
rule_end

rule_begin sync_file_flushes_each_row_alone
: >"$work/daemon.err"
lf_start --sync=file
calls_in_parallel F
every_call_landed F
lf_stop || rule_fail "daemon had to be killed"
rule_hasnt "stop line" "$(cat "$work/daemon.err")" "made durable"
rule_hasnt "stop line" "$(cat "$work/daemon.err")" "writes of targets answered"
rule_end

# ramfs: syncfs there is not known to be durable, so no group.
rule_begin backing_without_a_durable_syncfs_gets_one_fdatasync_per_row
mkdir -m 0755 "$work/ramfs"
if mount -t ramfs -o mode=0755 ramfs "$work/ramfs"; then
	lf_extra_mounts="$work/ramfs"
	saved_backing=$backing
	backing=$work/ramfs/backing
	: >"$work/daemon.err"
	lf_start
	rule_has "start line" "$(cat "$work/daemon.err")" "no group commit here"
	calls_in_parallel R
	every_call_landed R
	lf_stop || rule_fail "daemon had to be killed"
	rule_hasnt "stop line" "$(cat "$work/daemon.err")" "made durable"
	backing=$saved_backing
else
	rule_fail "cannot mount a ramfs"
fi
rule_end

rule_begin unknown_sync_mode_is_refused
out=$(timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" \
	--sync=fast "$mnt" 2>&1)
rule_eq status 2 $?
rule_has message "$out" "--sync must be group|file|journal, not 'fast'"
lf_mounted && rule_fail "mounted anyway"
rule_end
lf_finish
