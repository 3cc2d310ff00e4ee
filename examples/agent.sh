#!/bin/sh
# SPDX-License-Identifier: MIT
# agent.sh - a target that talks to ledgerfs with printf and cat only.
# It registers, makes a passed call and reports its result, a mocked
# call, a blocked call, a scenario (line restore) twice, a duplicate id
# and a malformed line, and checks each answer.  Exit 0 when every
# answer is what the example policy promises.
M=${LEDGERFS_DIR:-/mediator}
fails=0

say() { printf '%s\n' "$*"; }
expect() { # expect NAME PATTERN TEXT
	case $3 in
	*"$2"*) say "ok   $1" ;;
	*) say "FAIL $1: wanted $2 in: $3"; fails=$((fails + 1)) ;;
	esac
}
call() { # call LINE -> reply, or the refusal from `error`
	if printf '%s\n' "$1" > "$M/request" 2>/dev/null; then
		cat "$M/reply"
	else
		cat "$M/error"
	fi
}

printf '{"case_id":"%s","token":"%s"}\n' "$LEDGERFS_CASE" "$LEDGERFS_TOKEN" > "$M/register" ||
	{ say "FAIL register: $(cat "$M/error")"; exit 1; }
say "ok   registered as $LEDGERFS_CASE"

r=$(call '{"call_id":"c1","tool":"lookup_customer","args":{"id":42}}')
expect "lookup_customer passes" '"mode":"pass"' "$r"
printf '%s\n' '{"call_id":"c1","returned":{"name":"Ada","plan":"basic"},"is_error":false,"real_executed":true}' > "$M/result" &&
	say "ok   result of c1 reported" || { say "FAIL result: $(cat "$M/error")"; fails=$((fails + 1)); }

r=$(call '{"call_id":"c2","tool":"send_message","args":{"to":"ada@example.org","body":"hi"}}')
expect "send_message is mocked" '"returned":{"status":"sent"}' "$r"

r=$(call '{"call_id":"c3","tool":"delete_account","args":{"id":42}}')
expect "delete_account is blocked" '"mode":"block"' "$r"

r=$(call '{"call_id":"c4","tool":"get_line_status","args":{"line":"L1"}}')
expect "line starts suspended" '"suspended":true' "$r"
r=$(call '{"call_id":"c5","tool":"resume_line","args":{"line":"L1"}}')
expect "first resume resumes" '"status":"resumed"' "$r"
r=$(call '{"call_id":"c6","tool":"resume_line","args":{"line":"L1"}}')
expect "second resume repeats the last step" '"status":"already_active"' "$r"
r=$(call '{"call_id":"c7","tool":"get_line_status","args":{"line":"L1"}}')
expect "line is active after resume" '"suspended":false' "$r"

r=$(call '{"call_id":"c5","tool":"resume_line","args":{"line":"L1"}}')
expect "duplicate id is refused" 'EEXIST' "$r"
r=$(call '{"call_id":"c8","tool":')
expect "malformed line is refused" 'EINVAL' "$r"

r=$(call '{"call_id":"c9","tool":"apply_bill_credit","args":{"amount":250}}')
expect "large credit gets the scripted error" 'CREDIT_LIMIT_EXCEEDED' "$r"

say "$fails answers differed from the policy"
[ "$fails" -eq 0 ]
