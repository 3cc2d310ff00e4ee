#!/bin/sh
# SPDX-License-Identifier: MIT
# key_hygiene.sh - the daemon refuses to start with a host key that
# someone else could have planted or could replace (ledgerfs(8), SAFETY CHECKS):
# the key file and its folders pass the backing folder's ownership and
# mode rules.  One row per rule: key tree -> start or refuse, and why.
set -u
bin=${top_builddir:-.}/ledgerfs
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
work=$(mktemp -d /tmp/lf-key.XXXXXX)
chmod 0755 "$work"
mnt=$work/mnt
mkdir "$mnt" "$work/p"
chmod 0755 "$work/p"
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && { fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"; }
	rm -rf "$work"
}
trap cleanup EXIT
pass=0 fail=0
k=$work/kp

# A key the daemon made itself, to copy into place.
mkkey() { # PATH [MODE]
	head -c 32 /dev/urandom >"$1" && chmod "${2:-0600}" "$1"
}

# row NAME SETUP KEY EXPECT(start|refuse) REASON-SUBSTRING
row() {
	rm -rf "$k" "$work/p/back"
	mkdir -m 0755 "$k"
	eval "$2"
	out=$(timeout 10 "$bin" --backing="$work/p/back" --key="$3" "$mnt" 2>&1)
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

row key_made_by_the_daemon_in_root_owned_folders_starts \
	':' "$k/new/host.key" start ''
row key_owned_by_root_in_a_0700_folder_starts \
	'mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"' "$k/d/host.key" start ''
row key_owned_by_another_user_is_refused \
	'mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"; chown 1000 "$k/d/host.key"' \
	"$k/d/host.key" refuse 'owned by uid 1000'
row key_writable_by_group_is_refused \
	'mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key" 0620' "$k/d/host.key" refuse 'group or others may read or write it'
row key_that_is_a_symbolic_link_is_refused \
	'mkdir -m 0700 "$k/d"; mkkey "$k/d/real.key"; ln -s real.key "$k/d/host.key"' \
	"$k/d/host.key" refuse 'not a regular file'
row key_folder_owned_by_another_user_is_refused \
	'mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"; chown 1000 "$k/d"' \
	"$k/d/host.key" refuse 'key folder'
row key_folder_writable_by_others_is_refused \
	'mkdir -m 0777 "$k/d"; chmod 0777 "$k/d"; mkkey "$k/d/host.key"' \
	"$k/d/host.key" refuse 'group or others may write it'
row key_folder_writable_by_group_is_refused \
	'mkdir -m 0770 "$k/d"; chmod 0770 "$k/d"; mkkey "$k/d/host.key"' \
	"$k/d/host.key" refuse 'group or others may write it'
row key_of_another_user_in_a_world_writable_folder_is_refused \
	'mkdir "$k/d"; chmod 1777 "$k/d"; mkkey "$k/d/host.key"; chown 1000 "$k/d/host.key"' \
	"$k/d/host.key" refuse 'owned by uid 1000'
row root_key_in_a_sticky_world_writable_folder_starts \
	'mkdir "$k/d"; chmod 1777 "$k/d"; mkkey "$k/d/host.key"' "$k/d/host.key" start ''
row world_writable_folder_above_the_key_is_refused \
	'chmod 0777 "$k"; mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"' \
	"$k/d/host.key" refuse 'above the key folder'
row folder_above_the_key_owned_by_another_user_is_refused \
	'chown 1000 "$k"; mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"' \
	"$k/d/host.key" refuse 'owned by uid 1000'
row acl_granting_write_above_the_key_is_refused \
	'setfacl -m u:1000:rwx "$k"; mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"' \
	"$k/d/host.key" refuse 'ACL grants write to uid 1000'
row sticky_folder_above_with_a_root_owned_key_folder_starts \
	'chmod 1777 "$k"; mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"' "$k/d/host.key" start ''
row sticky_folder_above_with_a_foreign_key_folder_is_refused \
	'chmod 1777 "$k"; mkdir -m 0700 "$k/d"; mkkey "$k/d/host.key"; chown 1000 "$k/d"' \
	"$k/d/host.key" refuse 'owned by uid 1000'
row key_to_be_made_under_a_world_writable_folder_is_refused \
	'chmod 0777 "$k"' "$k/new/host.key" refuse 'group or others may write it'

# Nothing was made for a refused key.
if [ -e "$k/new" ]; then
	echo "not ok - refused_key_folder_is_not_created"; fail=$((fail + 1))
else
	echo "ok - refused_key_folder_is_not_created"; pass=$((pass + 1))
fi
if [ -e "$work/p/back" ]; then
	echo "not ok - refused_key_leaves_no_backing_folder"; fail=$((fail + 1))
else
	echo "ok - refused_key_leaves_no_backing_folder"; pass=$((pass + 1))
fi

# A backing folder to be made under a folder anyone may write: refused,
# and the folder made for the check taken away again.
mkdir -m 0777 "$work/ww" && chmod 0777 "$work/ww"
mkdir -m 0700 "$work/wk" && mkkey "$work/wk/host.key"
out=$(timeout 10 "$bin" --backing="$work/ww/back" --key="$work/wk/host.key" "$mnt" 2>&1)
if mountpoint -q "$mnt"; then
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
	echo "not ok - backing_under_a_world_writable_folder_is_refused_and_not_left: started"; fail=$((fail + 1))
elif [ -e "$work/ww/back" ]; then
	echo "not ok - backing_under_a_world_writable_folder_is_refused_and_not_left: left behind ($out)"; fail=$((fail + 1))
else
	echo "ok - backing_under_a_world_writable_folder_is_refused_and_not_left"; pass=$((pass + 1))
fi
# A start refused later (the backing folder in use by another daemon, a
# key path that is a folder) takes away the key, signing key and folders
# it made for that start.
mkdir -m 0700 "$work/iu" && mkdir -m 0700 "$work/iuk" && mkkey "$work/iuk/host.key"
mkdir "$work/mnt2"
"$bin" -f --backing="$work/iu" --key="$work/iuk/host.key" "$mnt" >/dev/null 2>&1 &
dpid=$!
i=0
until mountpoint -q "$mnt" || [ $i -gt 100 ]; do i=$((i + 1)); sleep 0.05; done
out=$(timeout 10 "$bin" --backing="$work/iu" --key="$work/newk/host.key" "$work/mnt2" 2>&1)
rc=$?
if [ "$rc" = 0 ] || mountpoint -q "$work/mnt2"; then
	mountpoint -q "$work/mnt2" && umount -l "$work/mnt2"
	echo "not ok - a_start_refused_for_a_backing_in_use_leaves_no_key_behind: started"; fail=$((fail + 1))
elif [ -e "$work/newk" ]; then
	echo "not ok - a_start_refused_for_a_backing_in_use_leaves_no_key_behind: $(ls -R "$work/newk" | tr '\n' ' ') ($out)"; fail=$((fail + 1))
else
	echo "ok - a_start_refused_for_a_backing_in_use_leaves_no_key_behind"; pass=$((pass + 1))
fi
fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
wait "$dpid" 2>/dev/null
out=$(timeout 10 "$bin" --backing="$work/nb" --key="$work/nk2/" "$mnt" 2>&1)
if mountpoint -q "$mnt"; then
	fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt"
	echo "not ok - a_key_path_naming_a_folder_is_refused_and_leaves_nothing: started"; fail=$((fail + 1))
elif [ -e "$work/nb" ] || [ -e "$work/nk2" ]; then
	echo "not ok - a_key_path_naming_a_folder_is_refused_and_leaves_nothing: left $(ls -d "$work/nb" "$work/nk2" 2>/dev/null | tr '\n' ' ') ($out)"; fail=$((fail + 1))
else
	echo "ok - a_key_path_naming_a_folder_is_refused_and_leaves_nothing"; pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
