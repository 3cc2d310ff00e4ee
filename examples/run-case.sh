#!/bin/sh
# SPDX-License-Identifier: MIT
# run-case.sh - run one real case end to end, as a CI mount script would:
# start ledgerfs on a temporary mount with a temporary backing folder and
# key, open a case from examples/policy.yaml + mocks.yaml, start the agent
# in bubblewrap with only the case's target/ folder bound at /mediator and
# no network, check the sandbox (sealpath inside, check-target outside),
# wait for registration, let the agent run, close the case, print the
# ledger and verify it.  Unmounts on every exit path; exits non-zero when
# any step fails.  What a reviewer needs is kept in a named folder, on
# success and failure alike: the export (CASE.tar: ledger, case.json,
# policy, mocks, evidence, verify report, SHA256SUMS), the daemon's log,
# the evidence, and a copy of the backing case folder.
#
# usage: examples/run-case.sh [AGENT]   (run as root; AGENT defaults to
#        examples/agent.sh; binaries from $LEDGERFS_BUILD, default: the
#        source tree, where an in-tree build puts them; artifacts in
#        $LEDGERFS_ARTIFACTS, default ./ledgerfs-artifacts/CASE; the
#        throwaway host key and the case's seal key K0 (which check the
#        MACs of the closed case) are kept there too only with
#        LEDGERFS_KEEP_KEY=1, since whoever holds them can forge the MACs;
#        run under sudo, the artifacts then belong to the user who ran it;
#        the agent is stopped after $LEDGERFS_AGENT_TIMEOUT seconds,
#        default 600)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${LEDGERFS_BUILD:-$src}
agent=${1:-$here/agent.sh}
case_id=${LEDGERFS_CASE_NAME:-demo}
art=${LEDGERFS_ARTIFACTS:-$(pwd)/ledgerfs-artifacts/$case_id}
mkdir -p "$art"
art=$(cd "$art" && pwd)
for b in ledgerfs ledgerctl sealpath; do
	[ -x "$build/$b" ] || { echo "run-case: $build/$b not built (run ./configure && make)" >&2; exit 2; }
done
command -v bwrap >/dev/null || { echo "run-case: bubblewrap (bwrap) is not installed" >&2; exit 2; }
agent_timeout=${LEDGERFS_AGENT_TIMEOUT:-600}
case $agent_timeout in
'' | *[!0-9]*) echo "run-case: LEDGERFS_AGENT_TIMEOUT: whole seconds, not '$agent_timeout'" >&2; exit 2 ;;
esac

# A root-owned 0755 work folder: the daemon refuses a backing folder
# whose parents others could replace.
work=$(mktemp -d /tmp/ledgerfs-case.XXXXXX)
chmod 0755 "$work"
mnt=$work/mnt backing=$work/backing key=$work/key/host.key
mkdir "$mnt"
daemon= sandbox=
cleanup() {
	status=$?
	set +e
	[ -n "$sandbox" ] && kill "$sandbox" 2>/dev/null
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	if [ -n "$daemon" ]; then
		kill "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	# Keep what a reviewer needs, whatever happened.
	[ -f "$work/daemon.log" ] && cp "$work/daemon.log" "$art/"
	[ -d "$backing/cases/$case_id" ] && rm -rf "$art/backing" &&
		mkdir -p "$art/backing" && cp -r "$backing/cases/$case_id" "$art/backing/"
	if [ "${LEDGERFS_KEEP_KEY:-0}" = 1 ]; then
		[ -f "$key" ] && cp "$key" "$art/host.key"
		[ -f "$work/seal.k0" ] && cp "$work/seal.k0" "$art/seal.k0"
	fi
	# Under sudo (a CI runner's upload step runs as its own user).
	[ -n "${SUDO_UID:-}" ] && [ -n "${SUDO_GID:-}" ] &&
		chown -R "$SUDO_UID:$SUDO_GID" "$art" 2>/dev/null
	echo "run-case: artifacts in $art" >&2
	rm -rf "$work"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step() { printf '\n== %s\n' "$*"; }

step "start ledgerfs on $mnt"
"$build/ledgerfs" -f --backing="$backing" --key="$key" "$mnt" 2>"$work/daemon.log" &
daemon=$!
i=0
until [ -d "$mnt/cases" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "run-case: mount did not appear" >&2; exit 1; }
	sleep 0.05
done
ctl() { "$build/ledgerctl" --mount "$mnt" "$@"; }

step "open case $case_id"
ctl open "$case_id" --policy "$src/examples/policy.yaml" --mocks "$src/examples/mocks.yaml" --env-file "$work/env" \
	--seal-key-out "$work/seal.k0"
. "$work/env"

step "start the agent in bubblewrap (only target/ at /mediator, no network)"
mkfifo "$work/go"
# Inside: sealpath must print exactly `sealed` before the agent runs, and
# the agent waits for the host's go, given after check-target passed.
bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin \
	--symlink usr/lib /lib --symlink usr/lib64 /lib64 \
	--ro-bind-try /etc/alternatives /etc/alternatives \
	--proc /proc --dev /dev --tmpfs /tmp \
	--unshare-ipc --unshare-pid --unshare-net --unshare-uts --unshare-cgroup-try \
	--die-with-parent --new-session \
	--perms 0755 --dir /opt --perms 0755 --dir /opt/ledgerfs \
	--bind "$mnt/cases/$case_id/target" /mediator \
	--ro-bind "$build/sealpath" /opt/ledgerfs/sealpath \
	--ro-bind "$agent" /opt/ledgerfs/agent.sh \
	--ro-bind "$work/go" /opt/ledgerfs/go \
	--setenv LEDGERFS_CASE "$LEDGERFS_CASE" --setenv LEDGERFS_TOKEN "$LEDGERFS_TOKEN" \
	--setenv LEDGERFS_DIR /mediator --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin \
	--info-fd 3 \
	/bin/sh -c '
		v=$(/opt/ledgerfs/sealpath)
		[ "$v" = sealed ] || { echo "sandbox: sealpath refused the PATH:"; echo "$v"; exit 97; }
		echo "sandbox: sealpath: $v"
		read go < /opt/ledgerfs/go
		[ "$go" = go ] || exit 98
		exec setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs \
			/bin/sh /opt/ledgerfs/agent.sh' 3>"$work/info" &
sandbox=$!
i=0
until grep -q child-pid "$work/info" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 100 ] || { echo "run-case: sandbox did not start" >&2; exit 1; }
	sleep 0.05
done
child=$(sed -n 's/.*"child-pid": *\([0-9]*\).*/\1/p' "$work/info")

# The sandbox may have refused to start the agent; a fifo write must not hang.
signal() { timeout 10 sh -c 'echo "$1" > "$2"' - "$1" "$work/go"; }

step "check-target $child"
if ! ctl check-target "$child" --mount "$mnt" --backing "$backing" --key "$key"; then
	signal stop || true
	ctl fail "$case_id" "check-target failed"
	exit 1
fi
if ! signal go; then
	wait "$sandbox" || true
	sandbox=
	ctl fail "$case_id" "sandbox refused to start the agent"
	echo "run-case: the sandbox did not start the agent (see above)" >&2
	exit 1
fi

step "wait for registration"
ctl wait "$case_id" --timeout 30

step "agent output"
# An agent that never ends is stopped: bwrap --die-with-parent takes the
# sandbox with it.  LEDGERFS_AGENT_TIMEOUT seconds, default 600.  The
# watchdog looks once a second whether the sandbox is still there, so it
# ends within a second of the agent whatever becomes of the signal sent
# to it below (a shell that has just forked can lose one).
agent_status=0
(
	t=0
	while [ "$t" -lt "$agent_timeout" ]; do
		sleep 1
		kill -0 "$sandbox" 2>/dev/null || exit 0
		t=$((t + 1))
	done
	touch "$work/agent-timeout"
	kill "$sandbox"
) 2>/dev/null &
watchdog=$!
wait "$sandbox" || agent_status=$?
kill "$watchdog" 2>/dev/null || true
wait "$watchdog" 2>/dev/null || true
sandbox=
if [ -e "$work/agent-timeout" ]; then
	echo "run-case: the agent ran past $agent_timeout s and was stopped" >&2
	agent_status=124
fi

step "close"
ctl close "$case_id"
ctl status "$case_id"

step "ledger (cat $mnt/cases/$case_id/ledger)"
cat "$mnt/cases/$case_id/ledger"

step "verify (the mounted case against the daemon, then the backing copy with the key)"
ctl verify "$mnt/cases/$case_id"
ctl verify "$backing/cases/$case_id" --key "$key"

step "evidence"
ctl evidence "$mnt/cases/$case_id" > "$art/evidence.json"
echo "$(grep -c '"call_id"' "$art/evidence.json") host action events"

step "export $art/$case_id.tar"
ctl export "$case_id" "$art/$case_id.tar" --backing "$backing" --key "$key"
# A closed case's MACs need its K0 (ledgerctl(1) verify): every one checked.
ctl verify "$art/$case_id.tar" --key "$key" --seal-key "$work/seal.k0" --require-mac

[ "$agent_status" -eq 0 ] || { echo "run-case: the agent exited $agent_status" >&2; exit 1; }
echo
echo "run-case: ok"
