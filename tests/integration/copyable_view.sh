#!/bin/sh
# SPDX-License-Identifier: MIT
# copyable_view.sh - the host files of the view report their real size
# (ledgerfs(8) THE VIEW): stat's size is the bytes a read returns, so
# cp -r, tar and rsync of a case copy every byte; a read is still one
# snapshot taken at open.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
lf_open_reg C
lf_call C c1 lookup_a '{"q":1}' >/dev/null
lf_call C c2 send_mail >/dev/null
lf_call C c3 delete_x >/dev/null
cd "$mnt/cases/C" || exit 99
files="ledger status policy mocks token $(find calls -type f | sort)"

rule_begin stat_size_is_the_bytes_read
for f in $files; do
	s=$(stat -c %s "$f")
	b=$(wc -c <"$f" | tr -d ' ')
	[ "$s" = "$b" ] && [ "$b" -gt 0 ] || rule_fail "$f: stat $s, read $b"
done
rule_end

rule_begin ledger_size_is_the_backing_ledger
rule_eq size "$(stat -c %s "$backing/cases/C/ledger.jsonl")" "$(stat -c %s ledger)"
rule_end

# compare_tree DIR: every file of $files in DIR equals the view's
compare_tree() {
	for f in $files; do
		cmp -s "$f" "$1/$f" || rule_fail "$f differs in $1"
	done
}

mkdir "$work/cp"
rule_begin cp_r_copies_every_byte
cp -r ledger status policy mocks token calls "$work/cp/" || rule_fail "cp failed"
compare_tree "$work/cp"
rule_end

rule_begin tar_copies_every_byte
# shellcheck disable=SC2086
tar -cf "$work/c.tar" $files 2>"$work/tar.err" || rule_fail "tar: $(cat "$work/tar.err")"
mkdir "$work/tar" && tar -xf "$work/c.tar" -C "$work/tar"
compare_tree "$work/tar"
rule_end

if command -v rsync >/dev/null; then
	rule_begin rsync_copies_every_byte
	rsync -r ledger status policy mocks token calls "$work/rs/" || rule_fail "rsync failed"
	compare_tree "$work/rs"
	rule_end
else
	echo "# rsync not installed: its row is skipped"
fi

# ledgerfs(8) THE VIEW: the write-only files left out by their paths, a
# whole case folder copies with exit 0 and keeps each call's result.
rule_begin a_whole_case_folder_copies_cleanly_without_its_write_only_files
tar -C "$mnt/cases" -cf "$work/whole.tar" --exclude=ctl \
	--exclude=target/register --exclude=target/result C 2>"$work/tar.err" ||
	rule_fail "tar: $(cat "$work/tar.err")"
rule_has "a call's result" "$(tar -tf "$work/whole.tar")" "C/calls/000001-c1/result"
if command -v rsync >/dev/null; then
	rsync -r --exclude=ctl --exclude=target/register --exclude=target/result \
		"$mnt/cases/C" "$work/whole-rs/" 2>"$work/rs.err" ||
		rule_fail "rsync: $(cat "$work/rs.err")"
	cmp -s calls/000001-c1/result "$work/whole-rs/C/calls/000001-c1/result" ||
		rule_fail "rsync left out a call's result"
fi
rule_end

# An open reader keeps its snapshot and its fstat size while rows land.
rule_begin open_ledger_is_one_snapshot
exec 3<ledger
before=$(stat -L -c %s /dev/fd/3)
lf_call C c4 lookup_b >/dev/null
got=$(cat <&3 | wc -c | tr -d ' ')
exec 3<&-
rule_eq "read of the open snapshot" "$before" "$got"
sleep 1.2 # the kernel keeps attributes for attr_timeout (1 s)
[ "$(stat -c %s ledger)" -gt "$before" ] || rule_fail "new rows not in a new stat"
rule_end
cd / || exit 99
lf_finish
