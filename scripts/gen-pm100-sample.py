#!/usr/bin/env python3
"""gen-pm100-sample.py - write data/pm100-sample.csv, a small SYNTHETIC job
table in the schema of PM100 (CINECA Marconi100, May-Oct 2020; Zenodo record
10127767, paper DOI 10.1145/3624062.3624263).

None of these rows is real. They are drawn from a fixed seed so the file is
reproducible byte for byte, with distributions shaped like PM100's:
  * user_id: 20 integer user ids with a skewed (Zipf-like) job count;
  * num_nodes_req: 1..16, mostly 1; num_nodes_alloc equals the request;
  * submit_time: 2020-05-01 .. 2020-09-30 UTC, rows sorted by it, so the
    train split [2020-05-01, 2020-09-01) and validation [2020-09-01,
    2020-10-01) both have rows; two users first appear in September, so
    validation holds categories the encoders never saw;
  * node_power_consumption: total power of the job's nodes in watts, either
    one mean value or a ';'-separated series of 20 s samples (quoted, as
    PM100's list column is when exported). Power per node depends on the
    user (their codes are GPU-heavy or not) and a little on the node count,
    plus noise, so JPCP has something to learn;
  * a few rows with an empty, zero or all-zero power series, which the
    loader must skip and count.

The real PM100 has 231,116 jobs and 32 columns; doc/pm100.md shows how to
convert its job_table.parquet into this CSV layout so `exa pipeline run
--dataset-path` can train on it.

Usage: scripts/gen-pm100-sample.py > data/pm100-sample.csv
Python 3 standard library only.
"""
import datetime as dt
import math
import random
import sys

SEED = 20200501
ROWS = 600

rng = random.Random(SEED)

START = dt.datetime(2020, 5, 1, tzinfo=dt.timezone.utc)
END = dt.datetime(2020, 10, 1, tzinfo=dt.timezone.utc)
SEPT = dt.datetime(2020, 9, 1, tzinfo=dt.timezone.utc)

# Users: id -> (mean watts per node, popularity weight).
users = {}
for i in range(20):
    uid = 1000 + rng.randrange(0, 9000)
    while uid in users:
        uid = 1000 + rng.randrange(0, 9000)
    base = rng.choice([rng.uniform(300, 600), rng.uniform(700, 1100),
                       rng.uniform(1200, 1700)])
    users[uid] = (base, 1.0 / (i + 1))
uids = list(users)
late_users = uids[-2:]          # only submit in September
early_users = uids[:-2]
for u in late_users:            # newcomers run mid-range codes
    users[u] = (rng.uniform(800, 1000), users[u][1])

NODE_CHOICES = [1, 2, 3, 4, 6, 8, 12, 16]
NODE_WEIGHTS = [60, 14, 3, 10, 2, 6, 1, 4]


def pick_user(when):
    pool = early_users + (late_users if when >= SEPT else [])
    weights = [users[u][1] * (2 if u in late_users else 1) for u in pool]
    return rng.choices(pool, weights)[0]


def power_per_node(uid, nodes):
    base = users[uid][0]
    # Bigger jobs spend more time in communication: a little less per node.
    factor = 1.0 - 0.04 * math.log2(nodes)
    return max(50.0, rng.gauss(base * factor, 35.0))


rows = []
span = (END - START).total_seconds()
for _ in range(ROWS):
    when = START + dt.timedelta(seconds=rng.uniform(0, span))
    when = when.replace(microsecond=0)
    uid = pick_user(when)
    nodes = rng.choices(NODE_CHOICES, NODE_WEIGHTS)[0]
    ppn = power_per_node(uid, nodes)
    total = ppn * nodes
    if rng.random() < 0.5:
        power = "%.1f" % total
    else:
        n = rng.randint(3, 12)
        power = ";".join("%.1f" % max(0.0, rng.gauss(total, total * 0.05))
                         for _ in range(n))
    rows.append([when, uid, nodes, nodes, power])

rows.sort(key=lambda r: r[0])
# Unusable targets (skipped and counted by the loader), spread over time.
for i, bad in zip(range(37, ROWS, 83), ["", "0", "0;0;0", "", "-5.0",
                                        "0.0", "", "0"]):
    rows[i][4] = bad

sys.stdout.write("job_id,user_id,num_nodes_req,num_nodes_alloc,"
                 "submit_time,node_power_consumption\n")
job = 1187000
for when, uid, req, alloc, power in rows:
    job += rng.randint(1, 40)
    # Series are quoted like a list column exported from pandas.
    field = '"%s"' % power if ";" in power else power
    sys.stdout.write("%d,%d,%d,%d,%s,%s\n" % (
        job, uid, req, alloc, when.strftime("%Y-%m-%dT%H:%M:%SZ"), field))
