#!/bin/sh
# SPDX-License-Identifier: MIT
# view_sandbox.sh - the target folder inside bubblewrap (ledgerfs(8) THE
# VIEW): with only cases/C/target bound at /mediator, a target running as
# root or as uid 65534 sees its six files and nothing else of the view, no
# ledger, no token, no host key, and no path or mount that reaches the
# backing folder; a plain shell target as uid 65534 can register, call and
# read.
. "$(dirname "$0")/lib.sh"
command -v bwrap >/dev/null || lf_skip_all "bubblewrap missing"
command -v setpriv >/dev/null || lf_skip_all "setpriv missing"
lf_setup
lf_start

lf_open C
lf_open_reg OTHER
lf_call OTHER o1 lookup_a >/dev/null

# sandbox CASE CMD...: CMD in a fresh sandbox with only CASE's target
sandbox() {
	_c=$1
	shift
	timeout 60 bwrap --ro-bind /usr /usr --symlink usr/bin /bin \
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 \
		--proc /proc --dev /dev --tmpfs /tmp \
		--unshare-ipc --unshare-pid --unshare-net --unshare-uts \
		--die-with-parent --new-session \
		--bind "$mnt/cases/$_c/target" /mediator \
		--setenv LEDGERFS_CASE "$_c" \
		--setenv LEDGERFS_TOKEN "$(lf_token "$_c")" \
		--setenv PATH /usr/bin:/bin "$@"
}
as_nobody='setpriv --reuid=65534 --regid=65534 --clear-groups'

# What the target can see; printed as key=value for the host to judge.
look='
echo "id=$(id -u)"
echo "ls=$(ls /mediator | tr "\n" " ")"
echo "up=$(ls -a /mediator/.. | tr "\n" " ")"
echo "root=$(ls -a / | tr "\n" " ")"
find / \( -path /proc -o -path /sys \) -prune -o \( -name ledger.jsonl \
	-o -name host.key -o -name case.json -o -name "lfview.*" \) \
	-print 2>/dev/null | sed "s/^/found=/"
find / \( -path /proc -o -path /sys -o -path /usr \) -prune -o \( \
	-name token -o -name ledger -o -name cases -o -name status \
	-o -name ctl -o -name policy -o -name mocks -o -name calls \
	-o -name OTHER \) -print 2>/dev/null | sed "s/^/found=/"
find / -xdev -name "*.jsonl" 2>/dev/null | sed "s/^/xdev=/"
for p in /mediator/../cases /mediator/../token /mediator/../ledger \
	/mediator/../../OTHER /proc/1/root/cases /proc/self/cwd/../cases; do
	[ -e "$p" ] && echo "reach=$p"
done
while read -r a b dev root point rest; do
	echo "mi=$dev $root $point"
done </proc/self/mountinfo
echo end=1
'
read -r fsroot fstarget majmin <<EOF
$(findmnt -n -o FSROOT,TARGET,MAJ:MIN -T "$backing")
EOF
if [ "$fstarget" = / ]; then rel=$backing; else rel=${backing#"$fstarget"}; fi
rel=${fsroot%/}$rel

judge() { # WHO OUTPUT
	_who=$1
	_o=$2
	rule_begin "target_as_${_who}_sees_exactly_its_target_files"
	rule_has ran "$_o" "end=1"
	rule_eq ls "error register replies reply request result tools " \
		"$(echo "$_o" | sed -n 's/^ls=//p')"
	rule_end
	rule_begin "target_as_${_who}_parent_of_mediator_is_the_sandbox_root"
	rule_eq up "$(echo "$_o" | sed -n 's/^root=//p')" "$(echo "$_o" | sed -n 's/^up=//p')"
	rule_hasnt up "$(echo "$_o" | sed -n 's/^up=//p')" "cases"
	rule_end
	rule_begin "target_as_${_who}_finds_no_ledger_token_key_or_other_case"
	rule_eq found "" "$(echo "$_o" | grep '^found=')"
	rule_eq xdev "" "$(echo "$_o" | grep '^xdev=')"
	rule_eq reach "" "$(echo "$_o" | grep '^reach=')"
	rule_end
	rule_begin "target_as_${_who}_has_no_mount_of_the_backing_folder"
	rule_hasnt "backing path" "$_o" "$backing"
	rule_hasnt "work folder" "$_o" "$work"
	echo "$_o" | sed -n 's/^mi=//p' >"$work/mi.$_who"
	while read -r dev root point; do
		[ "$dev" = "$majmin" ] || continue
		case $rel in
		"$root" | "$root"/*) rule_fail "$point shows $root of $dev, holding $rel" ;;
		esac
		[ "$root" != / ] || rule_fail "$point is the root of $dev"
	done <"$work/mi.$_who"
	rule_has "the view" "$(cat "$work/mi.$_who")" " /cases/C/target /mediator"
	rule_end
}

out=$(sandbox C sh -c "$look" 2>&1)
judge root "$out"
out=$(sandbox C $as_nobody sh -c "$look" 2>&1)
judge uid65534 "$out"

# a shell target as uid 65534: register, call, read its reply, result
target='
set -e
printf "{\"case_id\":\"%s\",\"token\":\"%s\"}\n" "$LEDGERFS_CASE" "$LEDGERFS_TOKEN" >/mediator/register
printf "%s\n" "{\"call_id\":\"s1\",\"tool\":\"lookup_a\",\"args\":{\"id\":7}}" >/mediator/request
echo "reply=$(cat /mediator/reply)"
printf "%s\n" "{\"call_id\":\"s2\",\"tool\":\"send_a\",\"args\":{}}" >/mediator/request
echo "reply2=$(cat /mediator/replies/s2)"
printf "%s\n" "{\"call_id\":\"s1\",\"returned\":{\"ok\":1},\"is_error\":false,\"real_executed\":true}" >/mediator/result
if printf x >/mediator/reply 2>/dev/null; then echo wrote-reply; fi
echo "done=$(id -u)"
'
out=$(sandbox C $as_nobody sh -c "$target" 2>&1)
rule_begin shell_target_as_uid65534_registers_calls_and_reads_replies
rule_has done "$out" "done=65534"
rule_has reply "$out" 'reply={"call_id":"s1","sequence":1,"mode":"pass"'
rule_has reply2 "$out" 'reply2={"call_id":"s2","sequence":2,"mode":"mock"'
rule_hasnt "reply written" "$out" "wrote-reply"
rule_eq state registered "$(lf_state C)"
rule_eq completion 1 "$(lf_rows C '"phase":"completion"')"
rule_end
rule_begin ledgercall_works_as_uid65534_in_the_sandbox
out=$(timeout 60 bwrap --ro-bind /usr /usr --symlink usr/bin /bin \
	--symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc \
	--dev /dev --tmpfs /tmp --unshare-ipc --unshare-pid --unshare-net \
	--unshare-uts --die-with-parent --new-session \
	--bind "$(lf_tdir C)" /mediator --ro-bind "$LEDGERCALL" /tmp/ledgercall \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	/tmp/ledgercall --tool send_b --args '{"x":1}' --call-id s3 2>&1)
rc=$?
rule_eq "exit (mock)" 3 "$rc"
rule_has reply "$out" '"call_id":"s3"'
rule_end
# The kernel checks a caller's permission before the daemon sees it
# (default_permissions): a target that is not root meets the mode bits
# first (ledgerfs(8) THE VIEW); root meets the daemon's errnos.
probe='
import errno, os
def e(f):
    try:
        f()
        return "ok"
    except OSError as x:
        return errno.errorcode[x.errno]
print("mkdir=" + e(lambda: os.mkdir("/mediator/x")))
print("unlink=" + e(lambda: os.unlink("/mediator/reply")))
print("rename=" + e(lambda: os.rename("/mediator/reply", "/mediator/r2")))
print("openw=" + e(lambda: os.close(os.open("/mediator/reply", os.O_WRONLY))))
print("chmod=" + e(lambda: os.chmod("/mediator/reply", 0o777)))
'
rule_begin a_target_that_is_not_root_meets_the_mode_bits_first
out=$(sandbox C $as_nobody python3 -c "$probe" 2>&1)
rule_eq "as uid 65534" "mkdir=EACCES unlink=EACCES rename=EACCES openw=EACCES chmod=EPERM" "$(echo $out)"
out=$(sandbox C python3 -c "$probe" 2>&1)
rule_eq "as root" "mkdir=EPERM unlink=EPERM rename=EPERM openw=EROFS chmod=EPERM" "$(echo $out)"
rule_end
rule_begin the_other_case_is_untouched_by_the_sandboxed_target
rule_eq rows 3 "$(lf_rows OTHER)"
rule_end
check sandboxed_case_ledger_verifies lf_verify C
lf_finish
