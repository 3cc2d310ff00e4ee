#!/bin/sh
# SPDX-License-Identifier: MIT
# examples_are_valid.sh - what of examples/ can run without Docker,
# Kubernetes, a GitHub runner or systemd as PID 1 is checked here: every
# YAML parses (and says what its README promises), every shell script
# passes `bash -n`, the systemd drop-in passes `systemd-analyze verify`
# with the unit, and the fstab line is one mount(8) reads.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${top_builddir:=$(pwd)}"
ex=$top_srcdir/examples
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1: $2"; fail=$((fail + 1)); }
command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null ||
	{ echo "SKIP: python3-yaml missing"; exit 77; }
work=$(mktemp -d /tmp/lfex.XXXXXX)
trap 'rm -rf "$work"' EXIT

for y in "$ex"/github-actions/*.yml "$ex"/k8s/*.yaml "$ex"/policy.yaml "$ex"/mocks.yaml; do
	if out=$(python3 -c 'import sys, yaml
list(yaml.safe_load_all(open(sys.argv[1])))' "$y" 2>&1); then
		ok "yaml_parses: ${y#"$ex"/}"
	else
		not_ok "yaml_parses: ${y#"$ex"/}" "$out"
	fi
done

if out=$(python3 - "$ex" <<'PY' 2>&1
import sys, yaml
ex = sys.argv[1]
wf = yaml.safe_load(open(ex + "/github-actions/ledgerfs-case.yml"))
steps = wf["jobs"]["case"]["steps"]
assert any("run-case.sh" in s.get("run", "") for s in steps), "no run-case step"
up = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
assert up and up[0].get("if") == "always()", "export not uploaded always"
ds = yaml.safe_load(open(ex + "/k8s/daemonset.yaml"))
c = ds["spec"]["template"]["spec"]["containers"][0]
view = [m for m in c["volumeMounts"] if m["name"] == "view"][0]
assert ds["kind"] == "DaemonSet" and view["mountPropagation"] == "Bidirectional"
pod = yaml.safe_load(open(ex + "/k8s/target-pod.yaml"))
m = pod["spec"]["containers"][0]["volumeMounts"][0]
assert m["subPath"].endswith("/target") and m["mountPath"] == "/mediator"
PY
); then ok workflow_and_manifests_say_what_the_readmes_promise
else not_ok workflow_and_manifests_say_what_the_readmes_promise "$out"; fi

for s in "$ex"/*.sh "$ex"/docker/run.sh; do
	if out=$(bash -n "$s" 2>&1); then ok "shell_syntax: ${s#"$ex"/}"
	else not_ok "shell_syntax: ${s#"$ex"/}" "$out"; fi
done

for d in github-actions docker systemd k8s; do
	[ -s "$ex/$d/README.md" ] && ok "readme: $d" || not_ok "readme: $d" missing
done

unit=$top_builddir/systemd/ledgerfs.service
if command -v systemd-analyze >/dev/null && [ -f "$unit" ]; then
	bin=$(cd "$top_builddir" && pwd)/ledgerfs
	sed "s|^ExecStart=[^ ]*/ledgerfs |ExecStart=$bin |" "$unit" >"$work/ledgerfs.service"
	mkdir "$work/ledgerfs.service.d"
	sed "s|^ExecStart=/usr/sbin/ledgerfs |ExecStart=$bin |" \
		"$ex/systemd/ledgerfs.service.d/limits.conf" >"$work/ledgerfs.service.d/limits.conf"
	if out=$(systemd-analyze verify --man=no "$work/ledgerfs.service" 2>&1) && [ -z "$out" ]; then
		ok systemd_drop_in_verifies
	else
		not_ok systemd_drop_in_verifies "$out"
	fi
else
	echo "# systemd-analyze or the built unit missing: drop-in row skipped"
fi

if out=$(grep -v '^#' "$ex/systemd/ledgerfs.fstab" | awk 'NF { if (NF != 6 || $3 != "fuse.ledgerfs") exit 1 }' 2>&1) &&
	findmnt --tab-file "$ex/systemd/ledgerfs.fstab" --target /run/ledgerfs -no FSTYPE,OPTIONS 2>/dev/null |
	grep -q 'fuse.ledgerfs key=/etc/ledgerfs/host.key'; then
	ok fstab_line_is_read_by_findmnt
else
	not_ok fstab_line_is_read_by_findmnt "$out"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
