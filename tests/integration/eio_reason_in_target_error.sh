#!/bin/sh
# SPDX-License-Identifier: MIT
# eio_reason_in_target_error.sh - ledgerfs(8) "Errors of the target
# folder": when the backing disk fails (an ext4 image shut down with
# EXT4_IOC_SHUTDOWN, as a dead disk), the call that cannot be made
# durable gets EIO and target/error says why; the case is failed and later
# writes get EPIPE with the reason.  Skipped where loop mounts are not
# available.
. "$(dirname "$0")/lib.sh"
lf_setup
LFSHUTDOWN=$top_builddir/tests/integration/lfshutdown
[ -x "$LFSHUTDOWN" ] || lf_skip_all "$LFSHUTDOWN not built"
command -v mkfs.ext4 >/dev/null || lf_skip_all "mkfs.ext4 missing"

disk=$work/disk
mkdir "$disk"
truncate -s 64M "$work/disk.img"
mkfs.ext4 -q -F "$work/disk.img" >/dev/null 2>&1 || lf_skip_all "mkfs.ext4 failed"
mount -o loop "$work/disk.img" "$disk" 2>/dev/null || lf_skip_all "no loop mount here"
lf_extra_mounts=$disk
chmod 0755 "$disk"
backing=$disk/backing
lf_start --sync=file
lf_open_reg E
lf_call E e1 lookup_a >/dev/null

"$LFSHUTDOWN" "$disk" nologflush || lf_skip_all "EXT4_IOC_SHUTDOWN refused"
out=$(lf_write E request '{"call_id":"e2","tool":"lookup_a","args":{}}\n')
err=$(cat "$(lf_tdir E)/error")
rule_begin call_on_a_failed_disk_is_EIO_with_its_reason
rule_eq write "write=EIO" "$(echo "$out" | grep -m1 '^write=')"
case $err in
"EIO request: "?*) ;;
*) rule_fail "error file: [$err]" ;;
esac
rule_end
echo "# $err"

out=$(lf_write E result '{"call_id":"e1","returned":{},"is_error":false,"real_executed":true}\n')
rule_begin write_after_the_disk_failed_is_EPIPE_with_its_reason
rule_eq write "write=EPIPE" "$(echo "$out" | grep -m1 '^write=')"
rule_eq "error file" "EPIPE result: case E is failed" "$(cat "$(lf_tdir E)/error")"
rule_eq state failed "$(lf_state E)"
rule_end
lf_finish
