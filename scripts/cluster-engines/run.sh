#!/usr/bin/env bash
# Three nodes in one process for each Raft engine, same shapes, same run:
# in-memory log, in-process network (messages passed by value), a client timing
# each write until the leader has applied it (committed on a majority).
# Prints a human line and a JSON line per case. Usage: scripts/cluster-engines/run.sh [SCALE]
set -euo pipefail
cd "$(dirname "$0")"
export SCALE="${1:-1}"
target="${CARGO_TARGET_DIR:-/tmp/peregrine-cluster-engines-target}"
for e in raft-rs openraft; do
  (cd "$e" && CARGO_TARGET_DIR="$target/$e" cargo build --release -q)
done
echo "# $(date -u +%FT%TZ) $(nproc) cpus, load: $(cut -d' ' -f1-3 /proc/loadavg)"
for e in raft-rs openraft; do
  echo "## $e"
  "$target/$e/release/cluster-engine-$e"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
