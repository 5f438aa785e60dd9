#!/usr/bin/env bash
# Transports side by side: the same `run` matrix repeated ROUNDS times with one build (each round runs every transport
# of every cell once, so a slow spell of the machine lands on all of them), then per-cell medians with the spread, and
# ratios transport A / transport B taken within each round before their median: the figures to quote.
#
# Usage: bench/transport-ratios.sh [-- run arguments...]
#   e.g. bench/transport-ratios.sh -- --transports grpc-uds,zeromq,uds,shm-ring,iceoryx2 --payloads 8,1024 --access full,header-only
#        RATIOS="grpc-uds/uds" bench/transport-ratios.sh -- --transports grpc-uds,uds --payloads 8 --mode round-trip
# Default run arguments: --transports grpc-uds,zeromq,uds,shm-ring,iceoryx2 --payloads 8,1024,65536,524288
# Knobs: ROUNDS=3, DURATION=2 WARMUP=0.5 (seconds per scenario), RATIOS="grpc-uds/uds zeromq/uds shm-ring/grpc-uds",
#        SKIP_BUILD=1, OUT=dir (default: a temporary directory).
# Every figure says which wait strategy it used (each transport's default unless --wait is given) and the
# core-to-core probe the daemon measured before each scenario, whose placement can move a figure severalfold here.
# Needs: the .NET 10 SDK, python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[[ ${1:-} == -- ]] && shift
run_args=("$@")
[[ ${#run_args[@]} -gt 0 ]] || run_args=(--transports grpc-uds,zeromq,uds,shm-ring,iceoryx2 --payloads 8,1024,65536,524288)

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-2}
WARMUP=${WARMUP:-0.5}
RATIOS=${RATIOS:-grpc-uds/uds zeromq/uds shm-ring/grpc-uds}
out=${OUT:-$(mktemp -d -t ipcbench-ratios.XXXXXX)}
mkdir -p "$out"
log="$out/log.txt"
started=$(date +%s)
say() { echo "[$(($(date +%s) - started)) s] $*" >&2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  say "building BenchDaemon (Release)"
  dotnet build src/BenchDaemon -c Release -nologo -v q >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
fi

for ((round = 1; round <= ROUNDS; round++)); do
  say "round $round/$ROUNDS: run ${run_args[*]}"
  dotnet src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll run --duration "${DURATION}s" \
    --warmup "$(awk "BEGIN{print $WARMUP*1000}")ms" --out "$out/r$round" "${run_args[@]}" \
    "--IpcBench:DatabasePath=$out/scenarios.db" "--IpcBench:RuntimeDirectory=$out/runtime" >>"$log" 2>&1 \
    || say "round $round: some scenario failed (see $log)"
done

python3 - "$out" "$ROUNDS" "$RATIOS" <<'PY'
import json, os, statistics, sys
from collections import defaultdict

out, rounds, ratios = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def secs(d): return float((d or "0s").rstrip("s"))
def short(value, prefix): return (value or "").replace(prefix, "").lower().replace("_", "-")

rows = []  # one per scenario: (round, key without transport, transport, figures)
failed = []
for rnd in range(1, rounds + 1):
    path = os.path.join(out, f"r{rnd}", "results.json")
    if not os.path.exists(path):
        continue
    for record in json.load(open(path))["scenarios"]:
        s = record["scenario"]; spec = s["spec"]; st = s.get("stats") or {}; lat = st.get("latency") or {}
        key = (int(spec["payload_bytes"]), short(spec.get("payload_access"), "PAYLOAD_ACCESS_"), short(spec.get("mode"), "MODE_"),
               f'{spec["publishers"]}:{spec["subscribers"]}', short(spec.get("topology"), "TOPOLOGY_"))
        if s.get("state") != "SCENARIO_STATE_COMPLETED" or int(st.get("messages_lost", 0)) or int(st.get("messages_corrupted", 0)):
            failed.append(f'round {rnd} {spec["transport"]} {key}: {s.get("state")} {s.get("error", "")} lost {st.get("messages_lost", 0)}')
            continue
        procs = st.get("processes", [])
        rows.append((rnd, key, spec["transport"], short(spec.get("wait_strategy"), "WAIT_STRATEGY_"), {
            "mps": float(st.get("messages_per_second", 0)),
            "mbps": float(st.get("bytes_per_second", 0)) / 1e6,
            "cpu_d": sum(p.get("cpu_percent", 0) for p in procs if p["role"] == "daemon"),
            "cpu_a": sum(p.get("cpu_percent", 0) for p in procs if p["role"] == "agent"),
            "p50": secs(lat.get("p50")) * 1e6, "p99": secs(lat.get("p99")) * 1e6,
            "probe": secs((s.get("environment") or {}).get("core_to_core_round_trip")) * 1e9,
        }))

def si(v):
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} K" if v >= 1e3 else f"{v:.0f}"
def payload(b): return f"{b // 1024} KB" if b >= 1024 else f"{b} B"
def keytext(k): return f"{payload(k[0])} {k[1]} {k[2]} {k[3]} {k[4]}"

cells = defaultdict(list)
for rnd, key, transport, wait, f in rows:
    cells[(key, transport, wait)].append(f)
print(f"# Medians of {rounds} rounds (min–max of msg/s); CPU % of one core, agents summed; latency µs; probe = core-to-core round trip, ns\n")
print("| Cell | Transport | Wait | msg/s | min–max | MB/s | CPU daemon | CPU agents | p50 µs | p99 µs | probe ns (min–max) |")
print("|---|---|---|---:|---|---:|---:|---:|---:|---:|---|")
for (key, transport, wait), fs in sorted(cells.items(), key=lambda c: (c[0][0], c[0][1])):
    m = lambda n: statistics.median(f[n] for f in fs)
    probes = [f["probe"] for f in fs]
    print(f"| {keytext(key)} | {transport} | {wait} | {si(m('mps'))} | {si(min(f['mps'] for f in fs))}–{si(max(f['mps'] for f in fs))} | "
          f"{m('mbps'):.1f} | {m('cpu_d'):.0f} % | {m('cpu_a'):.0f} % | {m('p50'):.1f} | {m('p99'):.1f} | {statistics.median(probes):.0f} ({min(probes):.0f}–{max(probes):.0f}) |")

by_round = {(rnd, key, transport): f for rnd, key, transport, _, f in rows}
print("\n# Ratios of msg/s, A / B within each round, then the median (per-round values in brackets)\n")
print("| Cell | A / B | median | per round |")
print("|---|---|---:|---|")
for pair in ratios:
    a, b = pair.split("/")
    for key in sorted({k for _, k, _, _, _ in rows}):
        per_round = [by_round[(r, key, a)]["mps"] / by_round[(r, key, b)]["mps"]
                     for r in range(1, rounds + 1) if (r, key, a) in by_round and (r, key, b) in by_round]
        if per_round:
            print(f"| {keytext(key)} | {a} / {b} | {statistics.median(per_round):.3f} | {' '.join(f'{x:.3f}' for x in per_round)} |")
if failed:
    print("\nNot completed, or lost or corrupted messages (left out):")
    for line in failed:
        print(f"- {line}")
PY
say "raw results in $out (r*/results.json, log.txt)"
