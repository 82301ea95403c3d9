#!/usr/bin/env python3
"""compare_flux.py - compare `exa debug parse KIND` output with a case's
.expect by the rules of shared/cases/FORMAT.md "How a harness should
compare": only `result` (or `error.kind`) counts; required keys must match
exactly; other keys are compared only when the parser emits them; floats
match within 1e-6 relative (0.5% for Flux Standard Duration values);
lists keep their order.

usage: compare_flux.py KIND EXPECT_FILE ACTUAL_FILE EXIT_STATUS
Prints one line per difference; exits 0 when the output conforms.
"""
import json
import math
import sys

REQUIRED = {
    "jobs": {"id", "state", "exit_code", "start", "end", "elapsed_s", "gpus"},
    "steps": {"id", "job_id", "step", "state"},
    "nodes": {"name", "cpus", "mem_mb", "gpus", "gpu_type", "state",
              "partitions"},
    "groups": {"state", "nnodes", "ncores", "ngpus", "nodelist"},
    "gpus": {"index", "uuid", "name", "mem_total_mb", "mem_used_mb",
             "util_pct", "power_w"},
    "events": {"name", "t", "t_offset", "t_label", "context"},
    "stats": {"instance", "running", "completed", "failed", "pending"},
}
FSD_KEYS = {"elapsed_s", "time_limit_s"}


def num_eq(a, b, key, kind):
    if a == b:
        return True
    tol = 5e-3 if (kind == "flux-jobs" and key in FSD_KEYS) else 1e-6
    return math.isclose(float(a), float(b), rel_tol=tol, abs_tol=1e-9)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compare(exp, act, path, kind, key, diffs, required=True):
    if isinstance(exp, dict):
        if not isinstance(act, dict):
            diffs.append(f"{path}: expected object, got {json.dumps(act)}")
            return
        # records in known lists have required keys; the rest are optional
        req = REQUIRED.get(key)
        for k, ev in exp.items():
            if k not in act:
                if req is None or k in req:
                    diffs.append(f"{path}.{k}: missing (expected "
                                 f"{json.dumps(ev, ensure_ascii=False)})")
                continue
            compare(ev, act[k], f"{path}.{k}", kind, k, diffs)
        return
    if isinstance(exp, list):
        if not isinstance(act, list):
            diffs.append(f"{path}: expected list, got {json.dumps(act)}")
            return
        if len(exp) != len(act):
            diffs.append(f"{path}: {len(act)} items, expected {len(exp)}")
        for i, (e, a) in enumerate(zip(exp, act)):
            compare(e, a, f"{path}[{i}]", kind, key, diffs)
        return
    if is_num(exp) and is_num(act):
        if not num_eq(exp, act, key, kind):
            diffs.append(f"{path}: {act} != expected {exp}")
        return
    if exp != act or type(exp) is not type(act):
        diffs.append(f"{path}: {json.dumps(act, ensure_ascii=False)} != "
                     f"expected {json.dumps(exp, ensure_ascii=False)}")


def main():
    kind, expect_file, actual_file, rc = sys.argv[1:5]
    rc = int(rc)
    with open(expect_file, encoding="utf-8") as f:
        expect = json.load(f)
    try:
        with open(actual_file, encoding="utf-8") as f:
            actual = json.load(f)
    except (ValueError, OSError) as e:
        print(f"output is not one JSON document: {e}")
        return 1
    diffs = []
    if "error" in expect:
        if rc == 0:
            diffs.append("exit status 0, expected a failure")
        got = actual.get("error", {}).get("kind") if isinstance(
            actual, dict) and isinstance(actual.get("error"), dict) else None
        if got != expect["error"].get("kind"):
            diffs.append(f"error.kind {got!r} != expected "
                         f"{expect['error'].get('kind')!r}")
    else:
        if rc != 0:
            diffs.append(f"exit status {rc}: {json.dumps(actual)[:300]}")
        else:
            compare(expect["result"], actual, "result", kind, None, diffs)
    for d in diffs:
        print(d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
