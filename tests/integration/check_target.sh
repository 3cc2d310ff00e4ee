#!/bin/sh
# SPDX-License-Identifier: MIT
# check_target.sh - `ledgerctl check-target PID` against real bubblewrap
# targets: one bound the right way passes; one that also sees the backing
# folder's parent, the whole view, the key's folder or a folder inside the
# backing folder fails naming the mount; a chroot into a folder above the
# backing folder fails naming its root.
set -u
. "$(dirname "$0")/lib.sh"
command -v bwrap >/dev/null 2>&1 || lf_skip_all "bubblewrap (bwrap) is not installed"
lf_setup
lf_start
# This script's names for lib.sh's folders.
ROOT=$work B=$backing K=$key M=$mnt

BPID=

# The target sandbox is a background process lib.sh's clean-up also ends.
stop_target() {
	if [ -n "$BPID" ]; then
		kill "$BPID" 2>/dev/null
		wait "$BPID" 2>/dev/null
		BPID=
		lf_bg_pids=
	fi
}

fail() {
	echo "FAIL: $*"
	sed 's/^/daemon: /' "$work/daemon.err"
	exit 1
}

mkdir "$M/cases/C" || fail "mkdir case"
printf 'interactions:\n  - match: "*"\n    mode: block\n' >"$M/cases/C/policy" ||
	fail "policy"

# Start a sandboxed target with extra bwrap arguments; TPID is the
# sandboxed process (bwrap's child), from --info-fd.
start_target() {
	rm -f "$ROOT/info"
	timeout 60 ${WRAP:-} bwrap --ro-bind /usr /usr --symlink usr/bin /bin \
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 \
		--proc /proc --dev /dev --tmpfs /tmp ${UNSHARE:---unshare-all} \
		--die-with-parent --bind "$M/cases/C/target" /mediator \
		"$@" --info-fd 3 sleep 30 3>"$ROOT/info" &
	BPID=$!
	lf_bg_pids=$BPID
	TPID=
	i=0
	while [ -z "$TPID" ]; do
		i=$((i + 1))
		[ $i -le 100 ] || fail "bwrap did not report its child"
		TPID=$(sed -n 's/.*"child-pid": *\([0-9][0-9]*\).*/\1/p' \
			"$ROOT/info" 2>/dev/null)
		[ -n "$TPID" ] || sleep 0.1
	done
	# wait until the child's namespace holds the view
	i=0
	until grep -q " /mediator " "/proc/$TPID/mountinfo" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 100 ] || fail "the target never got its mounts"
		sleep 0.1
	done
}

check() {
	"$LEDGERCTL" check-target "$TPID" --mount "$M" --backing "$B" \
		--key "$K" >"$ROOT/out" 2>"$ROOT/err"
}

# expect_exposed WHAT PATTERN: the running target fails (exit 1) with a
# line matching PATTERN; then it is stopped.
expect_exposed() {
	check
	rc=$?
	[ $rc = 1 ] || fail "$1: exit $rc, want 1: $(cat "$ROOT/out" "$ROOT/err")"
	grep -q "$2" "$ROOT/out" || fail "$1: not named: $(cat "$ROOT/out")"
	stop_target
}

# 1. bound the right way: only the case's target/ folder
start_target
check
rc=$?
[ $rc = 0 ] || fail "clean target: exit $rc: $(cat "$ROOT/out" "$ROOT/err")"
grep -q "^ok: $TPID sees only /cases/C/target of the view" "$ROOT/out" ||
	fail "clean target: $(cat "$ROOT/out")"
stop_target

# 1b. in the host's PID namespace: an executor's environment is readable
UNSHARE="--unshare-ipc --unshare-net --unshare-uts" start_target
expect_exposed "host PID namespace shared" \
	"$TPID: shares the host's PID namespace"

# 1c. the host's /proc bound in, though its PID namespace is its own
start_target --ro-bind /proc /hostproc
expect_exposed "host /proc bound" \
	"mount /hostproc (root /, proc proc) is the host's /proc"

# 1d. an overlay whose lower layer is the key's folder, and one whose
# lower layer is the backing folder (an overlay has a device of its own)
mkdir "$ROOT/ov" "$ROOT/ov/up" "$ROOT/ov/work" "$ROOT/ov/m" \
	"$ROOT/ov/up2" "$ROOT/ov/work2" "$ROOT/ov/m2" || fail "overlay folders"
mount -t overlay overlay -o "lowerdir=$ROOT/keys,upperdir=$ROOT/ov/up,workdir=$ROOT/ov/work" \
	"$ROOT/ov/m" || fail "overlay mount"
lf_extra_mounts="$ROOT/ov/m"
start_target --ro-bind "$ROOT/ov/m" /k
expect_exposed "overlay of the key folder" \
	"exposes the host key $K (its layer $ROOT/keys)"
mount -t overlay overlay -o "lowerdir=$B,upperdir=$ROOT/ov/up2,workdir=$ROOT/ov/work2" \
	"$ROOT/ov/m2" || fail "overlay mount 2"
lf_extra_mounts="$ROOT/ov/m $ROOT/ov/m2"
start_target --ro-bind "$ROOT/ov/m2" /b
expect_exposed "overlay of the backing folder" \
	"exposes the backing folder $B (its layer $B)"
umount "$ROOT/ov/m" "$ROOT/ov/m2" && lf_extra_mounts= || fail "umount overlays"

# 1e. an overlay made in a mount namespace of its own, whose layers the
# host cannot find: it fails closed
mkdir "$ROOT/ns" || fail "ns folder"
cat >"$ROOT/ns-inner.sh" <<'NS'
mount -t tmpfs nsfs "$NSDIR" && mkdir "$NSDIR/low" "$NSDIR/up" "$NSDIR/wk" "$NSDIR/m" &&
	mount -t overlay overlay -o "lowerdir=$NSDIR/low,upperdir=$NSDIR/up,workdir=$NSDIR/wk" "$NSDIR/m" &&
	exec "$@"
NS
NSDIR=$ROOT/ns WRAP="unshare -m --propagation private env NSDIR=$ROOT/ns sh $ROOT/ns-inner.sh" \
	start_target --ro-bind "$ROOT/ns/m" /o
expect_exposed "overlay of layers the host cannot find" \
	"is an overlay whose layer $ROOT/ns/low is not found from here"

# 2. the backing folder's parent bound too
start_target --ro-bind "$ROOT" /x
expect_exposed "backing parent bound" \
	"mount /x (root $ROOT,.*exposes the backing folder $B"

# 3. the whole view bound
start_target --bind "$M" /view
expect_exposed "whole view bound" \
	"mount /view (root /, fuse.ledgerfs ledgerfs) exposes more of the view"

# 4. the key's folder bound
start_target --ro-bind "$ROOT/keys" /k
expect_exposed "key folder bound" \
	"mount /k (root $ROOT/keys,.*exposes the host key $K"

# 5. a folder inside the backing folder bound
start_target --ro-bind "$B/cases" /x
expect_exposed "backing subfolder bound" \
	"mount /x (root $B/cases,.*exposes the backing folder $B"

# 6. no sandbox mount at all: a chroot into a folder above the backing
# folder (mountinfo leaves a plain root folder out)
mkdir "$ROOT/usr" && mount --bind /usr "$ROOT/usr" || fail "bind /usr"
lf_extra_mounts="$ROOT/usr"
ln -s usr/lib "$ROOT/lib" && ln -s usr/lib64 "$ROOT/lib64" || fail "links"
chroot "$ROOT" /usr/bin/sleep 30 &
BPID=$!
lf_bg_pids=$BPID
TPID=$BPID
i=0
until [ "$(readlink "/proc/$TPID/root")" = "$ROOT" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "the chroot target did not start"
	sleep 0.1
done
expect_exposed "chroot target" \
	"$TPID: its root folder is at, above or inside the backing folder $B"
umount "$ROOT/usr" && lf_extra_mounts= || fail "umount $ROOT/usr"

# 6b. the target folder of a case of the same name on another daemon:
# another case, of another view
mkdir -m 0700 "$ROOT/backing2" "$ROOT/keys2" && mkdir "$ROOT/mnt2" || fail "mkdir 2"
timeout 120 "$LEDGERFS" -f --backing="$ROOT/backing2" --key="$ROOT/keys2/host.key" \
	"$ROOT/mnt2" 2>"$ROOT/daemon2.err" &
D2=$!
lf_extra_mounts="$ROOT/mnt2"
i=0
until [ -d "$ROOT/mnt2/cases" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "the second daemon did not mount: $(cat "$ROOT/daemon2.err")"
	sleep 0.1
done
mkdir "$ROOT/mnt2/cases/C" || fail "mkdir case on the second daemon"
start_target --bind "$ROOT/mnt2/cases/C/target" /m2
expect_exposed "the same case name on another daemon" \
	"mount /m2 (root /cases/C/target, fuse.ledgerfs ledgerfs) exposes more of the view"
fusermount3 -u "$ROOT/mnt2" && lf_extra_mounts= || fail "umount $ROOT/mnt2"
wait "$D2"

# 7. no such process: unreadable /proc is exit 2
"$LEDGERCTL" check-target 999999999 --mount "$M" --backing "$B" --key "$K" \
	>/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "missing pid: exit $rc, want 2"

echo "PASS: check-target over real bubblewrap targets"
exit 0
