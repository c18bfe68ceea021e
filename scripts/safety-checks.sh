#!/usr/bin/env bash
# The mechanical safety checks (issue 11, docs/testing.md), one command each:
#
#   scripts/safety-checks.sh loom      loom models of the SPSC, shm SPSC and shm MPSC rings
#   scripts/safety-checks.sh valgrind  memcheck over the queue, journal and testkit tests
#   scripts/safety-checks.sh checked   inner crates' tests with debug-assertions + overflow-checks
#   scripts/safety-checks.sh asan      the tests of every crate with unsafe code under
#                                      AddressSanitizer (stable toolchain, RUSTC_BOOTSTRAP)
#   scripts/safety-checks.sh fuzz      every fuzz target (or those in FUZZ_TARGETS) for
#                                      FUZZ_SECONDS (default 30) each, then a table of
#                                      inputs and inputs/s per target, written as JSON to
#                                      target/fuzz-report/fuzz-report.json
#   scripts/safety-checks.sh all       the five in that order (what .ci/run calls)
#
# Each prints its wall time as `safety-checks: <check> took N s`. Run from anywhere;
# exits non-zero on the first failing check (fuzz runs every target first, so the
# table covers them all, and then fails if any target did).
set -euo pipefail
cd "$(dirname "$0")/.."

# Crates whose unit and property tests run in the checked profile: the sans-IO inner
# crates, where a wrapped integer or a broken invariant is a wrong fill, not a crash.
CHECKED_CRATES=(peregrine-book peregrine-queue peregrine-journal peregrine-wire
  peregrine-types peregrine-ledger peregrine-exchange-core)
# Crates whose test binaries run under valgrind: every unsafe block of the workspace
# that touches memory by hand (rings, shared memory, the mmap'ed journal, the counting
# allocator) is exercised by these.
VALGRIND_CRATES=(peregrine-queue peregrine-journal peregrine-testkit)
# Crates with `unsafe` blocks whose tests run under AddressSanitizer (out-of-bounds,
# use-after-free, ... in the rings, the shared-memory mappings, the book's slab, the
# counting allocator, the C ABI). peregrine-py's unsafe is pyo3's module init, run by
# the Python suite instead.
ASAN_CRATES=(peregrine-queue peregrine-book peregrine-testkit peregrine-strategy
  peregrine-capi)

timed() {
  local name=$1
  shift
  local t0=$SECONDS
  "$@"
  echo "safety-checks: $name took $((SECONDS - t0)) s"
}

loom() {
  # Bounded preemption: 3 preemptions find the ordering bugs seen in practice (loom's
  # docs) and keep the whole run to seconds; the models use capacity 2 and 3 values so
  # every one wraps the ring and meets "full" and "empty". Own target dir: --cfg loom
  # changes every crate's build.
  RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}" \
    CARGO_TARGET_DIR=target/loom \
    cargo test -p peregrine-queue --lib --profile "${TEST_PROFILE:-release}" loom_models
}

# Paths of the test executables cargo built for the given crates (the test profile:
# TEST_PROFILE, which scripts/test-all.sh sets to `ci`; release when run alone).
test_binaries() {
  local args=()
  for c in "$@"; do args+=(-p "$c"); done
  cargo test --profile "${TEST_PROFILE:-release}" --no-run --message-format=json "${args[@]}" 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["executable"])
'
}

valgrind_check() {
  command -v valgrind >/dev/null || { echo "valgrind not installed" >&2; return 1; }
  local bins
  bins=$(test_binaries "${VALGRIND_CRATES[@]}")
  [ -n "$bins" ] || { echo "no test binaries found" >&2; return 1; }
  local b
  for b in $bins; do
    echo "== valgrind $(basename "$b")"
    # --fair-sched: the spinning ring tests make progress under valgrind's one-thread-
    # at-a-time scheduler. Fewer property cases: valgrind runs code ~30x slower, and
    # the point here is memory errors on every path, not case count.
    # Leaks are not errors here: tests leak on purpose (Box::leak'ed fixtures).
    # No backtraces: symbolising one under valgrind takes seconds (a test that checks a
    # panic message inside a 10 s timeout would time out).
    # Skipped: peregrine-queue's `clock::` test. rustix finds clock_gettime through the
    # vDSO, and its auxiliary-vector check reads past valgrind's synthetic vector (a
    # fault inside rustix under valgrind only; docs/testing.md).
    RUST_BACKTRACE=0 PROPTEST_CASES="${PROPTEST_CASES:-16}" \
      valgrind --quiet --error-exitcode=99 --fair-sched=yes --leak-check=no \
      --track-origins=no "$b" --test-threads=2 -q --skip clock::
  done
}

checked() {
  local args=()
  for c in "${CHECKED_CRATES[@]}"; do args+=(-p "$c"); done
  cargo test --profile checked "${args[@]}"
}

asan() {
  local args=()
  for c in "${ASAN_CRATES[@]}"; do args+=(-p "$c"); done
  # -Zsanitizer needs RUSTC_BOOTSTRAP on stable (shared/FACTS.md) and an explicit
  # --target, so build scripts and proc macros (host code) stay uninstrumented. Own
  # target dir: the flags change every crate's build. Leaks are not errors: tests
  # leak on purpose (Box::leak'ed fixtures). Fewer property cases: ~2-3x slower.
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR=target/asan \
    ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" PROPTEST_CASES="${PROPTEST_CASES:-64}" \
    cargo test --profile "${TEST_PROFILE:-release}" --target x86_64-unknown-linux-gnu \
    "${args[@]}" --lib --tests
}

fuzz() {
  local secs=${FUZZ_SECONDS:-30}
  command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
  # cargo-fuzz needs unstable flags (-Zsanitizer); the stable toolchain allows them
  # with RUSTC_BOOTSTRAP=1 (shared/FACTS.md). -O: release, with debug assertions.
  export RUSTC_BOOTSTRAP=1
  (cd fuzz && cargo fuzz build -O)
  # Each target's log and status stay here for the summary (scripts/fuzz-report.py:
  # inputs executed and inputs/s per target, a table, JSON, and the targets below
  # issue 11's 10M inputs per run).
  local report=${FUZZ_REPORT_DIR:-target/fuzz-report}
  rm -rf "$report"
  mkdir -p "$report"
  local t failed=()
  for t in ${FUZZ_TARGETS:-$(cd fuzz && cargo fuzz list)}; do
    # A scratch corpus seeded from the committed one: CI never writes into the repo.
    local corpus
    corpus=$(mktemp -d "${TMPDIR:-/tmp}/peregrine-fuzz-$t.XXXXXX")
    if [ -d "fuzz/seeds/$t" ]; then cp -r "fuzz/seeds/$t/." "$corpus/"; fi
    echo "== fuzz $t for $secs s"
    local log="$PWD/$report/$t.log"
    if (cd fuzz && cargo fuzz run -O "$t" "$corpus" -- \
      -max_total_time="$secs" -print_final_stats=1 >"$log" 2>&1); then
      echo ok >"$report/$t.status"
    else
      echo failed >"$report/$t.status"
      tail -50 "$log"
      echo "fuzz target $t failed; the crashing input is under fuzz/artifacts/$t" >&2
      failed+=("$t")
    fi
    grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' "$log" |
      sed "s/^/  $t: /" || true
    rm -rf "$corpus"
  done
  python3 scripts/fuzz-report.py "$report" "$secs"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    return 1
  fi
}

case "${1:-all}" in
  loom) timed loom loom ;;
  valgrind) timed valgrind valgrind_check ;;
  checked) timed checked checked ;;
  asan) timed asan asan ;;
  fuzz) timed fuzz fuzz ;;
  all)
    timed loom loom
    timed valgrind valgrind_check
    timed checked checked
    timed asan asan
    timed fuzz fuzz
    ;;
  *)
    echo "usage: $0 [loom|valgrind|checked|asan|fuzz|all]" >&2
    exit 2
    ;;
esac
