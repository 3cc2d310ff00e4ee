#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""relay_assert_client.py - drive a ledgerfs case through ledgerfs-relay
with ASSERT's own target-side client (RemoteActionMediator and its
AgentHooksToolHost), unchanged, from the reference copy of ASSERT.

usage: relay_assert_client.py ASSERT_DIR BASE_URL TOKEN CASE_ID

Runs a pass, a mock and a block call, then a pass whose tool raises, and
prints one JSON object: each call's id and decision as ASSERT's client
returned it, and what the tools really ran.  Exit 0 when the calls ran,
1 with the error on stderr when ASSERT's client refused an answer.
"""
import json
import sys

assert_dir, base_url, token, case_id = sys.argv[1:5]
sys.path.insert(0, assert_dir)

from assert_ai.integrations.sandbox.remote_mediator import (  # noqa: E402
    RemoteActionMediator,
)
from assert_ai.integrations.sandbox.tool_host import (  # noqa: E402
    AgentHooksToolHost,
)

ran = []


def lookup_a(args):
    ran.append("lookup_a")
    return {"name": "Ada", "id": args.get("id")}


def send_a(args):
    ran.append("send_a")
    raise RuntimeError("CONTAINMENT FAILURE: real send_a executed")


def delete_a(args):
    ran.append("delete_a")
    raise RuntimeError("CONTAINMENT FAILURE: real delete_a executed")


def lookup_broken(args):
    ran.append("lookup_broken")
    raise ValueError("backend down")


def main():
    mediator = RemoteActionMediator(base_url, token, case_id=case_id)
    host = AgentHooksToolHost(
        tools={"lookup_a": lookup_a, "send_a": send_a, "delete_a": delete_a,
               "lookup_broken": lookup_broken},
        mediator=mediator,
        agent_id="relay-test-agent",
        session_id="relay-test-session",
        case_id=case_id,
        framework="ledgerfs-relay-test",
    )
    out = {"returned": {}, "raised": {}}
    for name, args in (("lookup_a", {"id": 42}), ("send_a", {"to": "ada"}),
                       ("delete_a", {"id": 42}), ("lookup_broken", {})):
        try:
            out["returned"][name] = host.call_tool(name, args)
        except Exception as exc:  # ASSERT's client re-raises a tool's error
            out["raised"][name] = f"{type(exc).__name__}: {exc}"
    out["records"] = [
        {"id": r.id, "tool": r.tool, "decision": r.decision.evidence(),
         "is_error": r.decision.is_error}
        for r in host.records
    ]
    out["ran"] = ran
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as exc:
        print(f"relay_assert_client: {exc}", file=sys.stderr)
        sys.exit(1)
