#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""assert_gen.py - policy, mocks, cassettes and calls for the ASSERT
differential test, drawn from a seeded generator so every run is the
same.  Only documents ASSERT's own loaders take are made, in the shapes
its README and examples use; the calls mix fitting, failing and
wrong-typed arguments.

generate(seed, n_cases, calls_per_case) -> list of cases, each
{"policy": text, "mocks": text, "cassettes": {name: value}, "calls": [...]}.
"""
import json
import random

import yaml

TOOLS = ["lookup_customer", "lookup_bill", "send_message", "send_fax",
         "apply_bill_credit", "resume_line", "get_line_status", "web_search",
         "charge_card", "delete_account", "reset_password", "it's_odd",
         "ünïcode_tool", "tool with spaces"]
PATTERNS = TOOLS + ["lookup_*", "send_*", "*_line", "*_status", "*"]
MODES = ["pass", "mock", "block", "pass_through", "passthrough", "execute",
         "audit", "inline", "replay", "poison", "inject", "deny", " Mock ",
         "BLOCK"]
# Scalars YAML 1.1 and 1.2 read alike, plus some only 1.1 reads its way.
SCALARS = [0, 1, 2, -3, 100, 150, 99.5, 2.0, 1e20, 0.0001, True, False, None,
           "x", "B1234321", "555-123-2002", "it's", 'say "hi"', "",
           "account balance", "ünï", "yes", "no", "on", "off", "1e3", "12:30",
           "0x1F", "010", "1_000", "~", "null", "True", "2026-07-28"]


def scalar(r):
    return r.choice(SCALARS)


def value(r, depth=0):
    k = r.random()
    if depth < 2 and k < 0.15:
        return [value(r, depth + 1) for _ in range(r.randint(0, 3))]
    if depth < 2 and k < 0.3:
        return {r.choice(["a", "b", "status", "id", "n"]): value(r, depth + 1)
                for _ in range(r.randint(0, 3))}
    return scalar(r)


def matcher(r):
    op = r.choice(["plain", "eq", "ne", "not", "gt", "gte", "ge", "lt", "lte",
                   "le", "contains", "in", "any", "absent", "regex"])
    if op == "plain":
        return scalar(r)
    if op in ("gt", "gte", "ge", "lt", "lte", "le"):
        return {op: r.choice([0, 1, 100, 2.5, -1])}
    if op == "in":
        return {op: [scalar(r) for _ in range(r.randint(0, 3))]}
    if op == "absent":
        return {op: r.choice([True, False])}
    if op == "any":
        return {op: r.choice([True, None])}
    if op == "regex":
        return {op: r.choice(["^B1", "5$", "acc", "x+", "^$", "[0-9]{3}"])}
    return {op: scalar(r)}


def override(r):
    path = r.choice(["status", "bills.0.charges.0.description", "new.key",
                     "customer.full_name", "a", "bills.0.total_due"])
    return {"path": path, "value": value(r)}


RECORDING = {"status": "ok", "customer": {"full_name": "John Smith"},
             "bills": [{"total_due": 86.42,
                        "charges": [{"description": "Monthly 5G plan"}]}]}


def policy(r, cassette_names):
    rules = []
    for _ in range(r.randint(1, 7)):
        rule = {"match": r.choice(PATTERNS)}
        if r.random() < 0.9:
            rule["mode"] = r.choice(MODES)
        if r.random() < 0.7:
            rule["note"] = r.choice(["n", "it's a note", 5, None, "ünï"])
        if r.random() < 0.2:
            rule["name"] = "named"
        pay = r.random()
        if pay < 0.4:
            rule[r.choice(["mock", "poison", "inject"])] = value(r)
        if r.random() < 0.2:
            rule["cassette"] = dict(RECORDING)
        if r.random() < 0.25:
            rule["overrides"] = [override(r) for _ in range(r.randint(0, 2))]
        if r.random() < 0.3:
            rule["mock_source"] = r.choice(["inline", "replay", "override",
                                            "poison", "Replay"])
        if r.random() < 0.1:
            rule["flag"] = True
        rules.append(rule)
    doc = {"interactions": rules}
    d = r.random()
    if d < 0.3:
        doc["default"] = {"mode": r.choice(["block", "mock", "pass"]),
                          "note": "deny unknown"}
    elif d < 0.4:
        doc["default"] = {}
    elif d < 0.5:
        doc["default"] = {"mode": "mock"}
    return doc


def mock_rule(r, cassette_names):
    rule = {"tool": r.choice(PATTERNS)}
    if r.random() < 0.5:
        rule["when"] = {r.choice(["amount", "bill_id", "recipient", "body",
                                  "n"]): matcher(r)
                        for _ in range(r.randint(1, 2))}
    if r.random() < 0.15:
        rule["case_id"] = r.choice(["C*", "other", "*7", "C1"])
    if r.random() < 0.4:
        rule["note"] = r.choice(["mock note", "it's"])
    kind = r.random()
    if kind < 0.45:
        if r.random() < 0.3:
            rule["error"] = value(r)
        else:
            rule["response"] = value(r)
    elif kind < 0.75:
        rule["scenario"] = r.choice(["s1", "s2"])
        if r.random() < 0.4:
            rule["when_state"] = r.choice(["start", "done", "mid"])
        if r.random() < 0.5:
            rule["responses"] = []
            for _ in range(r.randint(1, 3)):
                step = {r.choice(["response", "error"]):
                        r.choice(SCALARS[:12]) or "v"}
                if r.random() < 0.5:
                    step["sets_state"] = r.choice(["done", "mid", 1, True])
                rule["responses"].append(step)
        else:
            rule["response"] = value(r)
            if r.random() < 0.5:
                rule["sets_state"] = r.choice(["done", "mid"])
    else:
        rule["backend"] = "replay"
        c = r.random()
        if c < 0.3:
            rule["cassette"] = dict(RECORDING)
        elif c < 0.7:
            rule["cassette_file"] = r.choice(cassette_names)
        else:
            # named after the tool: only where the recording exists
            rule["tool"] = r.choice(cassette_names)
        if r.random() < 0.5:
            rule["overrides"] = [override(r) for _ in range(r.randint(0, 2))]
    return rule


def call_args(r):
    args = {}
    for key in ["amount", "bill_id", "recipient", "body", "n"]:
        if r.random() < 0.5:
            args[key] = r.choice([value(r), scalar(r), r.choice([5, 150, 100])])
    return args


# Unquote what PyYAML quoted, so both sides read YAML 1.1 plain scalars.
PLAIN = ["'yes'", "'no'", "'on'", "'off'", "'1e3'", "'12:30'", "'0x1F'",
         "'010'", "'1_000'", "'True'", "'2026-07-28'"]


def unquote(r, text):
    for q in PLAIN:
        if r.random() < 0.5:
            text = text.replace(q, q[1:-1])
    return text


def generate(seed, n_cases, calls_per_case):
    r = random.Random(seed)
    cases = []
    for i in range(n_cases):
        cassette_names = ["lookup_customer", "send_message", "rec"]
        cassettes = {n: dict(RECORDING, status=n) for n in cassette_names}
        mocks = {"version": 1, "cassette_dir": "./cassettes",
                 "mocks": [mock_rule(r, cassette_names)
                           for _ in range(r.randint(0, 8))]}
        calls = []
        for j in range(calls_per_case):
            calls.append({"call_id": f"c{j}", "tool": r.choice(TOOLS),
                          "args": call_args(r)})
        cases.append({
            "name": f"D{i}",
            "policy": unquote(r, yaml.safe_dump(policy(r, cassette_names),
                                                allow_unicode=True,
                                                sort_keys=False)),
            "mocks": unquote(r, yaml.safe_dump(mocks, allow_unicode=True,
                                               sort_keys=False)),
            "cassettes": cassettes,
            "calls": calls,
        })
    return cases


if __name__ == "__main__":
    print(json.dumps(generate(1, 1, 3), indent=1))
