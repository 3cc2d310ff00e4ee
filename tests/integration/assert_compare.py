#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""assert_compare.py - the differential run: generated policy, mocks,
cassettes and calls go both to ASSERT's own host mediator (in this
process) and to a mounted ledgerfs (ledgerctl open, then the target's
request file); every decision payload is compared key for key.

usage: assert_compare.py ASSERT_ROOT MOUNT LEDGERCTL WORKDIR SEED CASES CALLS

Prints one line per difference and a summary; exits 1 when a difference
is not one that ledgerfs-policy(5) DIFFERENCES FROM ASSERT lists (the
KNOWN table below names each by its section there).
"""
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import assert_gen  # noqa: E402
import assert_oracle  # noqa: E402

# Keys ledgerfs adds to ASSERT's payload (ledgerfs(8) PROTOCOL).
OWN_KEYS = {"call_id", "sequence", "result_source", "result_authoritative",
            "over_limit"}

# Listed differences: (kind, test on ledgerfs's refusal text).
KNOWN_LOAD = [
    ("refuses_unknown_mode", "unknown mode"),
    ("refuses_what_asserts_calls_would_fail_on", "declares neither"),
    ("refuses_what_asserts_calls_would_fail_on", "needs a cassette dir"),
    ("refuses_what_asserts_calls_would_fail_on", "operand must be a number"),
    ("refuses_what_asserts_calls_would_fail_on", "'in' needs a list"),
    ("refuses_what_asserts_calls_would_fail_on", "matcher operator"),
    ("refuses_what_asserts_calls_would_fail_on", "operator matcher takes"),
    ("refuses_what_asserts_calls_would_fail_on", "a scenario mock needs"),
    ("refuses_what_asserts_calls_would_fail_on", "not found for"),
    ("refuses_what_asserts_calls_would_fail_on", "invalid regex"),
    ("refuses_odd_tool_patterns", "is a wildcard only"),
    ("refuses_odd_tool_patterns", "only one '*'"),
    ("refuses_non_string_keys_and_values", "must be a string"),
    ("refuses_non_string_keys_and_values", "must be a scalar"),
    ("yaml_timestamps_and_sets", "timestamp"),
]


def ledgerfs_open(ctl, mount, case, files):
    """ledgerctl open; returns (ok, stderr)."""
    args = [ctl, "--mount", mount, "open", case, "--policy", files["policy"],
            "--mocks", files["mocks"], "--env-file", files["env"]]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return p.returncode == 0, p.stderr.strip()


def register(mount, case, env):
    token = None
    for line in Path(env).read_text().splitlines():
        if line.startswith("LEDGERFS_TOKEN="):
            token = line.split("=", 1)[1].strip().strip("'\"")
    with open(f"{mount}/cases/{case}/target/register", "w") as f:
        f.write(json.dumps({"case_id": case, "token": token}) + "\n")


def ledgerfs_call(mount, case, call):
    tdir = f"{mount}/cases/{case}/target"
    line = json.dumps(call, ensure_ascii=False) + "\n"
    try:
        fd = os.open(f"{tdir}/request", os.O_WRONLY)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError as exc:
        err = Path(f"{tdir}/error").read_text().strip()
        # "EINVAL request: REASON"
        err = err.split(" ", 1)[1] if " " in err else err
        if err.startswith("request: "):
            err = err[len("request: "):]
        return {"refused": exc.errno, "detail": err}
    with open(f"{tdir}/replies/{call['call_id']}", encoding="utf-8") as f:
        return json.loads(f.read())


def canon(v):
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def compare(expected, got):
    """None when equal, else (kind, text)."""
    if "error" in expected:
        if "refused" not in got:
            return ("answers_where_assert_fails", canon(got)[:300])
        if expected["error"] == "server_error":
            return ("known:error_where_assert_drops_the_connection", None)
        if expected["detail"] != got["detail"]:
            return ("error_detail", f"{expected['detail']!r} vs {got['detail']!r}")
        return None
    if "refused" in got:
        return ("refuses_where_assert_answers", got["detail"])
    want = expected["decision"]
    mine = {k: v for k, v in got.items() if k not in OWN_KEYS}
    if list(mine) != list(want):
        if set(mine) != set(want):
            return ("keys", f"{sorted(set(want) ^ set(mine))}")
        return ("key_order", f"{list(want)} vs {list(mine)}")
    for k in want:
        if canon(want[k]) != canon(mine[k]):
            return (k, f"{canon(want[k])[:200]} vs {canon(mine[k])[:200]}")
    return None


def main():
    logging.disable(logging.WARNING)  # ASSERT's placeholder warnings
    root, mount, ctl, work, seed, ncases, ncalls = sys.argv[1:8]
    host, mocks_mod, policy_mod, mediator_mod = assert_oracle.load_assert(root)
    cases = assert_gen.generate(int(seed), int(ncases), int(ncalls))
    counts = Counter()
    unlisted = 0
    compared = 0
    for case in cases:
        d = Path(tempfile.mkdtemp(dir=work))
        (d / "cassettes").mkdir()
        for name, val in case["cassettes"].items():
            (d / "cassettes" / f"{name}.json").write_text(json.dumps(val))
        files = {"policy": str(d / "policy.yaml"), "mocks": str(d / "mocks.yaml"),
                 "env": str(d / "env")}
        Path(files["policy"]).write_text(case["policy"])
        Path(files["mocks"]).write_text(case["mocks"])
        # ASSERT's side
        try:
            pol = policy_mod.MediationPolicy.from_yaml(files["policy"])
            lib = mocks_mod.MockLibrary.from_yaml(files["mocks"])
            med = mediator_mod.ActionMediator(pol, mocks=lib.fresh(),
                                              cassette_dir=lib.cassette_dir)
            ledger = host.HostMediationLedger(
                med, ledger_path=d / "assert-ledger.jsonl",
                expected_case_id=case["name"])
            assert_err = None
        except Exception as exc:  # noqa: BLE001
            assert_err = f"{type(exc).__name__}: {exc}"
        ok, err = ledgerfs_open(ctl, mount, case["name"], files)
        if assert_err and not ok:
            counts["both_refuse_the_documents"] += 1
            continue
        if assert_err:
            counts["unlisted:assert_refuses_ledgerfs_loads"] += 1
            unlisted += 1
            print(f"{case['name']}: ASSERT refuses ({assert_err}), ledgerfs loads")
            continue
        if not ok:
            kind = next((k for k, needle in KNOWN_LOAD if needle in err), None)
            if kind:
                counts["known:" + kind] += 1
            else:
                counts["unlisted:ledgerfs_refuses_the_documents"] += 1
                unlisted += 1
                print(f"{case['name']}: ledgerfs refuses: {err}")
            continue
        register(mount, case["name"], files["env"])
        for call in case["calls"]:
            pre = {"interception_point": "pre_tool_call",
                   "session": {"case_id": case["name"]},
                   "tool_call": {"id": call["call_id"], "name": call["tool"],
                                 "args": call["args"]}}
            try:
                decision = ledger.mediate(pre)
                expected = {"decision": json.loads(json.dumps(
                    host.decision_payload(decision)))}
            except (ValueError, TypeError) as exc:
                expected = {"error": "invalid_request", "detail": str(exc)}
            except Exception as exc:  # noqa: BLE001
                expected = {"error": "server_error",
                            "detail": f"{type(exc).__name__}: {exc}"}
            got = ledgerfs_call(mount, case["name"], call)
            compared += 1
            diff = compare(expected, got)
            if diff is None:
                what = (expected["decision"]["mode"] + "/" +
                        str(expected["decision"].get("mock_source"))
                        if "decision" in expected else "http_400_error")
                counts["equal:" + what] += 1
                continue
            kind, text = diff
            if kind.startswith("known:"):
                counts[kind] += 1
                continue
            counts["unlisted:" + kind] += 1
            unlisted += 1
            print(f"{case['name']} {call['call_id']} {call['tool']!r} "
                  f"{canon(call['args'])[:120]}: {kind}: {text}")
    print(f"# calls compared: {compared}")
    for k, v in sorted(counts.items()):
        print(f"# {k}: {v}")
    sys.exit(1 if unlisted else 0)


if __name__ == "__main__":
    main()
