#!/usr/bin/env bash
# What the IpcBench harness costs over a bare loop, and how far shm-ring is from what shared memory can do here: the
# performance-bar ratios below. Each round runs, back to back, an IpcBench scenario (a `serve` daemon started
# here, driven by grpcurl, subscriber in a BenchAgent) then its minimal native loop from bench/native:
#   A. iceoryx2 1:1 64 B HEADER_ONLY SPIN closed loop (default latency sampling) / `ipcbench-native iox2 --minimal`
#      at 64 B: sequence number only, no clock, no histogram                                          bar >= 0.90
#   B. shm-ring 1:1 8 B FULL SPIN closed loop / `ipcbench-native ring` 8 B FULL (the default `--cursor slot-sequence`:
#      each slot's own sequence word, stored last, tells the consumer it is written): a bare SPSC ring in /dev/shm with
#      the same fill + checksum + verification, no clock, no histogram                                bar >= 0.5
#   C. the same as B at 1 KiB (for information)
# and, right after B's and C's native ring, the same ring with `--cursor per-message` (a shared producer cursor stored
# after every message, the older design), to show what the slot-sequence ring gains over it (for information).
# Prints msg/s medians with min–max over the rounds, the ratio (IpcBench / native) per round and its median, the
# ratio slot-sequence / per-message cursor per round and its median, and the core-to-core probe the daemon measured
# before each IpcBench scenario (ns; the two vCPUs' placement moves every figure here, so read the ratios with it).
#
# Usage: bench/harness-overhead.sh [results-dir]     (default: a new temporary directory)
# Knobs: ROUNDS=5, DURATION=3 WARMUP=1 (seconds per run), SKIP_BUILD=1 (do not run cargo), CARGO=cargo,
#        GRPCURL=path (default: grpcurl on PATH, else ../shared/tools/grpcurl where developers have it).
# Needs: the C# Release build (dotnet build IpcBench.sln -c Release), cargo (crates.io or vendored crates), grpcurl, jq, python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
. bench/lib.sh
results_dir "${1:-$(mktemp -d -t ipcbench-harness-overhead.XXXXXX)}"
find_grpcurl
for tool in "$GRPCURL" jq python3; do
  command -v "$tool" >/dev/null || { echo "harness-overhead: $tool not found (grpcurl: set GRPCURL=)" >&2; exit 2; }
done

daemon=src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll
[[ -f $daemon ]] || { echo "harness-overhead: $daemon not built (dotnet build IpcBench.sln -c Release)" >&2; exit 2; }
native=bench/native/target/release/ipcbench-native
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  say "building bench/native (release)"
  (cd bench/native && ${CARGO:-cargo} build --release --locked) >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
fi
[[ -x $native ]] || { echo "harness-overhead: $native not built" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
control=127.0.0.1:$(free_port)
daemon_pid=
cleanup() {
  if [[ -n $daemon_pid ]] && kill -0 "$daemon_pid" 2>/dev/null; then
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

dotnet "$daemon" serve --listen "$control" "--IpcBench:MetricsAddress=127.0.0.1:$(free_port)" \
  "--IpcBench:RuntimeDirectory=$out/runtime" "--IpcBench:DatabasePath=$out/scenarios.db" >>"$out/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 150); do
  "$GRPCURL" -plaintext "$control" grpc.health.v1.Health/Check >/dev/null 2>&1 && break
  kill -0 "$daemon_pid" 2>/dev/null || { tail -30 "$out/daemon.log" >&2; exit 1; }
  sleep 0.2
done

# One IpcBench scenario; appends a TSV row: round cell impl msg/s lost corrupted state probe_ns probe_cores.
# Arguments: round, cell, transport, payload, access (FULL|HEADER_ONLY).
run_ipcbench() {
  local round=$1 cell=$2 transport=$3 payload=$4 access=$5 spec id final
  spec=$(jq -cn --arg t "$transport" --argjson p "$payload" --arg a "PAYLOAD_ACCESS_$access" \
    --arg d "${DURATION}s" --arg w "${WARMUP}s" --arg n "harness-overhead $cell r$round" \
    '{spec:{transport:$t,publishers:1,subscribers:1,payload_bytes:$p,duration:$d,warmup:$w,payload_access:$a,
            mode:"MODE_STREAM",wait_strategy:"WAIT_STRATEGY_SPIN",rate_per_publisher:0,name:$n}}')
  id=$("$GRPCURL" -plaintext -d "$spec" "$control" ipcbench.v1.BenchControl/StartScenario 2>>"$log" | jq -r .id)
  [[ -n $id && $id != null ]] || { say "IpcBench $cell: StartScenario failed (see $log)"; return; }
  # WatchScenario ends after the final snapshot; the stored record (GetScenario) then has the environment too.
  timeout 300 "$GRPCURL" -plaintext -d "{\"id\":\"$id\"}" "$control" ipcbench.v1.BenchControl/WatchScenario >/dev/null 2>>"$log" || true
  final=$("$GRPCURL" -plaintext -d "{\"id\":\"$id\"}" "$control" ipcbench.v1.BenchControl/GetScenario 2>>"$log")
  printf '%s\n' "$final" >"$out/r$round-$cell.json"
  jq -r --arg r "$round" --arg c "$cell" '
    def ns(d): ((d // "0s") | rtrimstr("s") | tonumber) * 1e9;
    [$r, $c, "ipcbench", (.stats.messages_per_second // 0), (.stats.messages_lost // "0"), (.stats.messages_corrupted // "0"),
     (.state | sub("SCENARIO_STATE_"; "")), ns(.environment.core_to_core_round_trip), (.environment.core_to_core_cores // "")] | @tsv' \
    <<<"$final" >>"$tsv"
}

# One minimal native loop; appends a TSV row of the same shape (no probe). Arguments: round, cell, impl (native: the
# default slot-sequence ring or iox2 --minimal; native-per-message: the ring with --cursor per-message), native
# arguments. A ring whose JSON line does not name the expected cursor mode (a stale binary ignores --cursor) is left out.
run_native() {
  local round=$1 cell=$2 impl=$3 line
  shift 3
  if line=$(timeout 120 "$native" "$@" --wait spin --duration "$DURATION" --warmup "$WARMUP" 2>>"$log"); then
    printf '%s\n' "$line" >>"$out/native.jsonl"
    jq -r --arg r "$round" --arg c "$cell" --arg i "$impl" '
      (if $i == "native-per-message" then "per-message" else "slot-sequence" end) as $ring
      | [$r, $c, $i, .msgs_per_sec, .lost, .corrupted,
         (if .transport == "ring" and .ring != $ring then "RING-\(.ring // "unnamed")-NOT-\($ring)"
          elif .lost == 0 and .corrupted == 0 and .duplicated == 0 then "COMPLETED" else "LOSS" end), "", ""] | @tsv' \
      <<<"$line" >>"$tsv"
  else
    say "native $cell ($impl): failed (see $log)"
  fi
}

# The daemon's first scenario of a transport also measures the JIT warming up its loops: one throwaway run of each.
say "warm-up scenarios (left out)"
saved=$DURATION
DURATION=1
run_ipcbench 0 warm iceoryx2 64 HEADER_ONLY
run_ipcbench 0 warm shm-ring 8 FULL
DURATION=$saved

for ((round = 1; round <= ROUNDS; round++)); do
  say "round $round/$ROUNDS"
  run_ipcbench "$round" iox2-64-header-only iceoryx2 64 HEADER_ONLY
  run_native "$round" iox2-64-header-only native iox2 --minimal --payload 64
  run_ipcbench "$round" ring-8-full shm-ring 8 FULL
  run_native "$round" ring-8-full native ring --payload 8 --access full --cursor slot-sequence
  run_native "$round" ring-8-full native-per-message ring --payload 8 --access full --cursor per-message
  run_ipcbench "$round" ring-1024-full shm-ring 1024 FULL
  run_native "$round" ring-1024-full native ring --payload 1024 --access full --cursor slot-sequence
  run_native "$round" ring-1024-full native-per-message ring --payload 1024 --access full --cursor per-message
done
say "done; raw results in $out (results.tsv, native.jsonl, r*-*.json: each IpcBench scenario as stored, log.txt, daemon.log)"

python3 - "$tsv" "$DURATION" "$WARMUP" <<'PY'
import statistics, sys
from collections import defaultdict

tsv, duration, warmup = sys.argv[1:4]
runs = defaultdict(dict)  # (cell, impl) -> round -> row
bad = []
for line in open(tsv):
    r, cell, impl, mps, lost, corrupted, state, probe, cores = line.rstrip("\n").split("\t")
    if cell == "warm":
        continue
    if state != "COMPLETED" or int(lost) or int(corrupted):
        bad.append(f"round {r} {cell} {impl}: {state}, lost {lost}, corrupted {corrupted}")
        continue
    runs[(cell, impl)][int(r)] = {"mps": float(mps), "probe": float(probe) if probe else None, "cores": cores}

def si(v): return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} K" if v >= 1e3 else f"{v:.0f}"
def spread(values): return f"{si(statistics.median(values))} ({si(min(values))}–{si(max(values))})" if values else "–"

cells = [("iox2-64-header-only", "iceoryx2 1:1 64 B HEADER_ONLY SPIN", "iox2 --minimal 64 B", 0.90),
         ("ring-8-full", "shm-ring 1:1 8 B FULL SPIN", "ring 8 B FULL (slot-sequence)", 0.5),
         ("ring-1024-full", "shm-ring 1:1 1 KiB FULL SPIN", "ring 1 KiB FULL (slot-sequence)", None)]
rounds = max([r for v in runs.values() for r in v] or [0])
print(f"## Harness overhead and shm-ring vs minimal native loops ({duration} s + {warmup} s warmup per run, 1:1, closed loop; "
      f"median (min–max) of {rounds} interleaved rounds)\n")
print("| IpcBench scenario | msg/s | native minimal loop | msg/s | IpcBench / native, median (per round) | bar | probe ns, median (min–max) |")
print("|---|---:|---|---:|---|---|---|")
for cell, name, ref, bar in cells:
    a, b = runs.get((cell, "ipcbench"), {}), runs.get((cell, "native"), {})
    ratios = [a[r]["mps"] / b[r]["mps"] for r in sorted(a) if r in b and b[r]["mps"] > 0]
    ratio = statistics.median(ratios) if ratios else None
    probes = [x["probe"] for x in a.values() if x["probe"]]
    probe = f"{statistics.median(probes):.0f} ({min(probes):.0f}–{max(probes):.0f})" if probes else "–"
    verdict = "info" if bar is None else "–" if ratio is None else f"≥ {bar:.2f}: {'met' if ratio >= bar else 'NOT met'}"
    per_round = " ".join(f"{x:.2f}" for x in ratios)
    print(f"| {name} | {spread([x['mps'] for x in a.values()])} | {ref} | {spread([x['mps'] for x in b.values()])} | "
          f"{'–' if ratio is None else f'{ratio:.2f}'} ({per_round}) | {verdict} | {probe} |")

print("\n### The native rings: slot-sequence (the reference above) / per-message cursor, back to back in each round\n")
print("| ring | slot-sequence msg/s | per-message cursor msg/s | slot-sequence / per-message, median (per round) |")
print("|---|---:|---:|---|")
for cell, name in [("ring-8-full", "8 B FULL SPIN"), ("ring-1024-full", "1 KiB FULL SPIN")]:
    a, b = runs.get((cell, "native"), {}), runs.get((cell, "native-per-message"), {})
    ratios = [a[r]["mps"] / b[r]["mps"] for r in sorted(a) if r in b and b[r]["mps"] > 0]
    per_round = " ".join(f"{x:.2f}" for x in ratios)
    print(f"| {name} | {spread([x['mps'] for x in a.values()])} | {spread([x['mps'] for x in b.values()])} | "
          f"{f'{statistics.median(ratios):.2f}' if ratios else '–'} ({per_round}) |")
cores = sorted({x["cores"] for (c, i), v in runs.items() if i == "ipcbench" for x in v.values() if x["cores"]})
if cores:
    print(f"\nProbe cores: {', '.join(cores)}.")
print("\n**Left out (not completed, or lost or corrupted messages):**\n" + "\n".join(f"- {b}" for b in bad) if bad
      else "\nEvery run completed with zero loss and zero corruption.")
PY
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); wall time $(($(date +%s) - started)) s."
