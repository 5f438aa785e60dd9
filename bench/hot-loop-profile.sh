#!/usr/bin/env bash
# Where a message's time goes in the hot loops: samples the publisher thread (pub0, in the daemon) and the receiving
# thread (sub0-rx0, in the agent) of one closed-loop 1:1 stream with `perf record -e cpu-clock` while the scenario
# measures, and prints each thread's functions with their share of samples and that share in ns per message.
# Under SPIN both threads are busy for the whole window, so a thread's time per message is 1 s / msg/s, and a function
# with share s costs s x that. JIT-compiled frames are named through the runtime's perf map (DOTNET_PerfMapEnabled=1,
# inherited by the agents; the map files are removed at the end), with W^X double mapping off
# (DOTNET_EnableWriteXorExecute=0): perf cannot name code that runs from the runtime's memfd double mapping.
#
# Usage: bench/hot-loop-profile.sh [TRANSPORT (shm-ring)] [PAYLOAD (8)] [ACCESS (full)]
# Knobs: DURATION=8 (measured seconds), WARMUP=2 (the least warmup), SAMPLE=4 (seconds sampled, mid-window),
#        TOP=14 (functions per thread), OUT=dir, SKIP_BUILD=1.
# Needs: script (util-linux), perf (Debian's linux-perf) with kernel.perf_event_paranoid <= 1 or root, python3, the .NET 10 SDK. Hardware
# counters are not needed (cpu-clock is a software event; most VMs have no PMU).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
transport=${1:-shm-ring}
payload=${2:-8}
access=${3:-full}
DURATION=${DURATION:-8}
WARMUP=${WARMUP:-2}
SAMPLE=${SAMPLE:-4}
TOP=${TOP:-14}
. bench/lib.sh
results_dir "${OUT:-$(mktemp -d -t ipcbench-profile.XXXXXX)}"
command -v perf >/dev/null || { echo "perf is missing: apt-get install -y linux-perf" >&2; exit 1; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  say "building (Release)"
  dotnet build src/BenchDaemon -c Release -nologo -v q >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
fi

maps_before=$(ls /tmp/perf-*.map 2>/dev/null || true)
cleanup() {
  [[ -n ${run_pid:-} ]] && kill -- "-$run_pid" 2>/dev/null || true
  for map in /tmp/perf-*.map /tmp/perfinfo-*.map; do
    [[ -e $map ]] && ! grep -qxF "$map" <<<"$maps_before" && rm -f "$map"
  done
  return 0
}
trap cleanup EXIT

say "run: $transport $payload B $access, 1:1 stream, wait spin, ${WARMUP}s warmup + ${DURATION}s"
set -m
# Under `script`, run sees a terminal and draws its live display, whose RUNNING says the measured window has begun
# (to a file it prints only a line per finished scenario).
run_cmd=$(printf '%q ' dotnet src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll run --transports "$transport" \
  --payloads "$payload" --access "$access" --wait spin --duration "${DURATION}s" --warmup "${WARMUP}s" --out "$out/run" \
  "--IpcBench:DatabasePath=$out/profile.db" "--IpcBench:RuntimeDirectory=$out/runtime")
DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0 script -qec "$run_cmd" /dev/null </dev/null >>"$log" 2>&1 &
run_pid=$!
set +m
# The warmup runs on until code generation settles (seconds): sample once the run says it is measuring.
for ((waited = 0; waited < 600; waited++)); do
  grep -q RUNNING "$log" 2>/dev/null && break
  kill -0 "$run_pid" 2>/dev/null || break
  sleep 0.1
done
sleep "$(awk "BEGIN{print ($DURATION - $SAMPLE) / 2}")"
say "sampling every CPU for ${SAMPLE}s"
perf record -e cpu-clock -F 9999 -a -o "$out/perf.data" -- sleep "$SAMPLE" >>"$log" 2>&1
wait "$run_pid" || { say "the run failed (see $log)"; exit 1; }
run_pid=
perf report -i "$out/perf.data" --no-children --sort comm,sym --stdio --percent-limit 0 -t $'\t' 2>>"$log" >"$out/report.txt"

python3 - "$out/run/results.json" "$out/report.txt" "$TOP" <<'PY'
import json, sys, re
results, report, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
scenario = json.load(open(results))["scenarios"][0]["scenario"]
stats = scenario.get("stats", {})
rate = float(stats.get("messages_per_second", 0))
if rate <= 0:
    sys.exit("the run measured no messages")
per_message_ns = 1e9 / rate
threads = {}
for line in open(report):
    if line.startswith("#") or not line.strip():
        continue
    parts = [p.strip() for p in line.rstrip("\n").split("\t") if p.strip()]
    if len(parts) < 3:
        continue
    share = float(parts[0].rstrip("%"))
    comm, sym = parts[1], re.sub(r"^\[[.kHu]\]\s*", "", parts[2])
    threads.setdefault(comm, []).append((share, sym))
env = scenario.get("environment", {})
print(f"## {scenario['spec']['transport']} {scenario['spec']['payload_bytes']} B, 1:1 stream, SPIN: "
      f"{rate/1e6:.2f} M msg/s = {per_message_ns:.2f} ns per message per thread "
      f"(probe {env.get('core_to_core_round_trip', '?')})\n")
for comm in ("pub0", "sub0-rx0"):
    rows = threads.get(comm)
    if not rows:
        print(f"{comm}: no samples (is the thread named so?)\n")
        continue
    total = sum(s for s, _ in rows)
    print(f"### {comm}: {total:.1f} % of all samples\n")
    print("| function | share of the thread | ns per message |")
    print("|---|---:|---:|")
    for share, sym in sorted(rows, reverse=True)[:top]:
        print(f"| `{sym[:110]}` | {share / total * 100:.1f} % | {share / total * per_message_ns:.2f} |")
    rest = sorted(rows, reverse=True)[top:]
    if rest:
        s = sum(x for x, _ in rest)
        print(f"| {len(rest)} others | {s / total * 100:.1f} % | {s / total * per_message_ns:.2f} |")
    print()
PY
say "perf data and report in $out"
