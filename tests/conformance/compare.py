#!/usr/bin/env python3
"""compare.py KIND EXPECT_PATH ACTUAL_PATH - compare `exa debug parse KIND`
output with a case's NAME.expect by shared/cases/FORMAT.md "How a harness
should compare":

* only `result` (or `error.kind`) is compared;
* required keys per tool must match exactly; any other key in an expected
  record is compared only when the actual record has it;
* lists keep their order and length;
* floats: 1e-6 relative, 0.5% for durations parsed from Flux Standard
  Duration (flux kinds: keys ending in `_s`, `runtime`, `t_offset`).

Exit 0 on match, 1 on mismatch (a diff-like report on stdout), 2 on usage.
Python 3 standard library only, so the flux conformance test can use it.
"""
import json
import sys

# Required keys of the records of each list (or object) a result holds,
# per tool (FORMAT.md "Result schemas"). "*" means every key the expected
# record has (nvidia-smi reports exactly the queried fields). Any other
# key is optional: compared only when the parser emitted it.
JOB_KEYS = ["id", "state", "exit_code", "start", "end", "elapsed_s", "gpus"]
NODE_KEYS = ["name", "cpus", "mem_mb", "gpus", "gpu_type", "state",
             "partitions"]
REQUIRED = {
    ("sinfo", "nodes"): NODE_KEYS,
    ("sinfo", "groups"): ["nodes"],
    ("flux-resource", "nodes"): NODE_KEYS,
    ("flux-resource", "groups"): ["state", "nnodes", "ncores", "ngpus",
                                  "nodelist"],
    ("squeue", "jobs"): JOB_KEYS,
    ("sacct", "jobs"): JOB_KEYS,
    ("sacct", "steps"): JOB_KEYS + ["job_id", "step"],
    ("flux-jobs", "jobs"): JOB_KEYS,
    ("nvidia-smi", "gpus"): "*",
    ("flux-eventlog", "events"): ["name", "t"],
    ("flux-eventlog", "summary"): "*",
}
TOP_REQUIRED = {
    "sbatch": ["job_id", "cluster"],
    "hostlist": ["hosts"],
    "sinfo": "*",  # nodes or groups, whichever the case expects
    "squeue": ["jobs"],
    "sacct": ["jobs", "steps"],
    "nvidia-smi": ["gpus"],
    "flux-jobs": ["jobs"],
    "flux-resource": "*",
    "flux-eventlog": ["events", "summary"],
}
FSD_KEYS = ("elapsed_s", "runtime", "t_offset", "duration_s", "time_limit_s")


def num_eq(a, b, key, kind):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if a == b:
        return True
    tol = 1e-6
    if kind.startswith("flux") and key in FSD_KEYS:
        tol = 0.005
    return abs(a - b) <= tol * max(abs(a), abs(b))


def cmp(exp, act, path, key, kind, errs, required=()):
    if isinstance(exp, (int, float)) and not isinstance(exp, bool) and \
            isinstance(act, (int, float)) and not isinstance(act, bool):
        if not num_eq(exp, act, key, kind):
            errs.append("%s: expected %r, got %r" % (path, exp, act))
        return
    if isinstance(exp, dict):
        if not isinstance(act, dict):
            errs.append("%s: expected an object, got %r" % (path, act))
            return
        for k, v in exp.items():
            if k not in act:
                if required == "*" or k in required:
                    errs.append("%s.%s: missing (expected %r)" % (path, k, v))
                continue
            sub = REQUIRED.get((kind, k), ()) if path == "result" else ()
            cmp(v, act[k], "%s.%s" % (path, k), k, kind, errs, sub)
        return
    if isinstance(exp, list):
        if not isinstance(act, list):
            errs.append("%s: expected a list, got %r" % (path, act))
            return
        if len(exp) != len(act):
            errs.append("%s: expected %d items, got %d" %
                        (path, len(exp), len(act)))
        for i, (e, a) in enumerate(zip(exp, act)):
            cmp(e, a, "%s[%d]" % (path, i), key, kind, errs, required)
            if len(errs) > 20:
                return
        return
    if exp != act or isinstance(exp, bool) != isinstance(act, bool):
        errs.append("%s: expected %r, got %r" % (path, exp, act))


def compare(kind, expect, actual):
    errs = []
    if "error" in expect:
        if not isinstance(actual, dict) or "error" not in actual:
            return ["expected error kind %r, got a result" %
                    expect["error"].get("kind")]
        if actual["error"].get("kind") != expect["error"].get("kind"):
            return ["expected error kind %r, got %r" %
                    (expect["error"].get("kind"), actual["error"].get("kind"))]
        return []
    if isinstance(actual, dict) and "error" in actual and \
            "error" not in expect.get("result", {}):
        return ["expected a result, got error %r" % (actual["error"],)]
    cmp(expect["result"], actual, "result", "", kind, errs,
        TOP_REQUIRED.get(kind, ()))
    return errs


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: compare.py KIND EXPECT_PATH ACTUAL_PATH\n")
        return 2
    kind = argv[1]
    with open(argv[2], encoding="utf-8") as f:
        expect = json.load(f)
    try:
        with open(argv[3], encoding="utf-8", errors="surrogateescape") as f:
            actual = json.load(f)
    except ValueError as e:
        print("actual output is not JSON: %s" % e)
        return 1
    errs = compare(kind, expect, actual)
    for e in errs[:20]:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
