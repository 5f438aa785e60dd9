#!/usr/bin/env bash
# Does a short run measure the same as a long one? For each build given, alternates a SHORT-second and a LONG-second run
# of one cell (each build's short and long back to back, builds in turn, the order flipping every round), then prints
# per build the median msg/s of each length and the median of the per-round short/long ratios, per placement (each
# run's core-to-core probe before and after it, in the placement classes the daemon learned from its probe history, or
# without them "near" up to NEAR_NS and "far" above; "moved" when they differ). A short
# run that charges warm-up work (JIT tier-up, connection set-up) to its window reads low against a long one.
#
# Usage: bench/short-vs-long.sh CHECKOUT [CHECKOUT...] [-- run arguments...]
#   e.g. bench/short-vs-long.sh /tmp/main . -- --transports grpc-uds --payloads 8
# Knobs: ROUNDS=5, SHORT=2, LONG=30, WARMUP=0.5 (seconds), NEAR_NS=200, OUT=dir, SKIP_BUILD=1.
# Needs: the .NET 10 SDK, python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
checkouts=()
while [[ $# -gt 0 && $1 != -- ]]; do checkouts+=("$(cd "$1" && pwd)"); shift; done
[[ ${1:-} == -- ]] && shift
run_args=("$@")
[[ ${#checkouts[@]} -ge 1 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
[[ ${#run_args[@]} -gt 0 ]] || run_args=(--transports grpc-uds --payloads 8)
ROUNDS=${ROUNDS:-5}
SHORT=${SHORT:-2}
LONG=${LONG:-30}
WARMUP=${WARMUP:-0.5}
NEAR_NS=${NEAR_NS:-200}
. bench/lib.sh
results_dir "${OUT:-$(mktemp -d -t ipcbench-short-long.XXXXXX)}"

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  for checkout in "${checkouts[@]}"; do
    say "building $checkout (Release)"
    dotnet build "$checkout/src/BenchDaemon" -c Release -nologo -v q >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
  done
fi

run_one() { # build index, length label, seconds, round
  local b=$1 label=$2 seconds=$3 round=$4 checkout=${checkouts[$1]} dir="$out/r$4/b$1-$2"
  say "round $round/$ROUNDS build $b ($checkout) $label ${seconds}s: run ${run_args[*]}"
  dotnet "$checkout/src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll" run --duration "${seconds}s" \
    --warmup "$(awk "BEGIN{print $WARMUP*1000}")ms" --out "$dir" "${run_args[@]}" \
    "--IpcBench:DatabasePath=$out/b$b.db" "--IpcBench:RuntimeDirectory=$out/runtime-b$b" >>"$log" 2>&1 || say "build $b: the run failed (see $log)"
  [[ -f $dir/results.json ]] || return 0
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=bench python3 - "$dir/results.json" "$b" "$label" "$round" "$NEAR_NS" >>"$tsv" <<'PY'
import json, sys
for record in json.load(open(sys.argv[1]))["scenarios"]:
    s = record["scenario"]; st = s.get("stats", {}); env = s.get("environment", {})
    print("\t".join(map(str, [sys.argv[2], sys.argv[3], sys.argv[4], s["spec"]["transport"], s["spec"]["payload_bytes"],
                              st.get("messages_per_second", 0), json.dumps(env), st.get("warmup_run", "")])))
PY
}

for ((round = 1; round <= ROUNDS; round++)); do
  order=("${!checkouts[@]}")
  ((round % 2)) || order=($(printf '%s\n' "${order[@]}" | tac))
  for b in "${order[@]}"; do
    if ((round % 2)); then run_one "$b" short "$SHORT" "$round"; run_one "$b" long "$LONG" "$round"
    else run_one "$b" long "$LONG" "$round"; run_one "$b" short "$SHORT" "$round"; fi
  done
done

PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=bench python3 - "$tsv" "$SHORT" "$LONG" "$NEAR_NS" "${checkouts[@]}" <<'PY'
import json, statistics, sys
from collections import defaultdict
from placement import most_learned, placement
raw = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
short, long_, near_ns, builds = sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:]
# Every run placed by the classes learned from the most probes by any run (each run's own are learned from fewer).
classes = most_learned([json.loads(r[6]).get("placement_classes", "") for r in raw])
print(f"Placed by: {classes or f'no learned classes; near up to {near_ns:.0f} ns'}\n")
rows = [r[:6] + list(placement(json.loads(r[6]), near_ns, classes or None)) + r[7:] for r in raw]
runs = defaultdict(dict)
for b, label, rnd, transport, payload, mps, where, probe, warmup in rows:
    runs[(b, transport, payload, rnd)][label] = (float(mps), where, probe, warmup)
print(f"# {short} s against {long_} s runs, per build and placement (median of per-round short/long msg/s; both runs of a round in one placement)\n")
print("| build | cell | placement | rounds | short msg/s | long msg/s | short/long | per round |")
print("|---|---|---|---:|---:|---:|---:|---|")
table = defaultdict(list)
for (b, transport, payload, rnd), pair in sorted(runs.items()):
    if len(pair) == 2 and pair["short"][1] == pair["long"][1] and pair["long"][0] > 0:
        table[(b, transport, payload, pair["short"][1])].append((pair["short"][0], pair["long"][0]))
for (b, transport, payload, where), pairs in sorted(table.items()):
    ratios = [s / l for s, l in pairs]
    print(f"| {builds[int(b)]} | {transport} {payload} B | {where} | {len(pairs)} | {statistics.median(s for s, _ in pairs) / 1e3:.1f} K | "
          f"{statistics.median(l for _, l in pairs) / 1e3:.1f} K | {statistics.median(ratios):.3f} | {' '.join(f'{r:.2f}' for r in ratios)} |")
print("\n## Every run\n")
print("| build | round | cell | length | msg/s | placement (probe ns) | warmup as run |")
print("|---|---:|---|---|---:|---|---|")
for b, label, rnd, transport, payload, mps, where, probe, warmup in rows:
    print(f"| {b} | {rnd} | {transport} {payload} B | {label} | {float(mps) / 1e3:.1f} K | {where} ({probe}) | {warmup or '–'} |")
PY
say "raw results in $out"
