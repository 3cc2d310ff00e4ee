#!/bin/sh
# SPDX-License-Identifier: MIT
# demo.sh - the host-tools example end to end (README.md): install the
# CRM tool and its key on the host, start ledgerfs, open a case with
# policy.yaml, run agent.sh in bubblewrap as uid 65534 with only the
# case's target folder, and show that the agent got the real lookup
# (result_authoritative: true) while the key appears nowhere it could
# read.  Run as root; binaries from $LEDGERFS_BUILD (default: the source
# tree).  Exits non-zero when a step fails; unmounts on every path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${LEDGERFS_BUILD:-$src}
for b in ledgerfs ledgerctl; do
	[ -x "$build/$b" ] || { echo "demo: $build/$b not built" >&2; exit 2; }
done
command -v bwrap >/dev/null || { echo "demo: bubblewrap is not installed" >&2; exit 2; }

work=$(mktemp -d /tmp/ledgerfs-host-tools.XXXXXX)
chmod 0755 "$work"
mnt=$work/mnt backing=$work/backing key=$work/keys/host.key
mkdir "$mnt" "$work/keys" "$work/libexec" "$work/creds"
chmod 0700 "$work/keys" "$work/creds"
chmod 0755 "$work/libexec"
daemon=
cleanup() {
	status=$?
	set +e
	if mountpoint -q "$mnt" 2>/dev/null; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	fi
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -rf "$work"
	exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM
step() { printf '\n== %s\n' "$*"; }

step "install the tool (root-owned, 0755) and its key (0600, host only)"
install -m 0755 "$here/crm-lookup" "$work/libexec/crm-lookup"
api_key=${CRM_API_KEY:-crm-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}
umask 077
printf 'CRM_API_KEY=%s\n' "$api_key" >"$work/creds/crm.env"
umask 022
sed -e "s|/usr/local/libexec/ledgerfs/crm-lookup|$work/libexec/crm-lookup|" \
	-e "s|/etc/ledgerfs/creds/crm.env|$work/creds/crm.env|" \
	-e "s|user: ledgerfs-tools|user: ${LEDGERFS_TOOLS_USER:-nobody}|" \
	"$here/policy.yaml" >"$work/policy.yaml"
"$build/ledgerctl" validate "$work/policy.yaml"

step "start ledgerfs on $mnt"
"$build/ledgerfs" -f --backing="$backing" --key="$key" "$mnt" 2>"$work/daemon.log" &
daemon=$!
i=0
until [ -d "$mnt/cases" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || { echo "demo: no mount" >&2; exit 1; }
	sleep 0.05
done
ctl() { "$build/ledgerctl" --mount "$mnt" "$@"; }

step "open case demo"
ctl open demo --policy "$work/policy.yaml" --env-file "$work/env"
. "$work/env"

step "the agent, in bubblewrap as uid 65534 (only target/ at /mediator)"
bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib \
	--symlink usr/lib64 /lib64 --proc /proc --dev /dev --tmpfs /tmp \
	--unshare-ipc --unshare-pid --unshare-net --unshare-uts \
	--die-with-parent --new-session --clearenv \
	--bind "$mnt/cases/demo/target" /mediator \
	--perms 0755 --dir /opt --ro-bind "$here/agent.sh" /opt/agent.sh \
	--setenv LEDGERFS_CASE "$LEDGERFS_CASE" \
	--setenv LEDGERFS_TOKEN "$LEDGERFS_TOKEN" \
	--setenv PATH /usr/bin:/bin \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	/bin/sh /opt/agent.sh | tee "$work/agent.out"

step "the host's checks"
grep -q '"result_authoritative":true' "$work/agent.out" ||
	{ echo "demo: the reply is not authoritative" >&2; exit 1; }
grep -q '"tier":"gold"' "$work/agent.out" ||
	{ echo "demo: the agent did not get the real lookup" >&2; exit 1; }
grep -q "the key's variable in my environment: 0$" "$work/agent.out" &&
	grep -q 'files naming it: none$' "$work/agent.out" ||
	{ echo "demo: the agent found the key's name" >&2; exit 1; }
if grep -q -- "$api_key" "$work/agent.out"; then
	echo "demo: the key reached the agent" >&2
	exit 1
fi
if grep -rlqs -- "$api_key" "$backing" "$mnt/cases/demo"; then
	echo "demo: the key is in the ledger or the view" >&2
	exit 1
fi
echo "the agent got the host's result; the key stayed on the host"

step "close, the completion row, verify"
ctl close demo
grep '"phase":"completion"' "$mnt/cases/demo/ledger"
ctl verify "$backing/cases/demo" --key "$key"
echo
echo "demo: ok"
