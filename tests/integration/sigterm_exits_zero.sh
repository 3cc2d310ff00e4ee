#!/bin/sh
# SPDX-License-Identifier: MIT
# sigterm_exits_zero.sh - SIGTERM and SIGINT are a clean stop (ledgerfs(8)
# SIGNALS): the daemon unmounts, exits 0, and its cases resume at the
# next start with their ledger verifying.
. "$(dirname "$0")/lib.sh"
lf_setup

# stop_by SIG: signal the daemon, wait for it; its exit status in $st.
stop_by() {
	kill -s "$1" "$lf_daemon"
	_i=0
	while kill -0 "$lf_daemon" 2>/dev/null && [ $_i -lt 200 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	wait "$lf_daemon"
	st=$?
	lf_daemon=
}

lf_start
lf_open_reg S
lf_call S c1 lookup_a >/dev/null
rule_begin sigterm_unmounts_and_exits_zero
stop_by TERM
rule_eq exit 0 "$st"
lf_mounted && rule_fail "still mounted"
rule_end

lf_start
rule_begin case_resumes_after_sigterm
rule_eq state registered "$(lf_state S)"
rule_has "next call" "$(lf_call S c2 lookup_a)" '"sequence":2'
lf_verify S >/dev/null || rule_fail "ledger does not verify"
rule_end

rule_begin sigint_unmounts_and_exits_zero
stop_by INT
rule_eq exit 0 "$st"
lf_mounted && rule_fail "still mounted"
rule_end

lf_start
check ledger_verifies_after_sigint lf_verify S

# systemd's stop (ledgerfs(8) SYSTEMD): ExecStop unmounts, then SIGTERM
# follows at once, while the daemon may still be finishing its stop.
rule_begin sigterm_right_after_the_unmount_still_exits_zero
for t in 1 2 3 4 5 6 7 8; do
	lf_call S "u$t" lookup_a >/dev/null
	: >"$work/daemon.err"
	timeout 20 fusermount3 -u "$mnt" || rule_fail "trial $t: unmount"
	kill -s TERM "$lf_daemon" 2>/dev/null
	wait "$lf_daemon"
	st=$?
	lf_daemon=
	rule_eq "trial $t: exit" 0 "$st"
	rule_has "trial $t: the stop's summary" "$(cat "$work/daemon.err")" \
		"ledgerfs: stopped;"
	lf_start
done
rule_end

# Files still open at the stop: their RELEASE never reaches the daemon,
# which frees them itself (the sanitizer build checks for leaks).
LFHOLD=$top_builddir/tests/integration/lfhold
rule_begin sigterm_with_files_still_open_exits_zero
exec 8<"$mnt/cases/S/status"
mkfifo "$work/hold.in"
"$LFHOLD" "$mnt/cases/S/target/request" 1 100 <"$work/hold.in" >"$work/hold.out" &
lf_bg_pids=$!
exec 7>"$work/hold.in"
_i=0
until grep -q ready "$work/hold.out" 2>/dev/null || [ $_i -gt 100 ]; do
	sleep 0.05
	_i=$((_i + 1))
done
rule_has "partial line held" "$(cat "$work/hold.out")" "held=1"
stop_by TERM
rule_eq exit 0 "$st"
exec 7>&- 8<&-
wait $lf_bg_pids 2>/dev/null
lf_bg_pids=
rule_end
lf_finish
