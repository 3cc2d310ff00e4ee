#!/bin/sh
# SPDX-License-Identifier: MIT
# The daemon refuses to start on an unsafe backing folder (ledgerfs(8)
# SAFETY CHECKS), one row per rule: input tree -> expected verdict and
# reason.
set -u
bin=${top_builddir:-.}/ledgerfs
work=$(mktemp -d /tmp/lf-backing.XXXXXX)
chmod 0755 "$work"
mnt=$work/mnt
mkdir "$mnt"
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	rm -rf "$work"
}
trap cleanup EXIT
pass=0 fail=0

# row NAME SETUP BACKING EXPECT(start|refuse) REASON-SUBSTRING
row() {
	rm -rf "$work/p" "$work/k"
	mkdir -p "$work/p"
	chmod 0755 "$work/p"
	eval "$2"
	out=$(timeout 10 "$bin" --backing="$3" --key="$work/k/host.key" "$mnt" 2>&1)
	rc=$?
	if mountpoint -q "$mnt"; then
		got=start
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
	else
		got=refuse
	fi
	if [ "$got" = "$4" ] && { [ -z "$5" ] || printf '%s' "$out" | grep -qF -- "$5"; }; then
		echo "ok - $1"; pass=$((pass + 1))
	else
		echo "not ok - $1: wanted $4 '$5', got $got (rc $rc): $out"; fail=$((fail + 1))
	fi
}

row backing_under_root_owned_folders_starts ':' "$work/p/back" start ''
row backing_mode_other_than_0700_is_refused 'mkdir -m 0750 "$work/p/back"' "$work/p/back" refuse 'must be 0700'
row backing_that_is_a_link_is_refused 'mkdir -m 0700 "$work/p/real"; ln -s real "$work/p/back"' "$work/p/back" refuse 'not a folder'
row backing_owned_by_another_user_is_refused 'mkdir -m 0700 "$work/p/back"; chown 1000 "$work/p/back"' "$work/p/back" refuse 'owned by uid 1000'
row world_writable_parent_is_refused 'chmod 0777 "$work/p"' "$work/p/back" refuse 'writable by'
row group_writable_parent_is_refused 'chmod 0775 "$work/p"' "$work/p/back" refuse 'writable by group'
row parent_owned_by_another_user_is_refused 'chown 1000 "$work/p"' "$work/p/back" refuse 'owned by uid 1000'
row acl_granting_write_above_is_refused 'setfacl -m u:1000:rwx "$work/p"' "$work/p/back" refuse 'ACL grants write to uid 1000'
row sticky_parent_with_root_owned_next_folder_starts 'chmod 1777 "$work/p"; mkdir -m 0755 "$work/p/q"' "$work/p/q/back" start ''
row sticky_parent_with_foreign_next_folder_is_refused 'chmod 1777 "$work/p"; mkdir -m 0755 "$work/p/q"; chown 1000 "$work/p/q"' "$work/p/q/back" refuse 'above the backing folder'
row backing_inside_the_mount_point_is_refused ':' "$mnt/back" refuse 'lies inside the mount point'

# The mount point inside the backing folder needs its own mount point.
rm -rf "$work/p" && mkdir -p "$work/p/back/m" && chmod 0755 "$work/p" && chmod 0700 "$work/p/back"
out=$(timeout 10 "$bin" --backing="$work/p/back" --key="$work/k/host.key" "$work/p/back/m" 2>&1)
if mountpoint -q "$work/p/back/m"; then
	umount -l "$work/p/back/m"; echo "not ok - mount_point_inside_backing_is_refused: it started"; fail=$((fail + 1))
elif printf '%s' "$out" | grep -q 'inside the backing folder'; then
	echo "ok - mount_point_inside_backing_is_refused"; pass=$((pass + 1))
else
	echo "not ok - mount_point_inside_backing_is_refused: $out"; fail=$((fail + 1))
fi
# key_refused NAME KEY NOT_MADE: a key path inside the backing folder is
# refused before anything (NOT_MADE) is created there.
key_refused() {
	rm -rf "$work/p" && mkdir -p "$work/p/back" && chmod 0755 "$work/p" &&
		chmod 0700 "$work/p/back"
	out=$(timeout 10 "$bin" --backing="$work/p/back" --key="$2" "$mnt" 2>&1)
	if mountpoint -q "$mnt"; then
		umount -l "$mnt"; echo "not ok - $1"; fail=$((fail + 1))
	elif printf '%s' "$out" | grep -q 'key file .* lies inside the backing folder' &&
		[ ! -e "$3" ]; then
		echo "ok - $1"; pass=$((pass + 1))
	else
		echo "not ok - $1: $out"; fail=$((fail + 1))
	fi
}
key_refused key_file_inside_backing_is_refused_before_it_is_created \
	"$work/p/back/host.key" "$work/p/back/host.key"
# The same when the key's folder does not exist yet (the daemon would
# create it inside the backing folder).
key_refused key_in_a_new_folder_inside_backing_is_refused_before_it_is_created \
	"$work/p/back/keys/host.key" "$work/p/back/keys"

# A second daemon on a backing folder in use would break its chains.
rm -rf "$work/p" && mkdir -p "$work/p" "$work/m2" && chmod 0755 "$work/p"
timeout 10 "$bin" --backing="$work/p/back" --key="$work/k/host.key" "$mnt"
out=$(timeout 10 "$bin" --backing="$work/p/back" --key="$work/k/host.key" "$work/m2" 2>&1)
if mountpoint -q "$work/m2"; then
	umount -l "$work/m2"; echo "not ok - second_daemon_on_the_same_backing_is_refused"; fail=$((fail + 1))
elif printf '%s' "$out" | grep -q 'in use by another ledgerfs'; then
	echo "ok - second_daemon_on_the_same_backing_is_refused"; pass=$((pass + 1))
else
	echo "not ok - second_daemon_on_the_same_backing_is_refused: $out"; fail=$((fail + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
