#!/bin/sh
# SPDX-License-Identifier: MIT
# user_option.sh - --user (ledgerfs(8) PRIVILEGE): the daemon mounts as
# root, then runs as an unprivileged user that owns the backing folder,
# with no capability left and no_new_privs; calls and host executors work;
# the files it makes belong to that user; its stop leaves no mount.  It
# refuses, saying why, a backing folder of another owner, root, and an
# unknown user.  The option is taken in all three forms.
. "$(dirname "$0")/lib.sh"
command -v useradd >/dev/null || lf_skip_all "useradd missing"
lf_setup
u=lfuser$$
useradd --system --no-create-home --shell /usr/sbin/nologin "$u" ||
	lf_skip_all "useradd failed"
trap '_s=$?; userdel "$u" 2>/dev/null; (exit $_s); lf_cleanup' EXIT
uid=$(id -u "$u")
mkdir "$backing"
chown "$u" "$backing"
chmod 0700 "$backing"

tools=$work/tools
mkdir "$tools"
chmod 0755 "$tools"
printf '#!/bin/sh\ncat >/dev/null\necho "{\\"uid\\":$(id -u)}"\n' >"$tools/whoami"
chmod 0755 "$tools/whoami"
POLICY="interactions:
  - match: whoami
    mode: pass
    exec: {argv: [$tools/whoami]}
  - match: lookup_*
    mode: pass
  - match: send_*
    mode: mock
    mock: {status: sent}
default: {mode: block}
"

field() { sed -n "s/^$1:[[:space:]]*//p" "/proc/$lf_daemon/status" | tr '\t' ' '; }

lf_start --user="$u"
rule_begin user_option_drops_all_capabilities
rule_eq Uid "$uid $uid $uid $uid" "$(field Uid)"
rule_eq CapEff 0000000000000000 "$(field CapEff)"
rule_eq CapPrm 0000000000000000 "$(field CapPrm)"
rule_eq CapBnd 0000000000000000 "$(field CapBnd)"
rule_eq CapAmb 0000000000000000 "$(field CapAmb)"
rule_eq NoNewPrivs 1 "$(field NoNewPrivs)"
rule_eq Groups "$(id -g "$u")" "$(field Groups | tr -d ' ')"
rule_end

lf_open_reg C "$POLICY" ""
r1=$(lf_call C c1 lookup_a)
r2=$(lf_call C c2 send_x)
r3=$(lf_call C c3 whoami)
rule_begin calls_work_after_the_drop
rule_has pass "$r1" '"mode":"pass"'
rule_has mock "$r2" '"returned":{"status":"sent"}'
rule_end
rule_begin executor_runs_as_the_daemon_user_by_default
rule_has uid "$r3" "\"returned\":{\"uid\":$uid}"
rule_end
rule_begin files_made_after_the_drop_belong_to_the_user
for f in "$backing/cases" "$backing/cases/C" "$backing/cases/C/ledger.jsonl" \
	"$backing/cases/C/case.json"; do
	rule_eq "$f" "$u" "$(stat -c %U "$f")"
done
rule_end

# A stop by SIGTERM: the helper, still root, unmounts for the daemon.
kill -TERM "$lf_daemon"
i=0
while kill -0 "$lf_daemon" 2>/dev/null && [ $i -lt 200 ]; do
	i=$((i + 1))
	sleep 0.05
done
wait "$lf_daemon"
st=$?
lf_daemon=
rule_begin user_option_stop_leaves_no_mount
rule_eq "exit status" 0 "$st"
lf_mounted && rule_fail "still mounted at $mnt"
rule_end

# The other two forms, each with a restart of the same backing folder.
for form in "--user $u" "-o user=$u"; do
	case $form in
	-o*) name=user_option_as_mount_option_drops_to_the_user ;;
	*) name=user_option_with_separate_value_drops_to_the_user ;;
	esac
	# shellcheck disable=SC2086
	lf_start $form
	rule_begin "$name"
	rule_eq Uid "$uid $uid $uid $uid" "$(field Uid)"
	rule_eq CapEff 0000000000000000 "$(field CapEff)"
	rule_has call "$(lf_call C "f$lf_nstart" lookup_b)" '"mode":"pass"'
	rule_end
	lf_stop
done
check ledger_written_under_user_option_verifies lf_verify C

# Refusals, before anything is mounted.
refuse() { # RULE WANT [ARGS...]
	_r=$1 _w=$2
	shift 2
	_e=$(timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" "$@" \
		"$mnt" 2>&1)
	_s=$?
	rule_begin "$_r"
	[ "$_s" -ne 0 ] || rule_fail "started (exit 0)"
	rule_has reason "$_e" "$_w"
	lf_mounted && rule_fail "mounted"
	rule_end
}
chown root "$backing"
refuse user_option_refuses_a_backing_folder_the_user_does_not_own \
	"is owned by uid 0, not by this user" --user="$u"
chown "$u" "$backing"
refuse user_option_refuses_root "--user: 'root' is root" --user=root
refuse user_option_refuses_an_unknown_user "--user: no user 'no-such-$$'" \
	--user="no-such-$$"
lf_finish
