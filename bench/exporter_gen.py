#!/usr/bin/env python3
"""exporter_gen.py - synthetic captured outputs for bench/exporter.sh.

Writes, in the exact formats of exa's exporter commands (see
src/libobserve/collect.c), `sinfo.txt` for NODES nodes and `squeue.txt` for
JOBS jobs. With --churn RATE SECONDS it then keeps rewriting squeue.txt
(temp file + rename, as a real queue changes between two squeue calls) so
that RATE job-state changes per second happen, and prints the number of
changes made. Deterministic (seeded).
"""
import os
import random
import sys
import time

PARTS = ["gpu", "gpu-long", "cpu"]
ACCOUNTS = ["physics", "bio", "chem", "climate", "ml", "astro"]


def node_name(i):
    return "n%05d" % i


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def sinfo(nodes):
    out = ["NODELIST|CPUS|MEMORY|GRES|GRES_USED|STATE|PARTITION"]
    for i in range(nodes):
        st = "mixed" if i % 10 else ("down*" if i % 100 == 0 else "idle")
        part = PARTS[i % 3]
        out.append("%s|64|512000|gpu:h100:8|gpu:h100:%d(IDX:0-3)|%s|%s%s" % (
            node_name(i), 4 if st == "mixed" else 0, st, part,
            "*" if part == "gpu" else ""))
    return "\n".join(out) + "\n"


def job_line(j):
    jid, state, user, acct, part, cpus, gpus, node = j
    tres = "cpu=%d,mem=%dM,node=1,billing=%d%s" % (
        cpus, cpus * 1000, cpus, (",gres/gpu=%d" % gpus) if gpus else "")
    return "%d|%s|%s|%s|%s|%d|%s|%s|%s" % (
        jid, part, user, acct, state, cpus, tres,
        node if state == "RUNNING" else "",
        "None" if state == "RUNNING" else "Priority")


def squeue(jobs):
    return ("JOBID|PARTITION|USER|ACCOUNT|STATE|CPUS|TRES_ALLOC|NODELIST|REASON\n"
            + "\n".join(job_line(j) for j in jobs) + "\n")


def main():
    out_dir, nodes, njobs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rnd = random.Random(42)
    write(os.path.join(out_dir, "sinfo.txt"), sinfo(nodes))
    jobs = []
    for k in range(njobs):
        running = k % 5 < 3
        jobs.append([1000000 + k, "RUNNING" if running else "PENDING",
                     "u%03d" % (k % 200), ACCOUNTS[k % 6], PARTS[k % 3],
                     rnd.choice([1, 4, 8, 16]), rnd.choice([0, 1, 2, 4]),
                     node_name(rnd.randrange(nodes))])
    path = os.path.join(out_dir, "squeue.txt")
    write(path, squeue(jobs))
    if len(sys.argv) > 4 and sys.argv[4] == "--churn":
        rate, seconds = float(sys.argv[5]), float(sys.argv[6])
        tick, changes, next_id = 0.2, 0, 1000000 + njobs
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:
            t0 = time.monotonic()
            due = int(rate * min(t0 + tick, end) - rate * start) - changes
            for _ in range(max(due, 0)):
                k = rnd.randrange(len(jobs))
                j = jobs[k]
                if j[1] == "PENDING":
                    j[1] = "RUNNING"          # start
                else:                         # end, and a new one is queued
                    jobs[k] = [next_id, "PENDING", j[2], j[3], j[4], j[5],
                               j[6], j[7]]
                    next_id += 1
                changes += 1
            write(path, squeue(jobs))
            left = tick - (time.monotonic() - t0)
            if left > 0:
                time.sleep(left)
        print(changes)


main()
