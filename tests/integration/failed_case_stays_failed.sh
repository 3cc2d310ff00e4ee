#!/bin/sh
# SPDX-License-Identifier: MIT
# failed_case_stays_failed.sh - a case that failed closed is failed after
# any restart (ledgerfs(8), FAILURE), even when what failed was a full
# disk: the failed marker was made at creation and only renamed at fail
# time; no case.json.tmp is left behind.  A case whose ledger does not
# verify at load is listed failed with the reason, not dropped.  A disk
# that answers EIO to everything (ext4 shut down) fails the case while the
# daemon runs; such a disk keeps nothing written after it broke, so after
# it is repaired the case is back at its last durable row, with every
# acknowledged row there.
. "$(dirname "$0")/lib.sh"
lf_setup
# The backing folder on a small tmpfs of its own, so it can be filled.
fs=$work/fs
mkdir "$fs"
mount -t tmpfs -o size=2m,mode=0755 lfstate "$fs" || lf_skip_all "cannot mount a tmpfs"
lf_extra_mounts="$fs"
backing=$fs/backing
lf_start

lf_open_reg FULL
lf_call FULL c1 lookup_a >/dev/null
lf_call FULL c2 send_a >/dev/null
lf_open_reg OTHER
lf_call OTHER o1 lookup_a >/dev/null
mkdir "$mnt/cases/P"
lf_open_reg Q
# Fill the disk, then a call whose row needs a new page.
dd if=/dev/zero of="$fs/filler" bs=4k >/dev/null 2>&1
big=$(head -c 12000 /dev/zero | tr '\0' x)
out=$(lf_write FULL request "{\"call_id\":\"c3\",\"tool\":\"send_a\",\"args\":{\"t\":\"$big\"}}\\n")
rule_begin call_on_a_full_disk_fails_the_case
rule_has "write" "$out" "write=E"
rule_eq state failed "$(lf_state FULL)"
rule_has reason "$(lf_status FULL)" "ledger append failed"
rule_end
# A policy whose case.json cannot be written is not taken.
pol=$(i=0; while [ $i -lt 600 ]; do printf '  - {match: tool_%04d, mode: pass}\\n' $i; i=$((i + 1)); done)
out=$(timeout 30 "$LFWRITE" "$mnt/cases/P/policy" "interactions:\\n$pol")
rule_begin a_policy_not_written_on_a_full_disk_is_not_taken
rule_has close "$out" "=EIO"
rule_eq state opened "$(lf_state P)"
rule_has "policy_error" "$(lf_status P)" "write case.json"
rule_eq "policy read back" "" "$(cat "$mnt/cases/P/policy")"
rule_end
# Malformed lines on the full disk: refused (EINVAL) while their rows
# fit; the first whose refused row cannot be written fails the case, and
# its writer learns that (EIO), not the refusal.
bad=$(head -c 3000 /dev/zero | tr '\0' y)
got=
i=0
while [ $i -lt 60 ]; do
	got=$(lf_write Q request "{\"call_id\":\"q$i\",\"tool\": $bad\\n")
	case $got in *write=EINVAL*) ;; *) break ;; esac
	i=$((i + 1))
done
rule_begin a_refusal_whose_row_cannot_be_written_is_EIO_and_fails_the_case
rule_has write "$got" "write=EIO"
rule_has "error file" "$(cat "$(lf_tdir Q)/error")" "EIO request: ledger write failed"
rule_eq state failed "$(lf_state Q)"
rule_end
check failing_on_a_full_disk_leaves_no_tmp_file \
	sh -c "! ls '$backing/cases/FULL' | grep -q 'tmp'"
check failed_marker_is_in_place_after_failing_on_a_full_disk \
	test -e "$backing/cases/FULL/failed"

lf_stop || not_ok daemon_stops_cleanly "had to be killed"
lf_start
rule_begin case_failed_by_a_full_disk_is_failed_after_restart_on_the_full_disk
rule_eq state failed "$(lf_state FULL)"
rule_has reason "$(lf_status FULL)" "ledger append failed"
rule_has "ledgerctl status" "$("$LEDGERCTL" --mount "$mnt" status FULL 2>&1)" failed
rule_end
assert_eq other_case_on_the_full_disk_stays_registered registered "$(lf_state OTHER)"
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
rm -f "$fs/filler"
lf_start
rule_begin case_failed_by_a_full_disk_is_failed_after_restart_with_space_again
rule_eq state failed "$(lf_state FULL)"
rule_has reason "$(lf_status FULL)" "ledger append failed"
rule_has "refused" "$(lf_write FULL request '{"call_id":"c4","tool":"send_a","args":{}}\n')" "write=EPIPE"
rule_end
check no_tmp_file_after_restarts sh -c "! find '$backing' -name '*.tmp' | grep -q ."
check failed_case_ledger_verifies lf_verify FULL

# A ledger that does not verify: listed failed with the reason.
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
sed -i '2s/"phase":"registered"/"phase":"registerex"/' "$(lf_ledger OTHER)"
lf_start
rule_begin case_whose_ledger_does_not_verify_loads_failed_not_dropped
rule_has listing "$(ls "$mnt/cases")" OTHER
rule_eq state failed "$(lf_state OTHER)"
rule_has reason "$(lf_status OTHER)" "row 2"
rule_has "ledgerctl status" "$("$LEDGERCTL" --mount "$mnt" status OTHER 2>&1)" failed
rule_has "ledgerctl ls" "$("$LEDGERCTL" --mount "$mnt" ls 2>&1)" OTHER
rule_has "refused" "$(lf_write OTHER request '{"call_id":"o2","tool":"lookup_a","args":{}}\n')" "write=EPIPE"
rule_end
lf_stop || not_ok daemon_stops_cleanly "had to be killed"

# EIO: the backing folder on an ext4 image that is then shut down.
img=$work/ext4.img
ext=$work/ext
mkdir "$ext"
if truncate -s 32M "$img" && mkfs.ext4 -q "$img" 2>/dev/null &&
	mount -o loop "$img" "$ext" 2>/dev/null; then
	lf_extra_mounts="$ext $fs"
	chmod 0755 "$ext"
	backing=$ext/backing
	lf_start
	lf_open_reg BROKEN
	lf_call BROKEN b1 lookup_a >/dev/null
	lf_call BROKEN b2 send_a >/dev/null
	acked=$(lf_rows BROKEN)
	if python3 -c "
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0x8004587d, struct.pack('I', 2))  # EXT4_IOC_SHUTDOWN, NOLOGFLUSH
" "$ext" 2>/dev/null; then
		out=$(lf_write BROKEN request '{"call_id":"b3","tool":"send_a","args":{}}\n')
		rule_begin call_on_a_disk_answering_EIO_fails_the_case
		rule_has write "$out" "write=E"
		rule_eq state failed "$(lf_state BROKEN)"
		rule_has reason "$(lf_status BROKEN)" "Input/output error"
		rule_end
		lf_stop || not_ok daemon_stops_cleanly_on_a_broken_disk "had to be killed"
		out=$(timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" "$mnt" 2>&1)
		rule_begin restart_on_a_disk_still_answering_EIO_refuses_to_start
		rule_eq mounted no "$(lf_mounted && echo yes || echo no)"
		rule_has reason "$out" "Input/output error"
		rule_end
		lf_mounted && umount -l "$mnt"
		umount "$ext" && mount -o loop "$img" "$ext"
		lf_start
		rule_begin restart_after_the_disk_is_repaired_keeps_every_acknowledged_row
		rule_eq rows "$acked" "$(lf_rows BROKEN)"
		rule_has verify "$(lf_verify BROKEN 2>&1)" "ok"
		rule_end
		lf_stop
	else
		echo "# SKIP EIO rows: EXT4_IOC_SHUTDOWN is not available here"
		lf_stop
	fi
	umount "$ext"
else
	echo "# SKIP EIO rows: cannot make and loop-mount an ext4 image"
fi
lf_finish
