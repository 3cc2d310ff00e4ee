#!/bin/sh
# SPDX-License-Identifier: MIT
# view_hostile.sh - a hostile target and a careless host against a real
# mount (ledgerfs(8) THE VIEW and PROTOCOL): huge lines, binary junk, deep
# nesting, invalid UTF-8, path-like ids, files that do not exist and every
# changing operation on the view.  Each is refused with the contract's
# errno; afterwards the daemon is alive and a second case calling in
# parallel saw nothing.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
lfw() { timeout 30 "$LFWRITE" "$@"; }
nobody() { timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

lf_open_reg H
lf_open_reg OK
T=$(lf_tdir H)

# a well-behaved neighbour calls all along
(
	i=1
	while [ $i -le 150 ]; do
		if printf '{"call_id":"ok%d","tool":"lookup_a","args":{"i":%d}}\n' $i $i \
			>"$(lf_tdir OK)/request"; then
			echo "acked ok$i"
		else
			echo "failed ok$i"
		fi
		i=$((i + 1))
	done
) >"$work/neighbour.log" 2>&1 &
neighbour=$!
lf_bg_pids="$lf_bg_pids $neighbour"

# huge lines on every line file
for f in request result register; do
	out=$(lfw "$T/$f" --loop --repeat-byte '{' 2097152 -a '\n')
	rule_begin "two_MiB_line_to_${f}_is_refused_with_EFBIG"
	rule_has write "$out" "write=EFBIG"
	rule_has close "$out" "close=EFBIG"
	rule_end
done

# binary junk: refused, bounded
for f in request result register; do
	rule_begin "binary_junk_to_${f}_is_refused"
	if head -c 65536 /dev/urandom >"$T/$f" 2>/dev/null; then
		rule_fail "the write succeeded"
	fi
	case $(cat "$T/error") in
	EINVAL* | EFBIG*) ;;
	*) rule_fail "error: $(cat "$T/error")" ;;
	esac
	rule_end
done
assert_eq junk_leaves_no_decision_row 0 "$(lf_rows H '"phase":"decision"')"

# deep nesting, invalid UTF-8, NUL bytes
deep_open=$(head -c 10000 /dev/zero | tr '\0' '[')
deep_close=$(head -c 10000 /dev/zero | tr '\0' ']')
lf_expect_refused deep_nesting_in_args_is_refused_with_EINVAL H request EINVAL \
	LF_EINVAL_JSON refused \
	"{\"call_id\":\"n1\",\"tool\":\"lookup_a\",\"args\":{\"a\":$deep_open$deep_close}}\\n"
lf_expect_refused deep_nesting_in_result_is_refused_with_EINVAL H result EINVAL \
	LF_EINVAL_JSON refused \
	"{\"call_id\":\"n1\",\"returned\":$deep_open$deep_close,\"is_error\":false,\"real_executed\":true}\\n"
lf_expect_refused invalid_utf8_in_tool_is_refused_with_EINVAL H request EINVAL \
	LF_EINVAL_JSON refused '{"call_id":"u1","tool":"lookup_\xff\xfe","args":{}}\n'
lf_expect_refused invalid_utf8_in_args_is_refused_with_EINVAL H request EINVAL \
	LF_EINVAL_JSON refused '{"call_id":"u2","tool":"lookup_a","args":{"s":"\xc3\x28"}}\n'
lf_expect_refused nul_byte_in_line_is_refused_with_EINVAL H request EINVAL \
	LF_EINVAL_JSON refused '{"call_id":"u3","tool":"lookup_a","args":{}}\0junk\n'
lf_expect_refused escaped_nul_in_call_id_is_refused_with_EINVAL H request \
	EINVAL LF_EINVAL_JSON refused '{"call_id":"u4\\u0000","tool":"lookup_a","args":{}}\n'

# call ids (ledgerfs(8) PROTOCOL): what ASSERT takes; path-like ids are
# plain strings that name no file.
max128=$(head -c 128 /dev/zero | tr '\0' b)
lf_expect_accepted call_id_of_128_chars_is_accepted H request 1 \
	"{\"call_id\":\"$max128\",\"tool\":\"lookup_a\",\"args\":{}}\\n"
while IFS='|' read -r rule id; do
	lf_expect_accepted "$rule" H request 1 \
		"{\"call_id\":\"$id\",\"tool\":\"lookup_a\",\"args\":{}}\\n"
done <<EOF
call_id_dotdot_slash_x_is_accepted_as_a_string|../x
call_id_a_slash_b_is_accepted_as_a_string|a/b
call_id_dotdot_is_accepted_as_a_string|..
call_id_dot_is_accepted_as_a_string|.
call_id_with_space_is_accepted|a b
call_id_of_256_bytes_is_accepted|$(head -c 256 /dev/zero | tr '\0' c)
EOF
while IFS='|' read -r rule id; do
	lf_expect_refused "$rule" H request EINVAL LF_EINVAL_JSON refused \
		"{\"call_id\":\"$id\",\"tool\":\"lookup_a\",\"args\":{}}\\n"
done <<EOF
call_id_of_257_bytes_is_refused_with_EINVAL|$(head -c 257 /dev/zero | tr '\0' a)
call_id_with_a_tab_is_refused_with_EINVAL|a\\\\tb
call_id_of_only_blanks_is_refused_with_EINVAL|   
EOF
# (A signed checkpoint may appear on its own cadence: the daemon's file.)
assert_eq no_file_appeared_in_backing_for_path_like_ids \
	"case.json failed.ready ledger.jsonl ledger.jsonl.seal" "$(ls "$backing/cases/H" | grep -v '^checkpoints\{0,1\}$' | tr '\n' ' ' | sed 's/ $//')"

# files that do not exist, and changing operations: target and host folders
while IFS='|' read -r rule want op path arg; do
	out=$(lfw --op "$op" "$mnt/$path" ${arg:+"$mnt/$arg"})
	assert_eq "$rule" "op=$want" "$out"
done <<'EOF'
creating_a_file_in_target_is_refused_with_EPERM|EPERM|creat|cases/H/target/nope
creating_a_file_in_case_folder_is_refused_with_EPERM|EPERM|creat|cases/H/nope
creating_a_file_in_replies_is_refused_with_EPERM|EPERM|creat|cases/H/target/replies/c9
mknod_in_target_is_refused_with_EPERM|EPERM|mknod|cases/H/target/fifo
mkdir_in_target_is_refused_with_EPERM|EPERM|mkdir|cases/H/target/sub
mkdir_in_case_folder_is_refused_with_EPERM|EPERM|mkdir|cases/H/sub
mkdir_in_calls_is_refused_with_EPERM|EPERM|mkdir|cases/H/calls/000009-x
mkdir_at_the_root_is_refused_with_EPERM|EPERM|mkdir|sub
unlink_of_request_is_refused_with_EPERM|EPERM|unlink|cases/H/target/request
unlink_of_ledger_is_refused_with_EPERM|EPERM|unlink|cases/H/ledger
rmdir_of_target_is_refused_with_EPERM|EPERM|rmdir|cases/H/target
rmdir_of_case_is_refused_with_EPERM|EPERM|rmdir|cases/H
rename_in_target_is_refused_with_EPERM|EPERM|rename|cases/H/target/reply|cases/H/target/reply2
rename_of_case_is_refused_with_EPERM|EPERM|rename|cases/H|cases/H2
rename_of_ledger_is_refused_with_EPERM|EPERM|rename|cases/H/ledger|cases/H/l2
chmod_of_request_is_refused_with_EPERM|EPERM|chmod|cases/H/target/request
chmod_of_target_is_refused_with_EPERM|EPERM|chmod|cases/H/target
chmod_of_token_is_refused_with_EPERM|EPERM|chmod|cases/H/token
chown_of_request_is_refused_with_EPERM|EPERM|chown|cases/H/target/request
chown_of_cases_is_refused_with_EPERM|EPERM|chown|cases
symlink_in_target_is_refused_with_EPERM|EPERM|symlink|cases/H/target/ln|cases/H/ledger
symlink_in_case_folder_is_refused_with_EPERM|EPERM|symlink|cases/H/ln|cases/H/ledger
hard_link_of_request_is_refused_with_EPERM|EPERM|link|cases/H/target/request|cases/H/target/req2
hard_link_of_ledger_is_refused_with_EPERM|EPERM|link|cases/H/ledger|cases/H/target/l
touch_of_reply_is_refused_with_EPERM|EPERM|utimes|cases/H/target/reply
setxattr_on_request_is_refused_with_EPERM|EPERM|setxattr|cases/H/target/request
setxattr_on_ledger_is_refused_with_EPERM|EPERM|setxattr|cases/H/ledger
removexattr_on_target_is_refused_with_EPERM|EPERM|removexattr|cases/H/target
getxattr_on_request_finds_none_with_EOPNOTSUPP|EOPNOTSUPP|getxattr|cases/H/target/request
listxattr_on_ledger_finds_none_with_EOPNOTSUPP|EOPNOTSUPP|listxattr|cases/H/ledger
truncating_the_ledger_is_refused_with_EPERM|EPERM|truncate|cases/H/ledger
truncating_request_to_zero_is_harmless|OK|truncate|cases/H/target/request
opening_reply_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/target/reply
opening_error_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/target/error
opening_a_replies_file_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/target/replies/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
opening_ledger_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/ledger
opening_status_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/status
opening_token_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/token
opening_a_decision_for_writing_is_refused_with_EROFS|EROFS|openw|cases/H/calls/000001-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/decision
opening_target_folder_for_writing_is_refused_with_EISDIR|EISDIR|openw|cases/H/target
EOF
rule_begin truncating_request_to_a_size_is_refused_with_EPERM
rule_eq op "op=EPERM" "$(lfw --op truncate "$T/request" 5)"
rule_end
rule_begin shell_tools_in_the_view_fail
for cmd in "mkdir $T/d" "rm -f $T/request" "mv $T/reply $T/r2" "chmod 777 $T/request" \
	"chown 1:1 $T/request" "ln -s /etc/passwd $T/pw" "ln $T/request $T/r3" \
	"touch $T/new" "rm -rf $(lf_cdir H)/calls"; do
	if timeout 10 sh -c "$cmd" 2>/dev/null; then rule_fail "succeeded: $cmd"; fi
done
rule_eq "target files unchanged" "error register replies reply request result tools" \
	"$(ls "$T" | tr '\n' ' ' | sed 's/ $//')"
rule_end

# bad case names on mkdir
while IFS='|' read -r rule name; do
	out=$(lfw --op mkdir "$mnt/cases/$name")
	assert_eq "$rule" "op=EINVAL" "$out"
done <<EOF
case_name_with_space_is_refused_with_EINVAL|a b
case_name_of_129_chars_is_refused_with_EINVAL|$(head -c 129 /dev/zero | tr "\0" a)
case_name_with_backslash_is_refused_with_EINVAL|a\\b
EOF
assert_eq existing_case_name_is_refused_with_EEXIST "op=EEXIST" "$(lfw --op mkdir "$mnt/cases/H")"

# other uids: host nodes unreachable through the mount, the target open
rule_begin host_nodes_are_refused_to_other_uids
[ "$(nobody "$LFWRITE" --op openw "$(lf_cdir H)/ctl")" = "op=EACCES" ] || rule_fail "ctl"
nobody cat "$(lf_cdir H)/token" >/dev/null 2>&1 && rule_fail "token readable"
nobody ls "$mnt/cases" >/dev/null 2>&1 && rule_fail "cases listable"
nobody "$LFWRITE" --op mkdir "$mnt/cases/N" | grep -q op=EACCES || rule_fail "mkdir case"
rule_end

# policy and mocks: hostile documents fail the close, the case keeps going
mkdir "$(lf_cdir P)"
printf '%s' "$LF_POLICY_DEFAULT" >"$(lf_cdir P)/policy"
out=$(lfw "$(lf_cdir P)/policy" --trunc "interactions: $deep_open$deep_close\\n")
rule_begin deeply_nested_policy_fails_close_with_EINVAL_and_keeps_the_old
rule_has close "$out" "close=EINVAL"
rule_eq state ready "$(lf_state P)"
rule_has "old policy" "$(cat "$(lf_cdir P)/policy")" "lookup_*"
rule_end
out=$(lfw "$(lf_cdir P)/mocks" --trunc "{\"version\":1,\"mocks\":$deep_open$deep_close}\\n")
assert_contains deeply_nested_mocks_fail_close_with_EINVAL "$out" "close=EINVAL"
out=$(lfw "$(lf_cdir P)/policy" --trunc 'interactions:\n  - match: "\xff"\n    mode: pass\n')
assert_contains invalid_utf8_policy_fails_close_with_EINVAL "$out" "close=EINVAL"
out=$(lfw "$(lf_cdir P)/policy" --trunc --repeat-byte '#' 20000000)
assert_contains oversized_policy_is_refused "$out" "EFBIG"

# afterwards: the daemon is alive and the neighbour unaffected
timeout 60 sh -c "while kill -0 $neighbour 2>/dev/null; do sleep 0.1; done"
rule_begin daemon_is_alive_after_the_hostile_target
kill -0 "$lf_daemon" 2>/dev/null || rule_fail "daemon died"
rule_eq "cases" "H OK P" "$(ls "$mnt/cases" | tr '\n' ' ' | sed 's/ $//')"
rule_has call "$(lf_call H after lookup_a)" '"call_id":"after"'
rule_end
rule_begin other_case_calling_in_parallel_is_unaffected
rule_eq acked 150 "$(grep -c '^acked' "$work/neighbour.log")"
rule_eq "decision rows" 150 "$(lf_rows OK '"phase":"decision"')"
rule_eq "refused rows" 0 "$(lf_rows OK '"phase":"refused"')"
rule_eq "last sequence" 1 "$(lf_rows OK '"sequence":150,')"
v=$(lf_verify OK 2>&1) || rule_fail "verify: $v"
rule_end
check hostile_case_ledger_verifies lf_verify H
lf_finish
