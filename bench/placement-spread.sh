#!/usr/bin/env bash
# How much placement moves a figure, and how much it varies: the same 1:1 8 B stream scenario on iceoryx2 and
# shm-ring, REPS times each, unpinned (the kernel places publisher and subscriber) against pinned to two CPUs
# (--publisher-cpus $PUB_CPU --subscriber-cpus $SUB_CPU), the two variants interleaved so a slow spell of the machine
# lands on both. Prints, per transport and variant, the median and min–max of msg/s and of latency p50, the median
# noise (others' CPU share of the machine), and the environment block the results carried (probe, SMT, caches).
# Quote figures only from a machine nothing else runs on: the noise column says whether it was.
#
# Usage: bench/placement-spread.sh [results-dir]     (default: a new temporary directory)
# Knobs: REPS=5 (ROUNDS is accepted as a synonym), DURATION=2 WARMUP=0.5 (seconds per scenario), PUB_CPU=0 SUB_CPU=1,
#        TRANSPORTS=iceoryx2,shm-ring, WAIT= (a wait strategy for `run --wait`; default: run's own), SKIP_BUILD=1.
# Needs: the .NET 10 SDK (and the native iceoryx2 library built, see native/iceoryx2-ipcbench/README.md), python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh

REPS=${REPS:-${ROUNDS:-5}}
DURATION=${DURATION:-2}
WARMUP=${WARMUP:-0.5}
PUB_CPU=${PUB_CPU:-0}
SUB_CPU=${SUB_CPU:-1}
TRANSPORTS=${TRANSPORTS:-iceoryx2,shm-ring}
results_dir "${1:-$(mktemp -d -t ipcbench-placement.XXXXXX)}"

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  say "building the daemon and agent (Release)"
  dotnet build src/BenchDaemon -c Release -nologo -v q >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
fi
daemon=(dotnet src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll)
wait_args=()
[[ -n ${WAIT:-} ]] && wait_args=(--wait "$WAIT")

for ((rep = 1; rep <= REPS; rep++)); do
  for variant in unpinned pinned; do
    placement=()
    [[ $variant == pinned ]] && placement=(--publisher-cpus "$PUB_CPU" --subscriber-cpus "$SUB_CPU")
    dir="$out/rep$rep-$variant"
    say "rep $rep/$REPS $variant: $TRANSPORTS 1:1 8 B ${placement[*]}"
    if ! "${daemon[@]}" run --transports "$TRANSPORTS" --payloads 8 --publishers 1 --subscribers 1 \
        --duration "${DURATION}s" --warmup "$(awk "BEGIN{print $WARMUP*1000}")ms" --out "$dir" \
        "${wait_args[@]}" "${placement[@]}" >>"$log" 2>&1; then
      say "rep $rep $variant: some scenario failed (see $log)"
    fi
  done
done

python3 - "$out" "$REPS" <<'PY'
import json, pathlib, statistics, sys
out, reps = pathlib.Path(sys.argv[1]), int(sys.argv[2])

def ns(d):
    return float(d.rstrip("s")) * 1e9 if d else None

rows, env = {}, {}
for variant in ("unpinned", "pinned"):
    for rep in range(1, reps + 1):
        path = out / f"rep{rep}-{variant}" / "results.json"
        if not path.exists():
            continue
        for record in json.loads(path.read_text())["scenarios"]:
            s = record["scenario"]; st = s.get("stats", {}); key = (s["spec"]["transport"], variant)
            r = rows.setdefault(key, {"mps": [], "p50": [], "noise": [], "failed": 0})
            if s.get("state") != "SCENARIO_STATE_COMPLETED":
                r["failed"] += 1
                continue
            r["mps"].append(st.get("messages_per_second", 0))
            if (p50 := ns(st.get("latency", {}).get("p50"))) is not None:
                r["p50"].append(p50)
            if "noise_percent" in st:
                r["noise"].append(st["noise_percent"])
            env[variant] = s.get("environment", {})

def spread(values, fmt):
    if not values:
        return "–"
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"

mps = lambda v: f"{v / 1e6:.2f} M"
p50 = lambda v: f"{v:.0f} ns"
print(f"### 1:1 8 B stream, {reps} repetitions each: median (min–max)\n")
print("| Transport | Placement | msg/s | p50 | noise % (median) | failed |")
print("|---|---|---|---|---|---|")
for (transport, variant), r in sorted(rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "unpinned")):
    noise = f"{statistics.median(r['noise']):.1f}" if r["noise"] else "–"
    print(f"| {transport} | {variant} | {spread(r['mps'], mps)} | {spread(r['p50'], p50)} | {noise} | {r['failed']} |")
print()
for variant, e in env.items():
    p = e.get("placement", {})
    rtt = ns(e.get("core_to_core_round_trip"))
    print(f"- {variant}: publishers on {p.get('publisher_cpus', '?')}, subscribers on {p.get('subscriber_cpus', '?')}; "
          f"probe {e.get('core_to_core_cores', '?')} {f'{rtt:.0f} ns' if rtt else '–'}; "
          f"same physical core {str(p['same_physical_core']).lower() if 'same_physical_core' in p else '–'}; shared caches {', '.join(p.get('shared_caches', [])) or 'none'}; "
          f"SMT {p.get('smt', '?')} (siblings {p.get('smt_siblings', '?')}); cpufreq {p.get('cpufreq_driver', '?')}/{p.get('cpufreq_governor', '?')}; "
          f"isolated [{p.get('isolated_cpus', '')}]; cgroup quota {p.get('cgroup_cpu_quota', '?')}; THP {p.get('transparent_huge_pages', '?')}")
PY
say "done: $out"
