#!/bin/sh
# check_target.sh - `ledgerctl check-target PID` against real bubblewrap
# targets: one bound the right way passes; one that also sees the backing
# folder's parent, the whole view, or the key's folder fails naming the
# mount.
set -u

: "${top_builddir:?top_builddir must be set (make check sets it)}"
LEDGERFS=$top_builddir/ledgerfs
LEDGERCTL=$top_builddir/ledgerctl

if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ]; then
	echo "SKIP: needs root and /dev/fuse (the view mounts with allow_other)"
	exit 77
fi
if ! command -v bwrap >/dev/null 2>&1; then
	echo "SKIP: bubblewrap (bwrap) is not installed"
	exit 77
fi
for p in "$LEDGERFS" "$LEDGERCTL"; do
	[ -x "$p" ] || { echo "FAIL: $p is not built"; exit 1; }
done

ROOT=$(mktemp -d /tmp/ledgerfs-check-target.XXXXXX) || exit 1
chmod 0755 "$ROOT"
B=$ROOT/backing
K=$ROOT/keys/host.key
M=$ROOT/mnt
mkdir -m 0700 "$B" "$ROOT/keys" && mkdir "$M" || exit 1
DPID=
BPID=

stop_target() {
	if [ -n "$BPID" ]; then
		kill "$BPID" 2>/dev/null
		wait "$BPID" 2>/dev/null
		BPID=
	fi
}

cleanup() {
	stop_target
	if grep -q " $M fuse" /proc/self/mounts 2>/dev/null; then
		fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null
	fi
	if [ -n "$DPID" ]; then
		kill "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	rm -rf "$ROOT"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	[ -f "$ROOT/daemon.log" ] && sed 's/^/daemon: /' "$ROOT/daemon.log"
	exit 1
}

timeout 120 "$LEDGERFS" -f --backing="$B" --key="$K" "$M" \
	2>"$ROOT/daemon.log" &
DPID=$!
i=0
until [ -d "$M/cases" ]; do
	i=$((i + 1))
	[ $i -le 100 ] || fail "the view did not come up"
	kill -0 "$DPID" 2>/dev/null || fail "the daemon exited"
	sleep 0.1
done
mkdir "$M/cases/C" || fail "mkdir case"
printf 'interactions:\n  - match: "*"\n    mode: block\n' >"$M/cases/C/policy" ||
	fail "policy"

# Start a sandboxed target with extra bwrap arguments; TPID is the
# sandboxed process (bwrap's child), from --info-fd.
start_target() {
	rm -f "$ROOT/info"
	timeout 60 bwrap --ro-bind /usr /usr --symlink usr/bin /bin \
		--symlink usr/lib /lib --symlink usr/lib64 /lib64 \
		--proc /proc --dev /dev --tmpfs /tmp --unshare-all \
		--die-with-parent --bind "$M/cases/C/target" /mediator \
		"$@" --info-fd 3 sleep 30 3>"$ROOT/info" &
	BPID=$!
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

# 1. bound the right way: only the case's target/ folder
start_target
check
rc=$?
[ $rc = 0 ] || fail "clean target: exit $rc: $(cat "$ROOT/out" "$ROOT/err")"
grep -q "^ok: $TPID sees only /cases/C/target of the view" "$ROOT/out" ||
	fail "clean target: $(cat "$ROOT/out")"
stop_target

# 2. the backing folder's parent bound too
start_target --ro-bind "$ROOT" /x
check
rc=$?
[ $rc = 1 ] || fail "backing parent bound: exit $rc, want 1: $(cat "$ROOT/out" "$ROOT/err")"
grep -q "mount /x (root $ROOT," "$ROOT/out" &&
	grep -q "exposes the backing folder $B" "$ROOT/out" ||
	fail "backing parent bound: the mount is not named: $(cat "$ROOT/out")"
stop_target

# 3. the whole view bound
start_target --bind "$M" /view
check
rc=$?
[ $rc = 1 ] || fail "whole view bound: exit $rc, want 1: $(cat "$ROOT/out" "$ROOT/err")"
grep -q "mount /view (root /, fuse.ledgerfs ledgerfs) exposes more of the view" \
	"$ROOT/out" || fail "whole view bound: not named: $(cat "$ROOT/out")"
stop_target

# 4. the key's folder bound
start_target --ro-bind "$ROOT/keys" /k
check
rc=$?
[ $rc = 1 ] || fail "key folder bound: exit $rc, want 1: $(cat "$ROOT/out" "$ROOT/err")"
grep -q "mount /k (root $ROOT/keys,.*exposes the host key $K" "$ROOT/out" ||
	fail "key folder bound: not named: $(cat "$ROOT/out")"
stop_target

# 5. no such process: unreadable /proc is exit 2
"$LEDGERCTL" check-target 999999999 --mount "$M" --backing "$B" --key "$K" \
	>/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "missing pid: exit $rc, want 2"

echo "PASS: check-target over real bubblewrap targets"
exit 0
