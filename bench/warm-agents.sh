#!/usr/bin/env bash
# What warm agents buy the quick matrix (README's first command): ROUNDS times in turn, the built `BenchDaemon run`
# as it ships (agents handed from one scenario to the next) and with --fresh-agents (new agents for every scenario),
# each timed whole. Prints, per setting, the wall time per scenario, the warmup as run (the settling) and the share of
# agents that were warm, read back from results.json, with the core-to-core probe of each run (its placement).
#
# Usage: bench/warm-agents.sh [RUN OPTION...]     e.g. --transports uds,shm-ring --payloads 8
# Knobs: ROUNDS=3, OUT (default a temporary directory, removed). Needs: a Release build of src/BenchDaemon, python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds=${ROUNDS:-3}
daemon=src/BenchDaemon/bin/Release/net10.0/BenchDaemon
[[ -x $daemon ]] || { echo "build first: dotnet build src/BenchDaemon -c Release" >&2; exit 2; }
out=${OUT:-}
if [[ -z $out ]]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"

for ((r = 1; r <= rounds; r++)); do
  for setting in warm fresh; do
    dir="$out/$setting-$r"
    extra=()
    [[ $setting == fresh ]] && extra=(--fresh-agents)
    start=$(date +%s.%N)
    "$daemon" run --out "$dir" "${extra[@]}" "$@" "--IpcBench:DatabasePath=$dir/scenarios.db" >"$dir.log" 2>&1 \
      || { echo "round $r $setting failed; see $dir.log" >&2; tail -5 "$dir.log" >&2; exit 1; }
    end=$(date +%s.%N)
    python3 -c "print($end - $start)" >"$dir/wall"
    echo "round $r: $setting done in $(cut -c1-6 "$dir/wall") s" >&2
  done
done

python3 - "$out" "$rounds" <<'EOF'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def seconds(d):
    return float(d.rstrip('s')) if isinstance(d, str) else 0.0

rows = {}
for setting in ("warm", "fresh"):
    for r in range(1, rounds + 1):
        d = os.path.join(out, f"{setting}-{r}")
        scenarios = [s["scenario"] for s in json.load(open(os.path.join(d, "results.json")))["scenarios"]]
        wall = float(open(os.path.join(d, "wall")).read())
        warmups = [seconds(s["stats"].get("warmup_run", "0s")) for s in scenarios]
        agents = [p for s in scenarios for p in s["stats"].get("processes", []) if p.get("role") == "agent"]
        warm = sum(1 for p in agents if p.get("scenarios_before", 0) > 0)
        probes = [int(s["environment"]["core_to_core_round_trip"].rstrip("s").split(".")[1][:9].ljust(9, "0"))
                  for s in scenarios if s.get("environment", {}).get("core_to_core_round_trip")]
        rows.setdefault(setting, []).append((len(scenarios), wall, statistics.median(warmups), sum(warmups), warm, len(agents),
                                             statistics.median(probes) if probes else 0))

print("| setting | round | scenarios | wall, s | wall per scenario, s | warmup as run, median s | warmup sum, s | warm agents | probe median, ns |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for setting, runs in rows.items():
    for i, (n, wall, wmed, wsum, warm, agents, probe) in enumerate(runs, 1):
        print(f"| {setting} | {i} | {n} | {wall:.0f} | {wall / n:.2f} | {wmed:.2f} | {wsum:.0f} | {warm} of {agents} | {probe:.0f} |")
for setting, runs in rows.items():
    print(f"{setting}: wall per scenario, median of {len(runs)}: {statistics.median(w / n for n, w, *_ in runs):.2f} s")

# Do warm agents measure the same? Each cell's msg/s warm / fresh, round by round (the two runs of a round are minutes
# apart, so a placement move between them shows as a ratio far from 1 in every cell of that round). channels runs in
# the daemon, with no agents at all: its rows are the control, what the machine alone moved between the two runs.
cells = {}
for setting in ("warm", "fresh"):
    for r in range(1, rounds + 1):
        d = os.path.join(out, f"{setting}-{r}")
        for s in json.load(open(os.path.join(d, "results.json")))["scenarios"]:
            spec = s["scenario"]["spec"]
            key = (spec["transport"], int(spec.get("payload_bytes", 0)))
            cells.setdefault(key, {}).setdefault(setting, {})[r] = float(s["scenario"]["stats"].get("messages_per_second", 0))
print()
print("| cell | warm / fresh msg/s, by round | median |")
print("|---|---|---:|")
for (transport, payload), by in sorted(cells.items()):
    ratios = [by["warm"][r] / by["fresh"][r] for r in range(1, rounds + 1) if by.get("fresh", {}).get(r) and by.get("warm", {}).get(r)]
    if ratios:
        print(f"| {transport} {payload} B | {', '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.2f} |")
EOF
