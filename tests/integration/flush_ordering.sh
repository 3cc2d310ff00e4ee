#!/bin/sh
# SPDX-License-Identifier: MIT
# flush_ordering.sh - what a target's write and the host's reads see while
# the write's row is being flushed (ledgerfs(8) --sync, group): the write
# returns only once the flush is over, a read of the case that would show
# the row waits for that flush, and the reply is on the request's
# descriptor when the write returns.  The flush is held open for real:
# strace's fault injection delays every flush the daemon makes
# (fdatasync, fsync, syncfs) by HOLD_MS.
. "$(dirname "$0")/lib.sh"
lf_setup
command -v strace >/dev/null || lf_skip_all "no strace"
HOLD_MS=800
CALL='{"call_id":"c1","tool":"lookup_x","args":{}}\n'

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# hold_flushes: from now on every flush of the daemon starts HOLD_MS late.
hold_flushes() {
	_tasks=
	for _t in /proc/"$lf_daemon"/task/*; do
		_tasks="$_tasks -p ${_t##*/}"
	done
	# shellcheck disable=SC2086 # one -p per thread
	strace -f -qq -o /dev/null -e trace=fdatasync,fsync,syncfs \
		-e inject=fdatasync,fsync,syncfs:delay_enter=${HOLD_MS}000 \
		$_tasks 2>"$work/strace.err" &
	tracer=$!
	lf_bg_pids="$lf_bg_pids $tracer"
	sleep 1 # attached to every thread
	kill -0 "$tracer" 2>/dev/null || {
		cat "$work/strace.err" >&2
		lf_skip_all "strace cannot attach here"
	}
}

release_flushes() {
	kill "$tracer" 2>/dev/null
	wait "$tracer" 2>/dev/null
}

lf_start
lf_open_reg A || exit 99
lf_open_reg B || exit 99
hold_flushes

rule_begin a_target_write_returns_only_after_the_flush_of_its_row
t0=$(now_ms)
out=$(timeout 30 "$LFWRITE" --rdwr "$(lf_tdir A)/request" "$CALL")
t1=$(now_ms)
echo "# write took $((t1 - t0)) ms, flushes held $HOLD_MS ms"
rule_has "acknowledged" "$out" "write=$(blen "$CALL")"
[ $((t1 - t0)) -ge $((HOLD_MS - 50)) ] ||
	rule_fail "the write returned after $((t1 - t0)) ms, before its flush"
rule_end

rule_begin the_reply_is_on_the_request_descriptor_when_the_write_returns
rule_has "reply read back" "$out" '"call_id":"c1"'
rule_has "its mode" "$out" '"mode":"pass"'
rule_end

rule_begin a_read_of_the_case_waits_for_the_flush_of_a_row_it_would_show
before=$(lf_count B rows)
lines=$(lf_rows B)
timeout 30 "$LFWRITE" --rdwr "$(lf_tdir B)/request" "$CALL" \
	>"$work/b.out" 2>&1 &
writer=$!
lf_bg_pids="$lf_bg_pids $writer"
# Its row is in the backing file once written, before its flush is over.
_i=0
while [ "$(lf_rows B)" -le "$lines" ] && [ $_i -lt 200 ]; do
	sleep 0.02
	_i=$((_i + 1))
done
t0=$(now_ms)
after=$(lf_count B rows)
t1=$(now_ms)
wait "$writer"
echo "# status read took $((t1 - t0)) ms; rows $before -> $after"
rule_eq "rows shown" $((before + 1)) "$after"
# Without the wait, status answers in milliseconds, showing a row that
# is not yet durable.
[ $((t1 - t0)) -ge $((HOLD_MS / 4)) ] ||
	rule_fail "status showed the row after $((t1 - t0)) ms, during its flush"
rule_has "the writer's acknowledgement" "$(cat "$work/b.out")" "write=$(blen "$CALL")"
rule_end

release_flushes
lf_stop || rule_fail "daemon had to be killed"
lf_finish
