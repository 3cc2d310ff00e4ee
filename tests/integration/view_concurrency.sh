#!/bin/sh
# SPDX-License-Identifier: MIT
# view_concurrency.sh - many targets at once against one daemon (ledgerfs(8)
# THE VIEW and PROTOCOL, ledgerfs-ledger(5) VERIFICATION): 16 cases x 200
# calls from 16 parallel shell targets (pass, mock and block mixed, results
# for passed calls, a quarter of them through ledgercall); then 4 writers
# sharing one case.  Every ledger verifies, sequences run 1..N without gaps,
# every acknowledged call is recorded and every reply read back belongs to
# its writer.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
NCASES=16
NCALLS=200

# target CASE: a shell target; logs each call id whose write succeeded
cat >"$work/target.sh" <<'EOF'
#!/bin/sh
# $1 = target folder, $2 = number of calls, $3 = ledgercall or empty,
# $4 = a scratch file for ledgercall's output
d=$1 n=$2 lc=$3 out=$4
i=1 fails=0
while [ $i -le $n ]; do
	id=c$i
	case $((i % 3)) in
	0) tool=lookup_x ;;
	1) tool=send_x ;;
	2) tool=delete_x ;;
	esac
	if [ -n "$lc" ]; then
		"$lc" --dir "$d" --tool $tool --args "{\"i\":$i}" --call-id $id >"$out" 2>/dev/null
		rc=$?
		case $rc in
		0 | 3 | 4) echo "ack $id" ;;
		*) echo "fail $id rc=$rc" && fails=$((fails + 1)) ;;
		esac
		reply=$(cat "$out")
	elif printf '{"call_id":"%s","tool":"%s","args":{"i":%d}}\n' $id $tool $i >"$d/request"; then
		echo "ack $id"
		reply=$(cat "$d/reply")
	else
		echo "fail $id"
		fails=$((fails + 1))
		reply=
	fi
	if [ $fails -ge 5 ]; then
		echo "gave up after 5 failures"
		exit 1
	fi
	case $reply in
	*"\"call_id\":\"$id\""*) ;;
	*) echo "badreply $id $reply" ;;
	esac
	if [ $tool = lookup_x ]; then
		printf '{"call_id":"%s","returned":{"i":%d},"is_error":false,"real_executed":true}\n' $id $i >"$d/result" ||
			echo "resultfail $id"
	fi
	i=$((i + 1))
done
echo finished
EOF

pids=
k=1
while [ $k -le $NCASES ]; do
	lf_open_reg "K$k"
	lc=
	[ $((k % 4)) -eq 0 ] && lc=$LEDGERCALL
	timeout 170 sh "$work/target.sh" "$(lf_tdir "K$k")" $NCALLS "$lc" \
		"$work/tmp/K$k.reply" \
		>"$work/K$k.log" 2>&1 &
	pids="$pids $!"
	k=$((k + 1))
done
lf_bg_pids="$lf_bg_pids $pids"

# 4 writers sharing one case, each reading back its own replies
lf_open_reg SHARED
wpids=
for w in 1 2 3 4; do
	set --
	i=1
	while [ $i -le 50 ]; do
		set -- "$@" "{\"call_id\":\"w$w-$i\",\"tool\":\"lookup_x\",\"args\":{}}\\n"
		i=$((i + 1))
	done
	timeout 170 "$LFWRITE" --rdwr "$(lf_tdir SHARED)/request" "$@" >"$work/w$w.out" 2>&1 &
	wpids="$wpids $!"
done
lf_bg_pids="$lf_bg_pids $wpids"

timed_out=0
for p in $pids $wpids; do
	wait "$p"
	[ $? -ne 124 ] || timed_out=$((timed_out + 1))
done
lf_bg_pids=
assert_eq no_target_timed_out 0 "$timed_out"

seq 1 $NCALLS >"$work/seq.expected"
k=1
r_fin='' r_ack='' r_seq='' r_acked_in='' r_ver='' r_reply='' r_res='' r_stat=''
while [ $k -le $NCASES ]; do
	c=K$k
	log=$work/$c.log
	l=$(lf_ledger "$c")
	grep -q '^finished$' "$log" || r_fin="$r_fin $c"
	[ "$(grep -c '^ack ' "$log")" -eq $NCALLS ] || r_ack="$r_ack $c($(grep -m2 -v '^ack' "$log" | tr '\n' ' '))"
	grep -q '^badreply' "$log" && r_reply="$r_reply $c($(grep -m1 '^badreply' "$log"))"
	grep -q '^resultfail' "$log" && r_res="$r_res $c"
	grep -F '"phase":"decision"' "$l" | sed 's/.*"sequence":\([0-9]*\).*/\1/' |
		sort -n >"$work/$c.seq"
	cmp -s "$work/seq.expected" "$work/$c.seq" || r_seq="$r_seq $c"
	grep -F '"phase":"decision"' "$l" | sed 's/.*"call_id":"\([^"]*\)".*/\1/' |
		sort >"$work/$c.ids"
	sed -n 's/^ack //p' "$log" | sort >"$work/$c.acked"
	[ -z "$(comm -23 "$work/$c.acked" "$work/$c.ids")" ] || r_acked_in="$r_acked_in $c"
	v=$(lf_verify "$c" 2>&1) || r_ver="$r_ver $c: $v"
	st=$(lf_status "$c")
	case $st in
	*"\"rows\": $(lf_rows "$c"),"*"\"completed\": $((NCALLS / 3)),"* | \
		*"\"completed\": $((NCALLS / 3)),"*"\"rows\": $(lf_rows "$c"),"*) ;;
	*) r_stat="$r_stat $c" ;;
	esac
	k=$((k + 1))
done
assert_eq every_target_finished "" "$r_fin"
assert_eq every_call_was_acknowledged "" "$r_ack"
assert_eq every_reply_read_was_the_targets_own_call "" "$r_reply"
assert_eq every_result_was_accepted "" "$r_res"
assert_eq every_case_sequence_runs_1_to_200_without_gaps "" "$r_seq"
assert_eq every_acknowledged_call_is_in_its_ledger "" "$r_acked_in"
assert_eq every_ledger_verifies "" "$r_ver"
assert_eq every_status_matches_its_ledger "" "$r_stat"

rule_begin shared_case_writers_each_read_back_exactly_their_own_replies
for w in 1 2 3 4; do
	out=$(cat "$work/w$w.out")
	got=$(echo "$out" | sed -n 's/^read=//; /^{/p' | sed -n 's/^{"call_id":"\([^"]*\)".*/\1/p' | tr '\n' ' ')
	want=$(i=1; while [ $i -le 50 ]; do printf 'w%s-%s ' $w $i; i=$((i + 1)); done)
	rule_eq "writer $w" "$want" "$got"
	rule_eq "writer $w writes" 50 "$(echo "$out" | grep -c '^write=[0-9]')"
	rule_has "writer $w close" "$out" "close=OK"
done
rule_end
rule_begin shared_case_sequence_runs_1_to_200_without_gaps_or_repeats
grep -F '"phase":"decision"' "$(lf_ledger SHARED)" | sed 's/.*"sequence":\([0-9]*\).*/\1/' >"$work/shared.seq"
rule_eq "in file order" "$(seq 1 200 | tr '\n' ' ')" "$(tr '\n' ' ' <"$work/shared.seq")"
v=$(lf_verify SHARED 2>&1) || rule_fail "verify: $v"
rule_end
lf_finish
