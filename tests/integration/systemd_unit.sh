#!/bin/sh
# SPDX-License-Identifier: MIT
# systemd_unit.sh - the installed unit is valid (`systemd-analyze verify`)
# and the daemon speaks its Type=notify side (ledgerfs(8) SYSTEMD):
# READY=1 on $NOTIFY_SOCKET once the view is mounted, STOPPING=1 at a
# SIGTERM stop.  No systemd runs as PID 1 here; a small listener stands
# in for it.
. "$(dirname "$0")/lib.sh"
command -v systemd-analyze >/dev/null || lf_skip_all "no systemd-analyze"
command -v python3 >/dev/null || lf_skip_all "no python3"
unit=$top_builddir/systemd/ledgerfs.service
[ -f "$unit" ] || lf_skip_all "$unit not built"
lf_setup

# The unit as installed, its daemon path pointed at the built one.
prefix_sbin=$(sed -n 's|^ExecStart=\(.*\)/ledgerfs .*|\1|p' "$unit")
sed "s|$prefix_sbin/ledgerfs|$(cd "$top_builddir" && pwd)/ledgerfs|" "$unit" \
	>"$work/ledgerfs.service"
rule_begin unit_passes_systemd_analyze_verify
out=$(systemd-analyze verify --man=no "$work/ledgerfs.service" 2>&1) ||
	rule_fail "verify: $out"
[ -z "$out" ] || rule_fail "verify said: $out"
u=$(cat "$unit")
rule_has type "$u" "Type=notify"
rule_has stop "$u" "fusermount3 -u "
rule_has fuse "$u" "DeviceAllow=/dev/fuse rw"
rule_has "backing and key folders for any prefix" "$u" "ExecStartPre=/bin/mkdir -p -m 0700 "
grep -Eq '^(ProtectSystem|ProtectHome|PrivateTmp|PrivateDevices|PrivateMounts)=' "$unit" &&
	rule_fail "an option that hides the mount from the host"
rule_end

# A unit with a mistake is caught (the check is not vacuous).
sed -e 's/^Type=notify/Type=notifyy/' -e 's|^ExecStart=[^ ]*|ExecStart=/nonexistent/ledgerfs|' \
	"$work/ledgerfs.service" >"$work/bad.service"
rule_begin systemd_analyze_verify_catches_a_bad_unit
out=$(systemd-analyze verify --man=no "$work/bad.service" 2>&1) && [ -z "$out" ] &&
	rule_fail "bad unit passed"
rule_has "names the service type" "$out" "notifyy"
rule_end

cat >"$work/listen.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
with open(sys.argv[2], "a") as out:
    while True:
        msg = s.recv(4096).decode()
        out.write(msg.replace("\n", " ") + "\n")
        out.flush()
        if "STOPPING=1" in msg:
            break
PY
python3 "$work/listen.py" "$work/notify.sock" "$work/notify.log" &
listener=$!
lf_bg_pids="$lf_bg_pids $listener"
i=0
while [ ! -S "$work/notify.sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

NOTIFY_SOCKET=$work/notify.sock
export NOTIFY_SOCKET
lf_start
unset NOTIFY_SOCKET
i=0
while ! grep -q READY=1 "$work/notify.log" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
rule_begin daemon_notifies_ready_once_mounted
msg=$(grep READY=1 "$work/notify.log")
rule_has ready "$msg" "READY=1"
rule_has mainpid "$msg" "MAINPID=$lf_daemon"
rule_has status "$msg" "STATUS=serving $mnt"
lf_mounted || rule_fail "READY=1 but not mounted"
rule_end

kill -TERM "$lf_daemon"
wait "$lf_daemon"
st=$?
lf_daemon=
wait "$listener"
rule_begin daemon_notifies_stopping_and_exits_zero_on_sigterm
rule_eq exit 0 "$st"
rule_has stopping "$(cat "$work/notify.log")" "STOPPING=1"
rule_end
# make install's own step (mk/packaging.am): the daemon's default backing
# folder and key folder, private, under DESTDIR.
rule_begin install_makes_the_default_backing_and_key_folders_private
make -s -C "$top_builddir" install-data-local DESTDIR="$work/dest" \
	>"$work/install.out" 2>&1 || rule_fail "install: $(cat "$work/install.out")"
state=$(sed -n 's|^ExecStart=.*--backing=\([^ ]*\) .*|\1|p' "$unit")
keydir=$(sed -n 's|^ExecStart=.*--key=\([^ ]*\)/host.key .*|\1|p' "$unit")
rule_eq "backing folder" 700 "$(stat -c %a "$work/dest$state" 2>&1)"
rule_eq "key folder" 700 "$(stat -c %a "$work/dest$keydir" 2>&1)"
rule_end
lf_finish
