# SPDX-License-Identifier: MIT
# lib.sh - shared helpers for the real-mount view tests (view_*.sh):
# a private root-owned work folder, starting and stopping the daemon with
# clean-up on every exit path, opening and registering cases by hand, and
# `ok - NAME` / `not ok - NAME: detail` checks with a final summary.
#
# Sourced, not run.  Binaries come from $top_builddir (set by `make
# check`; when run by hand, from the current folder).

: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
LEDGERFS=$top_builddir/ledgerfs
LEDGERCTL=$top_builddir/ledgerctl
LEDGERCALL=$top_builddir/ledgercall
LFWRITE=$top_builddir/tests/integration/lfwrite
# A sanitizer build must report nothing; leaks count.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export ASAN_OPTIONS UBSAN_OPTIONS

lf_passed=0
lf_failed=0
lf_daemon=
lf_bg_pids=
lf_nstart=0

lf_skip_all() {
	echo "SKIP: $*"
	exit 77
}

lf_require() {
	[ "$(id -u)" = 0 ] || lf_skip_all "needs root (FUSE allow_other, bwrap, setpriv)"
	[ -c /dev/fuse ] || lf_skip_all "no /dev/fuse"
	for b in "$LEDGERFS" "$LEDGERCTL" "$LEDGERCALL" "$LFWRITE"; do
		[ -x "$b" ] || lf_skip_all "$b not built"
	done
	command -v fusermount3 >/dev/null || lf_skip_all "fusermount3 missing"
}

ok() {
	lf_passed=$((lf_passed + 1))
	echo "ok - $1"
}

not_ok() {
	lf_failed=$((lf_failed + 1))
	echo "not ok - $1: $2"
}

# check NAME COMMAND...: ok when the command succeeds.
check() {
	_n=$1
	shift
	if "$@" >/dev/null 2>&1; then ok "$_n"; else not_ok "$_n" "failed: $*"; fi
}

assert_eq() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected [$2] got [$(printf '%s' "$3" | head -c 600)]"
	fi
}

assert_contains() { # NAME HAYSTACK NEEDLE
	case $2 in
	*"$3"*) ok "$1" ;;
	*) not_ok "$1" "[$3] not in [$(printf '%s' "$2" | head -c 600)]" ;;
	esac
}

assert_not_contains() { # NAME HAYSTACK NEEDLE
	case $2 in
	*"$3"*) not_ok "$1" "[$3] found in [$(printf '%s' "$2" | head -c 600)]" ;;
	*) ok "$1" ;;
	esac
}

# All of several conditions for one rule: collect, then report once.
# rule_begin NAME; rule_eq WHAT EXPECTED ACTUAL; ...; rule_end
rule_begin() {
	lf_rule=$1
	lf_rule_bad=
}

rule_fail() {
	lf_rule_bad="$lf_rule_bad${lf_rule_bad:+; }$*"
}

rule_eq() { # WHAT EXPECTED ACTUAL
	[ "$2" = "$3" ] || rule_fail "$1: expected [$2] got [$(printf '%s' "$3" | head -c 400)]"
}

rule_has() { # WHAT HAYSTACK NEEDLE
	case $2 in
	*"$3"*) ;;
	*) rule_fail "$1: [$3] not in [$(printf '%s' "$2" | head -c 400)]" ;;
	esac
}

rule_hasnt() { # WHAT HAYSTACK NEEDLE
	case $2 in
	*"$3"*) rule_fail "$1: [$3] found in [$(printf '%s' "$2" | head -c 400)]" ;;
	*) ;;
	esac
}

rule_end() {
	if [ -z "$lf_rule_bad" ]; then ok "$lf_rule"; else not_ok "$lf_rule" "$lf_rule_bad"; fi
}

# --- the work folder and the daemon -------------------------------------

lf_cleanup() {
	_st=$?
	set +e
	for _p in $lf_bg_pids; do
		kill -9 "$_p" 2>/dev/null
	done
	if [ -n "${mnt:-}" ] && grep -q " $mnt " /proc/mounts 2>/dev/null; then
		timeout 10 fusermount3 -u "$mnt" 2>/dev/null ||
			umount -l "$mnt" 2>/dev/null
	fi
	if [ -n "$lf_daemon" ]; then
		kill "$lf_daemon" 2>/dev/null
		sleep 0.2
		kill -9 "$lf_daemon" 2>/dev/null
		wait "$lf_daemon" 2>/dev/null
	fi
	# Other file systems a test mounted under $work (lf_extra_mounts).
	for _m in ${lf_extra_mounts:-}; do
		umount -l "$_m" 2>/dev/null
	done
	if [ -n "${work:-}" ] && [ -d "$work" ]; then
		if [ -n "${LF_KEEP:-}" ]; then
			echo "# kept $work"
		else
			rm -rf "$work"
		fi
	fi
	exit $_st
}

# Make $work (root-owned, 0755: the daemon checks the backing's ancestors),
# $mnt, $backing and $key, and arm the clean-up.
lf_setup() {
	lf_require
	work=$(mktemp -d /tmp/lfview.XXXXXX) || exit 99
	chmod 0755 "$work"
	mnt=$work/mnt
	backing=$work/backing
	key=$work/keys/host.key
	mkdir "$mnt" "$work/keys" "$work/tmp"
	chmod 0700 "$work/keys"
	trap lf_cleanup EXIT
	trap 'exit 130' INT TERM HUP
}

# lf_start [DAEMON OPTIONS...]: start on $mnt, wait until it serves.
# LF_DAEMON_OPTS adds options to every start, to run tests again in
# another mode: with --sync=journal every test passes but those that need
# another file system (a tmpfs of 1 or 2 MiB, ramfs) or another --sync;
# with --pad-ledger=64K the tests that read the backing ledger's bytes
# (grep, tail, cmp with the view) find its padding, as
# ledgerfs-ledger(5) PADDING says they would.
lf_start() {
	lf_nstart=$((lf_nstart + 1))
	"$LEDGERFS" -f --backing="$backing" --key="$key" ${LF_DAEMON_OPTS:-} "$@" "$mnt" \
		>>"$work/daemon.out" 2>>"$work/daemon.err" &
	lf_daemon=$!
	_i=0
	until [ -d "$mnt/cases" ]; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ] || ! kill -0 "$lf_daemon" 2>/dev/null; then
			echo "# ledgerfs did not start:" >&2
			sed 's/^/# /' "$work/daemon.err" >&2
			exit 99
		fi
		sleep 0.05
	done
}

# Clean stop: unmount, the daemon exits by itself; 1 if it had to be killed.
lf_stop() {
	[ -n "$lf_daemon" ] || return 0
	timeout 20 fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
	_i=0
	while kill -0 "$lf_daemon" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt 200 ]; then
			kill -9 "$lf_daemon"
			wait "$lf_daemon" 2>/dev/null
			lf_daemon=
			return 1
		fi
		sleep 0.05
	done
	wait "$lf_daemon" 2>/dev/null
	lf_daemon=
	return 0
}

# The daemon dies without warning; the dead mount is detached.
lf_kill9() {
	kill -9 "$lf_daemon" 2>/dev/null
	wait "$lf_daemon" 2>/dev/null
	lf_daemon=
	umount -l "$mnt" 2>/dev/null
}

lf_mounted() {
	grep -q " $mnt " /proc/mounts
}

# --- cases --------------------------------------------------------------

LF_POLICY_DEFAULT='interactions:
  - match: lookup_*
    mode: pass
  - match: send_*
    mode: mock
    mock: {status: sent}
  - match: resume_line
    mode: mock
  - match: delete_*
    mode: block
default: {mode: block}
'

LF_MOCKS_DEFAULT='version: 1
mocks:
  - tool: resume_line
    scenario: restore
    responses:
      - {response: {step: 1}, sets_state: resumed}
      - {response: {step: 2}}
      - {response: {step: 3}}
'

# lf_case_dir C: the case's folder in the view
lf_cdir() { echo "$mnt/cases/$1"; }
lf_tdir() { echo "$mnt/cases/$1/target"; }
lf_ledger() { echo "$backing/cases/$1/ledger.jsonl"; }

# lf_open C [POLICY_TEXT [MOCKS_TEXT]]: mkdir, policy, mocks; no register.
lf_open() {
	mkdir "$mnt/cases/$1" || return 1
	printf '%s' "${2:-$LF_POLICY_DEFAULT}" >"$mnt/cases/$1/policy" || return 1
	if [ -n "${3-$LF_MOCKS_DEFAULT}" ]; then
		printf '%s' "${3-$LF_MOCKS_DEFAULT}" >"$mnt/cases/$1/mocks" || return 1
	fi
}

lf_token() { tr -d '\n' <"$mnt/cases/$1/token"; }

lf_register() {
	printf '{"case_id":"%s","token":"%s"}\n' "$1" "$(lf_token "$1")" \
		>"$mnt/cases/$1/target/register"
}

# lf_open_reg C [POLICY [MOCKS]]: open and register.
lf_open_reg() {
	lf_open "$@" && lf_register "$1"
}

# lf_executor_dirs: $tools (0755, root's: executors must be) and $run
# (1777: whichever user an executor runs as can leave its marks there).
lf_executor_dirs() {
	tools=$work/tools
	run=$work/run
	mkdir "$tools" "$run"
	chmod 0755 "$tools"
	chmod 1777 "$run"
}

# lf_gate_executor: $tools/gate, an executor that leaves a mark
# $run/started.* and waits for $run/release, then returns
# {"released":true}; $GATE_POLICY passes gate through it and blocks the
# rest; lf_gate_started counts the marks.
lf_gate_executor() {
	lf_executor_dirs
	printf '#!/bin/sh\ncat >/dev/null\nmktemp %s/started.XXXXXX >/dev/null\nwhile [ ! -e %s/release ]; do sleep 0.05; done\necho "{\\"released\\":true}"\n' \
		"$run" "$run" >"$tools/gate"
	chmod 0755 "$tools/gate"
	GATE_POLICY="interactions:
  - match: gate
    mode: pass
    exec: {argv: [$tools/gate], timeout: 60s}
default: {mode: block}
"
}
lf_gate_started() { ls "$run" | grep -c '^started\.'; }
# lf_gate_calls PREFIX N: cases G1..GN each call gate in the background
# (ids PREFIX1..PREFIXN, replies in $work/reply.I, their pids in
# $gate_pids), with a watchdog that releases them after 30 s, so that a
# daemon that holds a call fails the rules instead of hanging.
lf_gate_calls() {
	(sleep 30; touch "$run/release") &
	lf_bg_pids="$lf_bg_pids $!"
	gate_pids=
	_i=1
	while [ $_i -le "$2" ]; do
		(lf_call "G$_i" "$1$_i" gate >"$work/reply.$_i" 2>&1) &
		gate_pids="$gate_pids $!"
		_i=$((_i + 1))
	done
	lf_bg_pids="$lf_bg_pids $gate_pids"
}
lf_released() { [ -e "$run/release" ]; }
# lf_wait_done PID: until PID ends or the gates are released.
lf_wait_done() {
	while kill -0 "$1" 2>/dev/null && ! lf_released; do
		sleep 0.05
	done
}
# lf_served_while_gated ID [NEW]: inside a rule, while gate executors
# wait, case E's call ID is answered (blocked by its default policy) and,
# given NEW, E's status is read and a case NEW is made: each before the
# gates are released.
lf_served_while_gated() {
	(lf_call E "$1" anything >"$work/$1.reply") &
	lf_wait_done $!
	lf_released && rule_fail "another case's call waited for the executor"
	rule_has "other case's reply" "$(cat "$work/$1.reply")" '"mode":"block"'
	[ -n "${2:-}" ] || return 0
	(lf_status E >"$work/$1.status") &
	lf_wait_done $!
	lf_released && rule_fail "another case's status waited for the executor"
	rule_has "other case's status" "$(cat "$work/$1.status")" '"state": "registered"'
	(mkdir "$mnt/cases/$2") &
	lf_wait_done $!
	lf_released && rule_fail "a new case waited for the executor"
	[ -d "$mnt/cases/$2" ] || rule_fail "no new case $2"
}
# lf_wait_gates N: until N gate executors have started (at most 20 s).
lf_wait_gates() {
	_n=0
	while [ "$(lf_gate_started)" -lt "$1" ] && [ $_n -lt 400 ]; do
		_n=$((_n + 1))
		sleep 0.05
	done
}

# lf_open_host_echo C: open and register case C whose one tool,
# echo_args, the host runs (ledgerfs-policy(5) HOST EXECUTORS); it returns
# {"by":"host","got":ARGS}.
lf_open_host_echo() {
	mkdir -p "$work/tools" && chmod 0755 "$work/tools"
	printf '#!/bin/sh\nprintf %s "{\\"got\\":$(cat),\\"by\\":\\"host\\"}"\n' "'%s'" \
		>"$work/tools/echo_args"
	chmod 0755 "$work/tools/echo_args"
	lf_open_reg "$1" "interactions:
  - match: echo_args
    mode: pass
    exec: {argv: [$work/tools/echo_args]}
default: {mode: block}
" ""
}

# lf_call C ID TOOL [ARGS_JSON]: one call by the shell; prints the reply.
lf_call() {
	_args=${4:-}
	[ -n "$_args" ] || _args='{}'
	printf '{"call_id":"%s","tool":"%s","args":%s}\n' "$2" "$3" "$_args" \
		>"$mnt/cases/$1/target/request" && cat "$mnt/cases/$1/target/reply"
}

# lf_write C FILE DATA...: lfwrite into the target folder (timeout 30)
lf_write() {
	_c=$1
	_f=$2
	shift 2
	timeout 30 "$LFWRITE" "$mnt/cases/$_c/target/$_f" "$@"
}

# lf_rows C [PATTERN]: ledger rows (matching the fixed string PATTERN).
lf_rows() {
	if [ $# -gt 1 ]; then
		grep -cF -- "$2" "$(lf_ledger "$1")"
	else
		wc -l <"$(lf_ledger "$1")" | tr -d ' '
	fi
}

# blen TEXT: byte length after lfwrite's escape decoding of \n only
blen() { printf '%s' "$1" | sed 's/\\n/N/g' | tr -d '\n' | wc -c | tr -d ' '; }

lf_status() { cat "$mnt/cases/$1/status"; }

# lf_count C KEY: a number from status (counts are unique keys in it).
lf_count() {
	lf_status "$1" | sed -n "s/^ *\"$2\": \\([0-9]*\\).*/\\1/p" | head -n1
}

lf_state() {
	lf_status "$1" | sed -n 's/^ *"state": "\([a-z]*\)".*/\1/p'
}

lf_verify() { # C: the backing ledger verifies offline with the key
	timeout 30 "$LEDGERCTL" verify "$backing/cases/$1" --key "$key"
}

# lf_expect_refused NAME CASE FILE ERRNO REFUSAL PHASE [LFWRITE ARGS...]:
# the first write fails with ERRNO, exactly one new row is appended and
# it is a PHASE row with "refusal":"REFUSAL", and `error` names ERRNO.
lf_expect_refused() {
	_name=$1 _c=$2 _f=$3 _errno=$4 _code=$5 _phase=$6
	shift 6
	_before=$(lf_rows "$_c")
	_out=$(lf_write "$_c" "$_f" "$@")
	_after=$(lf_rows "$_c")
	_last=$(tail -n1 "$(lf_ledger "$_c")")
	_err=$(cat "$mnt/cases/$_c/target/error")
	rule_begin "$_name"
	rule_eq "first write" "write=$_errno" "$(echo "$_out" | grep -m1 '^write=')"
	rule_eq "new rows" 1 $((_after - _before))
	rule_has "row phase" "$_last" "\"phase\":\"$_phase\""
	rule_has "row refusal" "$_last" "\"refusal\":\"$_code\""
	rule_has "error file" "$_err" "$_errno "
	rule_end
}

# lf_expect_refused_after_close NAME CASE FILE ERRNO [LFWRITE ARGS...]:
# the first write fails with ERRNO, no row is appended (nothing follows
# case_closed, ledgerfs(8) ERRORS), and `error` names ERRNO.
lf_expect_refused_after_close() {
	_name=$1 _c=$2 _f=$3 _errno=$4
	shift 4
	_before=$(lf_rows "$_c")
	_out=$(lf_write "$_c" "$_f" "$@")
	_after=$(lf_rows "$_c")
	_last=$(tail -n1 "$(lf_ledger "$_c")")
	_err=$(cat "$mnt/cases/$_c/target/error")
	rule_begin "$_name"
	rule_eq "first write" "write=$_errno" "$(echo "$_out" | grep -m1 '^write=')"
	rule_eq "new rows" 0 $((_after - _before))
	rule_has "last row" "$_last" '"phase":"case_closed"'
	rule_has "error file" "$_err" "$_errno "
	rule_end
}

# lf_expect_accepted NAME CASE FILE NEWROWS [LFWRITE ARGS...]: every
# write succeeds, close succeeds, NEWROWS rows are appended.
lf_expect_accepted() {
	_name=$1 _c=$2 _f=$3 _n=$4
	shift 4
	_before=$(lf_rows "$_c")
	_out=$(lf_write "$_c" "$_f" "$@")
	_after=$(lf_rows "$_c")
	rule_begin "$_name"
	rule_hasnt "writes" "$_out" "write=E"
	rule_has "close" "$_out" "close=OK"
	rule_eq "new rows" "$_n" $((_after - _before))
	rule_end
}

# --- the end of a script ------------------------------------------------

# A sanitizer build of the daemon must have reported nothing.
lf_check_sanitizer() {
	if [ -f "$work/daemon.err" ] &&
		grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$work/daemon.err"; then
		not_ok daemon_has_no_sanitizer_report "$(grep -m3 -E 'ERROR:|runtime error:|#[0-9] ' "$work/daemon.err" | tr '\n' ' ' | head -c 1500)"
	else
		ok daemon_has_no_sanitizer_report
	fi
}

lf_finish() {
	[ -z "$lf_daemon" ] || lf_stop
	lf_check_sanitizer
	if [ "$lf_failed" -ne 0 ] && [ -f "$work/daemon.err" ]; then
		echo "# daemon stderr (tail):"
		tail -n 30 "$work/daemon.err" | sed 's/^/#   /'
	fi
	echo "$lf_passed passed, $lf_failed failed"
	[ "$lf_failed" -eq 0 ]
}
