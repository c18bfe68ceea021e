#!/usr/bin/env python3
"""Samples /proc/<pid>/task/*/schedstat every 5 ms for SECS seconds and prints, per
thread, the longest interval in which it did not run at all ("no run"), the longest in
which it neither ran nor waited on a run queue ("blocked": off-CPU, asleep or in a
blocking call), and its total run-queue wait. A polling thread that parks for 50 us
runs many times per sample, so a gap of hundreds of ms is a stall.

Usage: schedstat_gaps.py SECS PID [PID...]
"""
import os
import sys
import time

secs = float(sys.argv[1])
pids = [int(p) for p in sys.argv[2:]]
period = 0.005
state = {}  # (pid, tid) -> dict


def read(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            run, wait, _ = (int(x) for x in f.read().split())
        with open(f"/proc/{pid}/task/{tid}/comm") as f:
            comm = f.read().strip()
        return run, wait, comm
    except (OSError, ValueError):
        return None


end = time.monotonic() + secs
start = time.monotonic()
while time.monotonic() < end:
    now = time.monotonic()
    tids = []
    for pid in pids:
        try:
            tids += [(pid, tid) for tid in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            pass
    if not tids:
        break
    for key in tids:
        r = read(*key)
        if r is None:
            continue
        run, wait, comm = r
        s = state.get(key)
        if s is None:
            state[key] = dict(comm=comm, run=run, wait=wait, wait0=wait, ran_at=now,
                              active_at=now, no_run=0.0, no_run_at=0.0, blocked=0.0,
                              blocked_at=0.0)
            continue
        if run != s["run"]:
            gap = now - s["ran_at"]
            if gap > s["no_run"]:
                s["no_run"], s["no_run_at"] = gap, s["ran_at"] - start
            s["ran_at"] = now
        if run != s["run"] or wait != s["wait"]:
            gap = now - s["active_at"]
            if gap > s["blocked"]:
                s["blocked"], s["blocked_at"] = gap, s["active_at"] - start
            s["active_at"] = now
        s["run"], s["wait"], s["comm"] = run, wait, comm
    time.sleep(period)

now = time.monotonic()
for (pid, tid), s in sorted(state.items(), key=lambda kv: (kv[0][0], kv[1]["comm"])):
    # A thread idle until the end (e.g. parked for good) counts up to now.
    for key, at in (("no_run", "ran_at"), ("blocked", "active_at")):
        gap = now - s[at]
        if gap > s[key]:
            s[key], s[key + "_at" if key == "no_run" else "blocked_at"] = gap, s[at] - start
    print(f"pid {pid:>7} {s['comm']:<16} tid {tid:>7}  longest no-run {s['no_run']*1e3:8.1f} ms "
          f"(at {s['no_run_at']:5.2f} s)  longest blocked {s['blocked']*1e3:8.1f} ms "
          f"(at {s['blocked_at']:5.2f} s)  run-queue wait {(s['wait']-s['wait0'])/1e6:8.1f} ms")
