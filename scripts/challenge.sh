#!/usr/bin/env bash
# Runs Peregrine's book through the public matching-engine challenge
# (flash1-dev/matching-engine-benchmark) beside other engines, with the harness's own
# protocol: builds the harness, libperegrine_capi.so (crates/peregrine-capi), the
# baselines and fast conforming engines the benchmark carries adapters for, runs the
# conformance gate for Peregrine, checks every scenario's report hash, then times all
# five scenarios for every engine in shuffled, alternated rounds and prints each
# engine's median M msgs/s per scenario, its worst case, and Peregrine's ratio to each.
#
#   scripts/challenge.sh BENCH_DIR [--mirrors DIR] [--rounds N] [--engines "a b c"]
#                        [--cpu] [--scenarios "s1 s2"] [--no-checks]
#
# BENCH_DIR   a checkout of the benchmark (its code never enters this repository; CI
#             has no network, so this script is run by hand, see docs/capi.md).
# --mirrors   a folder of bare git mirrors named owner+name/repo (as the `fetch` tool
#             leaves them); the upstream engines are cloned from there instead of
#             GitHub, then the benchmark's own build scripts reset them to their
#             pinned commits.
# --rounds    timed rounds per engine and scenario (default 5).
# --engines   which other engines to time (default: "quantcup llc993 cpp_orderbook";
#             liquibook too when it builds). An engine NAME whose NAME_adapter.so is
#             already in BENCH_DIR is used as it is (e.g. an older Peregrine build
#             copied there for an A/B).
# --cpu       also record each timed run with `perf record -e cpu-clock -F 4000` and
#             report the engine's own CPU time (samples in its .so): on a shared
#             machine the harness's wall-clock figure also counts time the matcher
#             thread was not running; this one does not.
# --scenarios which scenarios to time (default: all five).
# --no-checks skip the conformance gate and the state audits (A/B timing only).
#
# The matcher is pinned to core 0 and the report drainer to core 1. On a shared
# machine the spread across rounds is part of the result: report it.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="${1:?usage: scripts/challenge.sh BENCH_DIR [--mirrors DIR] [--rounds N] [--engines LIST]}"
shift
MIRRORS=""
ROUNDS=5
ENGINES="quantcup llc993 cpp_orderbook"
CPU=0
CHECKS=1
SCENARIOS="normal static swing-25 swing-40 flash-crash"
while [ $# -gt 0 ]; do
    case "$1" in
        --mirrors) MIRRORS="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --engines) ENGINES="$2"; shift 2 ;;
        --cpu) CPU=1; shift ;;
        --scenarios) SCENARIOS="$2"; shift 2 ;;
        --no-checks) CHECKS=0; shift ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
done
BENCH="$(cd "$BENCH" && pwd)"
[ -f "$BENCH/api/matching_engine_api.h" ] || { echo "$BENCH is not the benchmark" >&2; exit 2; }
LOG="$BENCH/peregrine-challenge.log"
: > "$LOG"
say() { printf '>>> %s\n' "$*"; }

# --- upstream sources from local mirrors (optional) ------------------------------
# third_party/<dir> as the benchmark's build scripts expect it, from owner+name.
# mirror DIR NAME... : the first NAME (owner+name) found under --mirrors.
mirror() {
    local dir="$1" name
    shift
    [ -n "$MIRRORS" ] || return 0
    [ -d "$BENCH/third_party/$dir/.git" ] && return 0
    for name in "$@"; do
        if [ -d "$MIRRORS/$name/repo" ]; then
            mkdir -p "$BENCH/third_party"
            git clone --quiet "$MIRRORS/$name/repo" "$BENCH/third_party/$dir"
            return 0
        fi
    done
}
# Liquibook's pinned commit is also in enewhuis/liquibook, its home before it moved.
mirror liquibook ObjectComputing+liquibook enewhuis+liquibook
mirror quantcup ajtulloch+quantcup-orderbook
mirror llc993_matching_core llc-993+matching-core
mirror cpp_orderbook geseq+cpp-orderbook
mirror cpp_decimal geseq+cpp-decimal
mirror cpp_pool geseq+cpp-pool
mirror hroptatyr_clob hroptatyr+clob

# --- builds -----------------------------------------------------------------------
say "harness"
make -C "$BENCH" >>"$LOG" 2>&1

say "peregrine (cargo build --release -p peregrine-capi, target-cpu=native as the benchmark asks of Rust engines)"
# A target folder of its own: native code must not mix with the workspace's builds.
CARGO_TARGET_DIR="$REPO_ROOT/target/challenge" RUSTFLAGS="-C target-cpu=native" \
    cargo build --release -p peregrine-capi --manifest-path "$REPO_ROOT/Cargo.toml" >>"$LOG" 2>&1
cp -f "$REPO_ROOT/target/challenge/release/libperegrine_capi.so" "$BENCH/peregrine_adapter.so"

build() {
    local e="$1"
    [ -f "$BENCH/${e}_adapter.so" ] && return 0
    case "$e" in
        liquibook|quantcup) (cd "$BENCH" && scripts/build_baselines.sh "$e") >>"$LOG" 2>&1 ;;
        *) (cd "$BENCH" && "additional_references/${e}_adapter/build.sh") >>"$LOG" 2>&1 ;;
    esac
}
BUILT=""
for e in liquibook quantcup $ENGINES hroptatyr_clob; do
    case " $BUILT " in *" $e "*) continue ;; esac
    say "building $e"
    if build "$e" && [ -f "$BENCH/${e}_adapter.so" ]; then
        BUILT="$BUILT $e"
    else
        echo "    $e did not build (see $LOG)"
    fi
done

# --- correctness --------------------------------------------------------------------
cd "$BENCH"
if [ "$CHECKS" = 1 ]; then
say "conformance gate (scripts/conformance_check.py)"
if ./scripts/conformance_check.py ./peregrine_adapter.so >"$BENCH/peregrine-conformance.txt" 2>&1; then
    echo "    conformance: PASS"
else
    echo "    conformance: did not pass (tail of $BENCH/peregrine-conformance.txt below)"
    tail -n 15 "$BENCH/peregrine-conformance.txt" | sed 's/^/    /'
fi
say "state audit per scenario (harness --mode audit)"
for s in $SCENARIOS; do
    out=$(./harness --engine ./peregrine_adapter.so --scenario "$s" --mode audit \
        --matcher-core 0 --drainer-core 1 2>&1 || true)
    line=$(grep -m1 -E 'State audit' <<<"$out" | sed 's/^ *//' || true)
    # The harness stops an audit at 120 s; static's deep book can take longer to
    # replay through the liquibook reference on a loaded machine.
    [ -n "$line" ] || line=$(grep -m1 -E '^ERROR' <<<"$out" || echo "no audit output")
    echo "    $s: $line | $(grep -m1 -E '^Verdict' <<<"$out" || true)"
done
fi

# --- timed rounds ------------------------------------------------------------------
RES="$BENCH/peregrine-challenge.tsv"
: > "$RES"
TIMED="peregrine"
for e in $ENGINES; do
    case " $BUILT " in *" $e "*) TIMED="$TIMED $e" ;; esac
done
say "timing: $ROUNDS rounds x 5 scenarios x {$TIMED}, engines shuffled each round"
for r in $(seq 1 "$ROUNDS"); do
    for s in $SCENARIOS; do
        for e in $(printf '%s\n' $TIMED | shuf); do
            run=(./harness --engine "./${e}_adapter.so" --scenario "$s" --mode perf
                --matcher-core 0 --drainer-core 1)
            ms=0
            if [ "$CPU" = 1 ]; then
                out=$(perf record -q -e cpu-clock -F 4000 -o "$BENCH/cpu.data" "${run[@]}" 2>&1 || true)
                n=$(perf report -i "$BENCH/cpu.data" --no-children -n --sort dso --stdio 2>/dev/null \
                    | awk -v so="${e}_adapter.so" '$3 == so {print $2}')
                ms=$(( ${n:-0} / 4 ))
            else
                out=$("${run[@]}" 2>&1 || true)
            fi
            mps=$(sed -n 's/^ *Throughput: *\([0-9.]*\) M msgs\/s.*/\1/p' <<<"$out")
            st=$(sed -n 's/^ *Status: *\([A-Z]*\).*/\1/p' <<<"$out" | head -1)
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$s" "$e" "${mps:-0}" "${st:-NONE}" "$ms" >>"$RES"
        done
    done
    echo "    round $r done"
done

rm -f "$BENCH/cpu.data"
python3 - "$RES" "$TIMED" "$SCENARIOS" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines()]
engines = sys.argv[2].split()
scen = sys.argv[3].split()
runs = {}
cpu = {}
status = {}
for r, s, e, mps, st, ms in rows:
    runs.setdefault((e, s), []).append(float(mps))
    cpu.setdefault((e, s), []).append(int(ms))
    status.setdefault(e, set()).add(st)
med = {k: statistics.median(v) for k, v in runs.items()}
print("\nmedian M msgs/s (min-max) over rounds; hash status per engine")
print("engine".ljust(16) + "".join(s.rjust(20) for s in scen) + "   worst case".rjust(22) + "  hash")
worst = {}
for e in engines:
    cells = []
    for s in scen:
        v = runs.get((e, s), [0.0])
        cells.append(f"{med.get((e, s), 0):.2f} ({min(v):.2f}-{max(v):.2f})".rjust(20))
    w = min(scen, key=lambda s: med.get((e, s), 0))
    worst[e] = (med.get((e, w), 0), w)
    print(e.ljust(16) + "".join(cells) + f"{worst[e][0]:.2f} ({w})".rjust(22) + "  " + ",".join(sorted(status[e])))
p = worst["peregrine"][0]
print("\nPeregrine's worst case relative to each engine's worst case:")
for e in engines[1:]:
    if worst[e][0] > 0:
        print(f"  peregrine / {e}: {p / worst[e][0]:.2f}x")
if any(v for vs in cpu.values() for v in vs):
    print("\nengine CPU ms in its own .so (perf cpu-clock samples / 4), median (min-max); engine init included")
    print("engine".ljust(16) + "".join(s.rjust(20) for s in scen))
    for e in engines:
        cells = []
        for s in scen:
            v = cpu.get((e, s), [0])
            cells.append(f"{statistics.median(v):.0f} ({min(v)}-{max(v)})".rjust(20))
        print(e.ljust(16) + "".join(cells))
    print("\nPeregrine's engine CPU relative to each engine's, per scenario (>1: Peregrine uses less):")
    for e in engines[1:]:
        r = [statistics.median(cpu[(e, s)]) / max(1, statistics.median(cpu[("peregrine", s)])) for s in scen]
        print(f"  {e}: " + "  ".join(f"{s} {x:.2f}x" for s, x in zip(scen, r)))
EOF
