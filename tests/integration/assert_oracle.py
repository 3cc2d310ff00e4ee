#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""assert_oracle.py - ASSERT's own host mediator as a reference for the
ledgerfs differential test: load POLICY and MOCKS (and a cassette folder)
with ASSERT's loaders, feed each call of a JSONL file to its
HostMediationLedger, print one JSON line per call: {"decision": payload},
{"error": "invalid_request", "detail": ...} where ASSERT answers HTTP 400,
or {"error": "server_error", "detail": ...} where it answers nothing.

usage: assert_oracle.py ASSERT_ROOT POLICY MOCKS|- CASSETTES|- CASE_ID < calls
A call line is {"call_id":..,"tool":..,"args":..}.  A document ASSERT
refuses prints {"load_error": ...} and nothing else.
"""
import importlib
import json
import sys
import tempfile
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
    host = importlib.import_module("assert_ai.integrations.sandbox.host_mediator")
    mocks = importlib.import_module("assert_ai.integrations.sandbox.mocks")
    policy = importlib.import_module("assert_ai.integrations.sandbox.policy")
    mediator = importlib.import_module("assert_ai.integrations.sandbox.mediator")
    return host, mocks, policy, mediator


def main():
    root, ppath, mpath, cdir, case_id = sys.argv[1:6]
    host, mocks_mod, policy_mod, mediator_mod = load_assert(root)
    cassettes = None if cdir == "-" else Path(cdir)
    try:
        policy = policy_mod.MediationPolicy.from_yaml(ppath)
        if mpath == "-":
            lib = mocks_mod.MockLibrary.empty()
        else:
            lib = mocks_mod.MockLibrary.from_yaml(mpath)
        # As start_host_mediator and the setup file: one cassette folder.
        if cassettes is not None:
            lib = mocks_mod.MockLibrary(lib.rules, cassette_dir=cassettes)
        else:
            cassettes = lib.cassette_dir
        med = mediator_mod.ActionMediator(policy, mocks=lib.fresh(),
                                          cassette_dir=cassettes)
    except Exception as exc:  # noqa: BLE001 - the refusal is the answer
        print(json.dumps({"load_error": f"{type(exc).__name__}: {exc}"}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        ledger = host.HostMediationLedger(med, ledger_path=Path(tmp) / "l.jsonl",
                                          expected_case_id=case_id)
        ledger.register(case_id)
        for line in sys.stdin:
            call = json.loads(line)
            pre = {
                "interception_point": "pre_tool_call",
                "session": {"case_id": case_id},
                "tool_call": {"id": call["call_id"], "name": call["tool"],
                              "args": call.get("args", {})},
            }
            try:
                decision = ledger.mediate(pre)
                out = {"decision": host.decision_payload(decision)}
                json.dumps(out)
            except (ValueError, TypeError) as exc:
                out = {"error": "invalid_request", "detail": str(exc)}
            except Exception as exc:  # noqa: BLE001 - ASSERT drops the connection
                out = {"error": "server_error", "detail": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
