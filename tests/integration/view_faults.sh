#!/bin/sh
# SPDX-License-Identifier: MIT
# view_faults.sh - the daemon is killed (SIGKILL) while 8 targets call in
# loops (ledgerfs(8) RESTART, ledgerfs-ledger(5) RECOVERY): every target
# gets errors rather than hanging, the dead mount is detached, and a restart
# on the same backing folder verifies every ledger, keeps every acknowledged
# call, keeps registered cases registered (sequences continue) and pending
# calls pending.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
N=8

cat >"$work/target.sh" <<'EOF'
#!/bin/sh
# $1 = lfwrite, $2 = target folder.  One lfwrite per call, so every
# outcome is an errno name; stops after 3 failures in a row.
lfw=$1 d=$2
i=1 fails=0
while [ $i -le 100000 ]; do
	id=c$i
	if [ $((i % 2)) -eq 0 ]; then tool=lookup_x; else tool=send_x; fi
	out=$("$lfw" "$d/request" "{\"call_id\":\"$id\",\"tool\":\"$tool\",\"args\":{\"i\":$i}}\\n" 2>&1)
	case $out in
	write=[0-9]*)
		echo "ack $id $tool"
		fails=0
		;;
	*)
		echo "err $id $(echo "$out" | tr '\n' ' ')"
		fails=$((fails + 1))
		[ $fails -lt 3 ] || break
		;;
	esac
	if [ $tool = lookup_x ] && [ $((i % 4)) -eq 0 ]; then
		"$lfw" "$d/result" "{\"call_id\":\"$id\",\"returned\":{},\"is_error\":false,\"real_executed\":true}\\n" >/dev/null 2>&1
	fi
	i=$((i + 1))
done
echo stopped
EOF

pids=
k=1
while [ $k -le $N ]; do
	lf_open_reg "F$k"
	# The bound that matters is after the kill (below); this one only
	# keeps a broken run from living forever.
	timeout 300 sh "$work/target.sh" "$LFWRITE" "$(lf_tdir "F$k")" >"$work/F$k.log" 2>&1 &
	pids="$pids $!"
	k=$((k + 1))
done
lf_bg_pids=$pids
# let every target get some calls in
i=0
while [ $i -lt 100 ]; do
	all=1
	for k in $(seq 1 $N); do
		[ "$(grep -c '^ack' "$work/F$k.log" 2>/dev/null)" -ge 20 ] || all=0
	done
	[ $all = 0 ] || break
	sleep 0.1
	i=$((i + 1))
done
dead_pid=$lf_daemon
kill -9 "$dead_pid"
wait "$dead_pid" 2>/dev/null
lf_daemon=

# Every target must stop within 20 s of the kill, however loaded the
# machine was before it.
i=0
while [ $i -lt 200 ]; do
	left=0
	for k in $(seq 1 $N); do
		grep -q '^stopped' "$work/F$k.log" || left=$((left + 1))
	done
	[ $left -gt 0 ] || break
	sleep 0.1
	i=$((i + 1))
done
timed_out=$left
for p in $pids; do
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
lf_bg_pids=
assert_eq no_target_hangs_after_the_daemon_is_killed 0 "$timed_out"
# ENOTCONN or ECONNABORTED from the dead mount; ENOENT once the helper
# has detached it (these targets use the host's mount point).
rule_begin every_target_gets_ENOTCONN_ECONNABORTED_or_ENOENT
for k in $(seq 1 $N); do
	log=$work/F$k.log
	grep -q '^stopped' "$log" || rule_fail "F$k did not stop"
	grep '^err' "$log" | grep -qE 'ENOTCONN|ECONNABORTED|ENOENT' ||
		rule_fail "F$k: $(grep -m1 '^err' "$log")"
	if grep '^err' "$log" | grep -vqE 'ENOTCONN|ECONNABORTED|ENOENT'; then
		rule_fail "F$k other error: $(grep '^err' "$log" | grep -m1 -vE 'ENOTCONN|ECONNABORTED|ENOENT')"
	fi
done
rule_end

# The daemon's helper sees it gone and detaches the dead mount itself.
i=0
while lf_mounted && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
rule_begin the_helper_detaches_the_mount_of_a_killed_daemon
lf_mounted && rule_fail "$mnt still mounted 10 s after the kill"
rule_end
umount -l "$mnt" 2>/dev/null
rule_begin dead_mount_is_detached_and_nothing_left_in_proc_mounts
lf_mounted && rule_fail "$mnt still in /proc/mounts"
grep -q "$work" /proc/mounts && rule_fail "$(grep "$work" /proc/mounts)"
rule_end

lf_start
rule_begin restart_verifies_every_ledger
for k in $(seq 1 $N); do
	v=$(lf_verify "F$k" 2>&1) || rule_fail "F$k: $v"
done
rule_end
rule_begin every_acknowledged_call_is_in_its_ledger_after_the_kill
for k in $(seq 1 $N); do
	l=$(lf_ledger "F$k")
	grep -F '"phase":"decision"' "$l" | sed 's/.*"call_id":"\([^"]*\)".*/\1/' | sort >"$work/F$k.ids"
	sed -n 's/^ack \([^ ]*\).*/\1/p' "$work/F$k.log" | sort >"$work/F$k.acked"
	missing=$(comm -23 "$work/F$k.acked" "$work/F$k.ids" | tr '\n' ' ')
	[ -z "$missing" ] || rule_fail "F$k lost: $missing"
	[ -s "$work/F$k.acked" ] || rule_fail "F$k: no call acknowledged"
done
rule_end
rule_begin registered_cases_stay_registered_and_sequences_continue
for k in $(seq 1 $N); do
	c=F$k
	[ "$(lf_state "$c")" = registered ] || rule_fail "$c: $(lf_state "$c")"
	last=$(grep -F '"phase":"decision"' "$(lf_ledger "$c")" | tail -n1 | sed 's/.*"sequence":\([0-9]*\).*/\1/')
	r=$(lf_call "$c" after send_x) || rule_fail "$c: call failed"
	case $r in
	*"\"sequence\":$((last + 1)),"*) ;;
	*) rule_fail "$c: expected sequence $((last + 1)), reply $r" ;;
	esac
done
rule_end
rule_begin pending_pass_calls_stay_pending_and_take_their_result
for k in $(seq 1 $N); do
	c=F$k
	l=$(lf_ledger "$c")
	grep -F '"phase":"decision"' "$l" | grep -F '"mode":"pass"' |
		sed 's/.*"call_id":"\([^"]*\)".*/\1/' | sort >"$work/$c.pass"
	grep -F '"phase":"completion"' "$l" | sed 's/.*"call_id":"\([^"]*\)".*/\1/' | sort >"$work/$c.done"
	p=$(comm -23 "$work/$c.pass" "$work/$c.done" | head -n1)
	if [ -z "$p" ]; then
		rule_fail "$c: no pending pass call"
		continue
	fi
	out=$("$LFWRITE" "$(lf_tdir "$c")/result" "{\"call_id\":\"$p\",\"returned\":{\"late\":1},\"is_error\":false,\"real_executed\":true}\\n")
	case $out in
	*close=OK*) ;;
	*) rule_fail "$c: result for $p: $(echo "$out" | tr '\n' ' ')" ;;
	esac
	grep -F '"phase":"completion"' "$l" | grep -qF "\"call_id\":\"$p\"" ||
		rule_fail "$c: no completion row for $p"
done
rule_end
rule_begin ledgers_verify_after_calls_following_the_restart
for k in $(seq 1 $N); do
	v=$(lf_verify "F$k" 2>&1) || rule_fail "F$k: $v"
done
rule_end
lf_finish
