#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cassette_assert_load.py - ASSERT's own loaders read what `ledgerctl
cassette` wrote, and ASSERT's own mediator, given those files, answers
every recorded call with the recorded reply (returned, is_error) in call
order.

usage: cassette_assert_load.py ASSERT_ROOT OUTDIR CASE_ID
Prints one line per check; exits 0 when all hold, 1 otherwise.
"""
import importlib
import json
import sys
import types
from pathlib import Path


def load_assert(root):
    """Import the sandbox modules without running the package __init__s."""
    base = Path(root) / "assert_ai"
    for name, sub in (("assert_ai", ""), ("assert_ai.integrations", "integrations"),
                      ("assert_ai.integrations.sandbox", "integrations/sandbox"),
                      ("assert_ai.core", "core")):
        mod = types.ModuleType(name)
        mod.__path__ = [str(base / sub)]
        sys.modules[name] = mod
    get = importlib.import_module
    return (get("assert_ai.integrations.sandbox.mocks"),
            get("assert_ai.integrations.sandbox.policy"),
            get("assert_ai.integrations.sandbox.mediator"),
            get("assert_ai.integrations.sandbox.cassettes"),
            get("assert_ai.integrations.sandbox.mediation_setup"))


def main():
    root, outdir, case_id = sys.argv[1:4]
    out = Path(outdir)
    mocks_mod, policy_mod, mediator_mod, cassettes_mod, setup_mod = load_assert(root)
    bad = 0
    lib = mocks_mod.MockLibrary.from_yaml(out / "mocks.yaml")
    print(f"mocks.yaml: {len(lib.rules)} rules, cassette_dir {lib.cassette_dir}")
    policy = policy_mod.MediationPolicy.from_json(out / "policy.json")
    print(f"policy.json: {len(policy.data.get('interactions') or [])} rules")
    names = [n for n, _ in cassettes_mod.iter_cassette_bytes(lib.cassette_dir)]
    for name in names:
        cassettes_mod.read_cassette_json(lib.cassette_dir, name[:-5])
    print(f"cassettes: {len(names)} recordings read")
    # What ASSERT's setup checks before a replay rule meets its first call.
    setup_mod._validate_replay_cassettes(lib, lib.cassette_dir)
    med = mediator_mod.ActionMediator(policy, mocks=lib.fresh(),
                                      cassette_dir=lib.cassette_dir)
    calls = [json.loads(line) for line in (out / "calls.jsonl").read_text().split("\n") if line]
    for call in calls:
        d = med.plan({"interception_point": "pre_tool_call", "case_id": case_id,
                      "tool_call": {"name": call["tool"], "args": call["args"]}})
        got = (d.returned, bool(d.is_error))
        want = (call["returned"], bool(call["is_error"]))
        if got != want:
            bad += 1
            print(f"call {call['sequence']}: ASSERT replies {got!r}, recorded {want!r}")
    print(f"{len(calls)} calls replayed by ASSERT, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
