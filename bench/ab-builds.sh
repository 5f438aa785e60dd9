#!/usr/bin/env bash
# Two builds of BenchDaemon on the same `run` matrix, interleaved, for before/after comparisons of a change (e.g. the
# latency histograms): every round runs the matrix once with each build, alternating which goes first, so a slow spell
# of the machine lands on both. Prints per-build medians of msg/s, p50 and p99 and the ratios candidate/baseline, one
# table per placement (each scenario's core-to-core probe: "near" up to NEAR_NS, "far" above), since the host moves the
# vCPUs between the two within minutes and small-message figures move 2-4x with it. A placement that only one build
# met is listed as not compared.
#
# Usage: bench/ab-builds.sh BASELINE_CHECKOUT [CANDIDATE_CHECKOUT (default: this one)] [-- run arguments...]
#   e.g. git worktree add /tmp/ipcbench-main main && bench/ab-builds.sh /tmp/ipcbench-main
#        bench/ab-builds.sh /tmp/ipcbench-main . -- --transports iceoryx2,uds --payloads 8,1024 --wait spin
# Default run arguments: --transports shm-ring --payloads 8 --wait yield (a shm-ring 8 B 1:1 stream).
# Knobs: ROUNDS=5, DURATION=3 WARMUP=1 (seconds per scenario), NEAR_NS=300, MODE_GAP=1.5, SKIP_BUILD=1, THRESHOLD=5
# (compare's smallest change of interest, %), OUT=dir (default: a temporary directory). Every round is listed too,
# with each run's probe and mode (fast/slow where a cell's runs split at a gap of MODE_GAP x), and the medians say
# when the builds sat in different modes. A run whose probe after its window falls in the other placement than the one
# before it ("moved") is shown in its round and left out of the medians.
# Ends with the rank tests: each build's rounds pooled (`BenchDaemon compare a,b,... c,d,...`), a verdict per cell and
# placement class with p-values and shift intervals, and compared.html.
# Each build gets its own scenario database (an older build refuses a newer schema) and runtime directory.
# Needs: the .NET 10 SDK, python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[[ $# -ge 1 ]] || { sed -n '2,22p' "$0" >&2; exit 2; }
baseline=$(cd "$1" && pwd)
shift
candidate=$PWD
if [[ $# -ge 1 && $1 != -- ]]; then
  candidate=$(cd "$1" && pwd)
  shift
fi
[[ ${1:-} == -- ]] && shift
run_args=("$@")
[[ ${#run_args[@]} -gt 0 ]] || run_args=(--transports shm-ring --payloads 8 --wait yield)

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
NEAR_NS=${NEAR_NS:-300}
MODE_GAP=${MODE_GAP:-1.5}
. bench/lib.sh
results_dir "${OUT:-$(mktemp -d -t ipcbench-ab.XXXXXX)}"

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  for checkout in "$baseline" "$candidate"; do
    say "building $checkout (Release)"
    dotnet build "$checkout/src/BenchDaemon" -c Release -nologo -v q >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
  done
fi

run_build() { # label, checkout, round
  local label=$1 checkout=$2 round=$3 dir="$out/r$3/$1"
  say "round $round/$ROUNDS $label: run ${run_args[*]}"
  if ! dotnet "$checkout/src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll" run --duration "${DURATION}s" \
      --warmup "$(awk "BEGIN{print $WARMUP*1000}")ms" --out "$dir" "${run_args[@]}" \
      "--IpcBench:DatabasePath=$out/$label.db" "--IpcBench:RuntimeDirectory=$out/runtime-$label" >>"$log" 2>&1; then
    say "$label: some scenario failed (see $log)"
  fi
  [[ -f $dir/results.json ]] || return 0
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=bench python3 - "$dir/results.json" "$label" "$round" "$NEAR_NS" >>"$tsv" <<'PY'
import json, sys
from placement import ns, placement
for record in json.load(open(sys.argv[1]))["scenarios"]:
    s = record["scenario"]; spec = s["spec"]; st = s.get("stats", {}); lat = st.get("latency", {})
    cell = f'{spec["transport"]} {spec["payload_bytes"]} B {spec.get("payload_access", "").replace("PAYLOAD_ACCESS_", "").lower()} ' \
           f'{spec.get("wait_strategy", "").replace("WAIT_STRATEGY_", "").lower()} {spec.get("mode", "").replace("MODE_", "").lower()} ' \
           f'{spec["publishers"]}:{spec["subscribers"]}' + (f' @{spec["rate_per_publisher"]:g}/s' if spec.get("rate_per_publisher") else '')
    where, probe = placement(s.get("environment", {}), float(sys.argv[4]))
    print("\t".join(map(str, [sys.argv[2], sys.argv[3], cell, st.get("messages_per_second", 0), ns(lat.get("p50")), ns(lat.get("p99")),
                              s.get("state", "").replace("SCENARIO_STATE_", ""), where, probe])))
PY
}

for ((round = 1; round <= ROUNDS; round++)); do
  if ((round % 2)); then
    run_build baseline "$baseline" "$round"
    run_build candidate "$candidate" "$round"
  else
    run_build candidate "$candidate" "$round"
    run_build baseline "$baseline" "$round"
  fi
done

python3 - "$tsv" "$baseline" "$candidate" "$ROUNDS" "$NEAR_NS" "$MODE_GAP" <<'PY'
import statistics, sys
from collections import defaultdict
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
values = defaultdict(list)
probes = defaultdict(list)
failed = [r for r in rows if r[6] != "COMPLETED"]
for label, rnd, cell, mps, p50, p99, state, where, probe in rows:
    if state == "COMPLETED":
        values[(where, cell, label)].append((float(mps), float(p50), float(p99)))
        if probe and where != "moved":
            probes[(where, label)].append(float(probe))
def med(where, cell, label, i):
    v = [x[i] for x in values.get((where, cell, label), [])]
    return statistics.median(v) if v else None
def fmt(v, unit): return "–" if v is None else (f"{v / 1e6:.2f} M" if unit == "mps" else f"{v:.0f}")
def ratio(a, b): return "–" if a is None or b is None or a == 0 else f"{b / a:.3f}"
print(f"# Baseline {sys.argv[2]} vs candidate {sys.argv[3]}, medians of {sys.argv[4]} interleaved rounds, per placement")
moved = [r for r in rows if r[7] == "moved" and r[6] == "COMPLETED"]
if moved:
    print(f"\n{len(moved)} runs were moved by the host between placements while they ran (probe before → after, in the rounds "
          "below): they are left out of the medians and the comparisons.")
for where in ("near", "far", "unknown"):
    cells = sorted({c for w, c, _ in values if w == where})
    if not cells:
        if where != "unknown":
            print(f"\n## {where} (probe {'<=' if where == 'near' else '>'} {sys.argv[5]} ns): no scenario ran in it, so this placement was not compared")
        continue
    spans = "; ".join(f"{label} {len(p)} runs, probe {min(p):.0f}–{max(p):.0f} ns" for label in ("baseline", "candidate")
                      for p in [probes.get((where, label), [])] if p)
    print(f"\n## {where}: {spans or 'no probe'}\n")
    print("| Scenario | runs b/c | msg/s baseline | msg/s candidate | ratio | p50 ns baseline | p50 ns candidate | ratio | p99 ns baseline | p99 ns candidate | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for cell in cells:
        runs = "/".join(str(len(values.get((where, cell, label), []))) for label in ("baseline", "candidate"))
        cols = []
        for i, unit in ((0, "mps"), (1, "ns"), (2, "ns")):
            a, b = med(where, cell, "baseline", i), med(where, cell, "candidate", i)
            cols += [fmt(a, unit), fmt(b, unit), ratio(a, b)]
        note = "" if "/0" not in runs and not runs.startswith("0/") else " (one build only: not compared)"
        print(f"| {cell}{note} | {runs} | " + " | ".join(cols) + " |")

# Modes: within one cell and placement, runs whose msg/s split at a gap of MODE_GAP x or more (e.g. a fast and a slow
# mode of the same build) are labelled fast and slow; a median over a mix of modes says little, so the counts per
# build are printed and a comparison whose builds sat in different modes says so.
mode_gap = float(sys.argv[6])
by_round = defaultdict(dict)
for label, rnd, cell, mps, p50, p99, state, where, probe in rows:
    if state == "COMPLETED":
        by_round[(cell, int(rnd))][label] = (float(mps), where, probe)
modes = {}
for (where, cell) in {(w, c) for w, c, _ in values if w != "moved"}:
    runs = sorted(x[0] for label in ("baseline", "candidate") for x in values.get((where, cell, label), []) if x[0] > 0)
    gaps = [(runs[i + 1] / runs[i], runs[i + 1]) for i in range(len(runs) - 1)]
    widest = max(gaps, default=(1, 0))
    modes[(where, cell)] = widest[1] if widest[0] >= mode_gap else None
def mode(where, cell, mps):
    split = modes.get((where, cell))
    return "" if split is None else ("fast" if mps >= split else "slow")
print(f"\n## Every round: msg/s (probe, mode where a cell's runs split at a gap of {mode_gap:g}x or more)\n")
print("| Scenario | round | baseline | candidate | candidate/baseline |")
print("|---|---:|---:|---:|---:|")
for (cell, rnd) in sorted(by_round):
    pair = by_round[(cell, rnd)]
    def show(label):
        if label not in pair:
            return "–"
        mps, where, probe = pair[label]
        m = mode(where, cell, mps)
        return f"{mps / 1e6:.2f} M ({probe or '?'} ns {where}{', ' + m if m else ''})"
    r = "–"
    if len(pair) == 2:
        (b, bw, _), (c, cw, _) = pair["baseline"], pair["candidate"]
        r = (f"{c / b:.3f}" if b else "–") + ("" if bw == cw else " (placements differ)")
    print(f"| {cell} | {rnd} | {show('baseline')} | {show('candidate')} | {r} |")
for (where, cell), split in sorted(modes.items()):
    if split is None:
        continue
    counts = {label: sum(1 for x in values.get((where, cell, label), []) if x[0] >= split) for label in ("baseline", "candidate")}
    totals = {label: len(values.get((where, cell, label), [])) for label in ("baseline", "candidate")}
    print(f"\n{cell}, {where}: two modes split at {split / 1e6:.2f} M msg/s; fast runs: baseline {counts['baseline']} of {totals['baseline']}, "
          f"candidate {counts['candidate']} of {totals['candidate']}. The medians above mix them: compare the rounds.")
if failed:
    print("\nNot completed (left out of the medians):")
    for r in failed:
        print(f"- round {r[1]} {r[0]} {r[2]}: {r[6]}")
PY

# The verdict by the rank tests (CompareSuites' method, per placement class, corrected for the number of tests): each
# build's rounds pooled into one side. Rounds whose run wrote no report.json (an older build) are left out.
pooled() { local label=$1 files=() f; for f in "$out"/r*/"$label"/report.json; do [[ -f $f ]] && files+=("$f"); done; (IFS=,; echo "${files[*]}"); }
if [[ -n $(pooled baseline) && -n $(pooled candidate) ]]; then
  echo
  echo "# Rank tests: the candidate's rounds against the baseline's (BenchDaemon compare, threshold ${THRESHOLD:-5} %)"
  echo
  set +e
  dotnet "$candidate/src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll" compare "$(pooled baseline)" "$(pooled candidate)" \
    --threshold "${THRESHOLD:-5}" --html "$out/compared.html"
  echo "compare exit code: $? (0 same/improved, 3 regressed, 4 inconclusive)"
  set -e
else
  say "no report.json from one of the builds: no rank tests"
fi
say "raw results in $out (results.tsv, r*/, log.txt, compared.html)"
