#!/usr/bin/env python3
"""Summarises a `scripts/safety-checks.sh fuzz` run: per target, the inputs libFuzzer
executed and the rate, from each target's log (`-print_final_stats=1` lines, or the
final `Done N runs in S second(s)` line). Prints a table, writes it as JSON and lists
the targets below the goal of issue 11 (10M inputs per target per run) with the
FUZZ_SECONDS each would need at the measured rate.

    scripts/fuzz-report.py DIR FUZZ_SECONDS

DIR holds <target>.log and <target>.status (`ok` or `failed`) for each target; the
JSON goes to DIR/fuzz-report.json.
"""
import datetime
import json
import math
import os
import re
import sys

GOAL = 10_000_000


def parse(log):
    units = rate = secs = None
    for line in log.splitlines():
        m = re.match(r"stat::number_of_executed_units:\s*(\d+)", line)
        if m:
            units = int(m.group(1))
        m = re.match(r"stat::average_exec_per_sec:\s*(\d+)", line)
        if m:
            rate = int(m.group(1))
        m = re.match(r"Done (\d+) runs in (\d+) second", line)
        if m:
            units = units if units is not None else int(m.group(1))
            secs = int(m.group(2))
    if rate is None and units is not None and secs:
        rate = units // secs
    return units, rate, secs


def main():
    d, fuzz_seconds = sys.argv[1], int(sys.argv[2])
    rows = []
    for name in sorted(f[:-4] for f in os.listdir(d) if f.endswith(".log")):
        with open(os.path.join(d, name + ".log"), errors="replace") as f:
            units, rate, secs = parse(f.read())
        status_path = os.path.join(d, name + ".status")
        status = open(status_path).read().strip() if os.path.exists(status_path) else "?"
        need = math.ceil(GOAL / rate) if rate else None
        rows.append({
            "target": name,
            "status": status,
            "inputs": units,
            "seconds": secs,
            "inputs_per_sec": rate,
            "reaches_goal": units is not None and units >= GOAL,
            "seconds_for_goal": need,
        })

    def fmt(v):
        return "-" if v is None else f"{v:,}"

    head = ("target", "status", "inputs", "s", "inputs/s", "s for 10M")
    table = [head] + [(r["target"], r["status"], fmt(r["inputs"]), fmt(r["seconds"]),
                       fmt(r["inputs_per_sec"]), fmt(r["seconds_for_goal"])) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    print(f"fuzz summary, FUZZ_SECONDS={fuzz_seconds} per target (goal: {GOAL:,} inputs per target per run)")
    for i, row in enumerate(table):
        print("  " + "  ".join(c.ljust(w) if j < 2 else c.rjust(w)
                               for j, (c, w) in enumerate(zip(row, widths))))
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths))
    below = [r for r in rows if not r["reaches_goal"]]
    if below:
        print(f"below {GOAL:,} inputs in this run ({len(below)} of {len(rows)}):")
        for r in below:
            need = r["seconds_for_goal"]
            print(f"  {r['target']}: {fmt(r['inputs'])} inputs"
                  + (f"; needs FUZZ_SECONDS >= {need:,} at {fmt(r['inputs_per_sec'])}/s" if need else ""))
    else:
        print(f"every target reached {GOAL:,} inputs")
    out = os.path.join(d, "fuzz-report.json")
    with open(out, "w") as f:
        json.dump({
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "fuzz_seconds": fuzz_seconds,
            "goal_inputs": GOAL,
            "targets": rows,
        }, f, indent=2)
        f.write("\n")
    print(f"fuzz report written to {out}")


if __name__ == "__main__":
    main()
