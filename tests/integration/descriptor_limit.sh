#!/bin/sh
# SPDX-License-Identifier: MIT
# descriptor_limit.sh - each open case holds one descriptor (ledgerfs(8)
# LIMITS): a privileged daemon lifts its RLIMIT_NOFILE to nr_open, and a
# daemon that may not, once out of descriptors, refuses the next case
# with EIO and a reason in its log while the open cases keep serving.
. "$(dirname "$0")/lib.sh"
lf_setup
command -v setpriv >/dev/null && command -v prlimit >/dev/null ||
	lf_skip_all "no setpriv or prlimit"

# limited_daemon SOFT:HARD [setpriv options]: a wrapper that execs the daemon
# under that descriptor limit, so that $lf_daemon is the daemon itself.
limited_daemon() {
	cat >"$work/limited" <<WRAP
#!/bin/sh
exec setpriv $2 -- prlimit --nofile=$1 -- "$LEDGERFS_REAL" "\$@"
WRAP
	chmod 0755 "$work/limited"
	LEDGERFS=$work/limited
}

max_open() { # PID: soft and hard limit of open files
	awk '/^Max open files/ { print $4, $5 }' "/proc/$1/limits"
}

LEDGERFS_REAL=$LEDGERFS
nr_open=$(cat /proc/sys/fs/nr_open)

# Root may lack CAP_SYS_RESOURCE (a container's bounding set): then the
# first rule cannot be shown here, and says so.
cap_eff=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
if [ $((0x$cap_eff >> 24 & 1)) = 1 ]; then
	limited_daemon 64:64
	lf_start
	rule_begin privileged_daemon_lifts_its_descriptor_limit_to_nr_open
	rule_eq "soft and hard" "$nr_open $nr_open" "$(max_open "$lf_daemon")"
	rule_end
	lf_stop
else
	echo "ok - privileged_daemon_lifts_its_descriptor_limit_to_nr_open # SKIP no CAP_SYS_RESOURCE here"
fi

# Without CAP_SYS_RESOURCE the hard limit stays; the soft one rises to it.
limited_daemon 24:48 "--bounding-set=-sys_resource"
lf_start
rule_begin unprivileged_daemon_raises_soft_limit_to_hard
rule_eq "soft and hard" "48 48" "$(max_open "$lf_daemon")"
rule_end

rule_begin case_past_the_descriptor_limit_is_refused_and_others_keep_serving
lf_open_reg A || rule_fail "first case not opened"
n=0
refused=
while [ $n -lt 40 ]; do
	n=$((n + 1))
	if ! out=$(mkdir "$mnt/cases/x$n" 2>&1); then
		refused=x$n
		break
	fi
	printf '%s' "$LF_POLICY_DEFAULT" >"$mnt/cases/x$n/policy" 2>/dev/null
done
[ -n "$refused" ] || rule_fail "40 cases opened under 48 descriptors"
rule_has "errno" "$out" "Input/output error"
rule_has "log" "$(cat "$work/daemon.err")" "Too many open files"
rule_has "open case still decides" "$(lf_call A c1 lookup_a)" '"sequence":1'
lf_verify A >/dev/null || rule_fail "open case's ledger does not verify"
rule_end
lf_stop

# A refused case leaves nothing half made: the next start, with room,
# serves every case that was opened and can open the refused one.
LEDGERFS=$LEDGERFS_REAL
lf_start
rule_begin refused_case_leaves_no_half_made_case
rule_has "old case resumes" "$(lf_call A c2 lookup_a)" '"sequence":2'
if [ -n "$refused" ]; then
	[ ! -e "$mnt/cases/$refused" ] ||
		rule_fail "$refused exists: $(ls "$mnt/cases/$refused" 2>&1)"
	lf_open_reg "$refused" || rule_fail "$refused cannot be opened now"
	rule_has "its first call" "$(lf_call "$refused" c1 lookup_a)" '"sequence":1'
fi
rule_end

# Loaded or new, a case holds its ledger open and nothing else; its seal
# key file is opened to be updated, and a turn (a ratchet) still works.
rule_begin open_case_holds_one_descriptor
lf_open_reg N || rule_fail "case N not opened"
lf_call N c1 lookup_a >/dev/null
seal_before=$(sha256sum <"$backing/cases/N/ledger.jsonl.seal")
echo turn >"$mnt/cases/N/ctl" || rule_fail "turn refused"
[ "$(sha256sum <"$backing/cases/N/ledger.jsonl.seal")" != "$seal_before" ] ||
	rule_fail "the turn did not ratchet the seal key file"
fds=$(ls -l "/proc/$lf_daemon/fd" | grep -F " -> $backing/cases/")
cases=$(ls "$backing/cases" | wc -l)
rule_eq "ledgers open" "$cases" "$(echo "$fds" | grep -c '/ledger\.jsonl$')"
rule_eq "other backing files open" 0 "$(echo "$fds" | grep -vc '/ledger\.jsonl$')"
lf_verify N >/dev/null || rule_fail "N does not verify"
rule_end
lf_finish
