#!/bin/sh
# SPDX-License-Identifier: MIT
# mount_helper_fstab.sh - the daemon started the ways an operator mounts
# (ledgerfs(8) MOUNTING): `mount -t fuse.ledgerfs SOURCE DIR -o ...`,
# mount.fuse3, and an /etc/fstab line (a temporary fstab read by
# `mount -T`).  mount(8) runs helpers with a fixed PATH, so the test runs
# in a private mount namespace whose /usr/local/sbin holds the built
# daemon; nothing outside the namespace changes.
if [ "${1:-}" != --inside ]; then
	[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
	exec unshare -m --propagation private sh "$0" --inside
fi
. "$(dirname "$0")/lib.sh"
lf_setup
mkdir "$work/sbin"
ln -s "$(cd "$(dirname "$LEDGERFS")" && pwd)/ledgerfs" "$work/sbin/ledgerfs"
mount --bind "$work/sbin" /usr/local/sbin || lf_skip_all "cannot bind /usr/local/sbin"
lf_extra_mounts=/usr/local/sbin

# The daemon forks away from mount(8): stop it by unmounting, and kill
# (by id) whatever of it is left at the end.
stray_daemons() {
	for _p in $(pgrep -x ledgerfs); do
		grep -qF "$work" "/proc/$_p/cmdline" 2>/dev/null && echo "$_p"
	done
}
cleanup_inside() {
	_st_inside=$?
	for _p in $(stray_daemons); do kill -9 "$_p"; done
	# lf_cleanup exits with the status it finds: the script's.
	(exit "$_st_inside")
	lf_cleanup
}
trap cleanup_inside EXIT

# umount_wait: unmount and wait for the daemon to leave.
umount_wait() {
	umount "$mnt" || umount -l "$mnt"
	_i=0
	while [ -n "$(stray_daemons)" ] && [ $_i -lt 100 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	[ -z "$(stray_daemons)" ]
}

rule_begin mount_t_fuse_ledgerfs_with_dash_o_options_serves
out=$(timeout 20 mount -t fuse.ledgerfs "$backing" "$mnt" -o "key=$key,max-calls=1" 2>&1) ||
	rule_fail "mount: $out"
if lf_mounted; then
	lf_open_reg M || rule_fail "open"
	lf_call M c1 lookup_a >/dev/null
	rule_has "max-calls=1 applied" "$(lf_call M c2 lookup_a)" '"matched":"<limit>"'
	[ -d "$backing/cases/M" ] || rule_fail "SOURCE is not the backing folder"
	[ -s "$key" ] || rule_fail "key not at key="
	umount_wait || rule_fail "daemon did not leave after umount"
else
	rule_fail "not mounted"
fi
rule_end

rule_begin mount_fuse3_helper_serves
out=$(timeout 20 mount.fuse3 "$backing" "$mnt" -t ledgerfs -o "key=$key" 2>&1) ||
	rule_fail "mount.fuse3: $out"
if lf_mounted; then
	rule_eq "case kept" registered "$(lf_state M)"
	umount_wait || rule_fail "daemon did not leave after umount"
else
	rule_fail "not mounted"
fi
rule_end

rule_begin fstab_line_mounts_with_its_options
printf '%s %s fuse.ledgerfs key=%s,max-line=100,nofail 0 0\n' \
	"$backing" "$mnt" "$key" >"$work/fstab"
out=$(timeout 20 mount -T "$work/fstab" "$mnt" 2>&1) || rule_fail "mount -T: $out"
if lf_mounted; then
	lf_open_reg F || rule_fail "open"
	rule_has "max-line=100 applied" \
		"$(lf_write F request --repeat-byte a 200 -a '\n')" "write=EFBIG"
	umount_wait || rule_fail "daemon did not leave after umount"
else
	rule_fail "not mounted"
fi
rule_end

rule_begin mount_with_a_typo_fails_and_creates_nothing
out=$(timeout 20 mount -t fuse.ledgerfs "$work/new" "$mnt" -o "key=$work/newkeys/k,max-cals=1" 2>&1) &&
	rule_fail "mount succeeded"
lf_mounted && { rule_fail mounted; umount_wait; }
[ -e "$work/new" ] && rule_fail "backing folder created"
[ -e "$work/newkeys" ] && rule_fail "key folder created"
rule_has reason "$out" "max-cals"
rule_end

# ledgerfs(8) SYSTEMD: once detached, the daemon's error lines go to
# syslog.  Here /dev is a copy of the nodes the daemon needs, on a tmpfs
# of this namespace, with /dev/log a socket this test reads.
rule_begin a_detached_daemon_sends_its_errors_to_syslog
mkdir "$work/dev"
mount -t tmpfs tmpfs "$work/dev" && cp -a /dev/null /dev/zero /dev/fuse \
	/dev/urandom /dev/random "$work/dev/" && mount --bind "$work/dev" /dev ||
	lf_skip_all "cannot make a /dev of this namespace"
lf_extra_mounts="$lf_extra_mounts /dev $work/dev"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
s.settimeout(20)
print("ready", flush=True)
with open(sys.argv[1], "ab", buffering=0) as f:
    while True:
        try:
            f.write(s.recv(65536) + b"\n")
        except socket.timeout:
            break
' "$work/syslog" >"$work/syslog.ready" &
lf_bg_pids=$!
_i=0
until grep -q ready "$work/syslog.ready" 2>/dev/null || [ $_i -gt 100 ]; do
	sleep 0.05
	_i=$((_i + 1))
done
out=$(timeout 20 mount -t fuse.ledgerfs "$backing" "$mnt" -o "key=$key" 2>&1) ||
	rule_fail "mount: $out"
if lf_mounted; then
	# No descriptor left for a new case: its ledger cannot be made.
	# The daemon is the one holding /dev/fuse (its helper is a ledgerfs too).
	pid=
	for _p in $(stray_daemons); do
		ls -l "/proc/$_p/fd" 2>/dev/null | grep -q /dev/fuse && pid=$_p
	done
	fds=$(ls "/proc/$pid/fd" | wc -l)
	prlimit --pid "$pid" --nofile="$fds:$fds" || rule_fail "prlimit"
	lf_open_reg L >/dev/null 2>&1 && rule_fail "case L opened with no descriptor left"
	_i=0
	until grep -q "Too many open files" "$work/syslog" 2>/dev/null || [ $_i -gt 100 ]; do
		sleep 0.05
		_i=$((_i + 1))
	done
	rule_has "syslog" "$(cat "$work/syslog" 2>/dev/null)" "ledgerfs["
	rule_has "the error line" "$(cat "$work/syslog" 2>/dev/null)" "Too many open files"
	umount_wait || rule_fail "daemon did not leave after umount"
else
	rule_fail "not mounted"
fi
kill "$lf_bg_pids" 2>/dev/null
wait "$lf_bg_pids" 2>/dev/null
lf_bg_pids=
rule_end

lf_finish
