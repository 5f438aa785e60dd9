#!/usr/bin/env bash
# The two native reference rings back to back: `ipcbench-native ring --cursor slot-sequence` (the default: each slot's
# own sequence word, stored last with release, tells the consumer the slot is written) and `--cursor per-message` (a
# shared producer cursor stored after every message), 1:1 closed loop, same fill + checksum + verification. Each round
# is one pair, the order flipping every round (slot-sequence first in odd rounds). Prints per pair its time, msg/s of
# both, slot-sequence / per-message, and the core-to-core probe before and after it; then medians (min–max).
#
# The probe: the repository has no command of its own for CoreToCoreProbe, so with PROBE=auto (the default) each probe
# is the one a minimal `BenchDaemon run` (one shm-ring scenario, 100 ms, no warmup) records before and after its run
# (CPUs 0 and 1, 30 ms each; placement as bench/placement.py: "near" up to NEAR_NS, "far" above, "moved" when the two
# differ). One before the first pair, then one after each pair, which is also the next pair's "before". Each takes a few
# seconds and needs the C# Release build; without it, or with PROBE=0, the table says "missing" and keeps the times.
#
# Usage: bench/ring-reference.sh [results-dir]     (default: a new temporary directory)
# Knobs: ROUNDS=6, DURATION=2 WARMUP=1 (seconds per run), PAYLOAD=8, ACCESS=full|header-only, WAIT=spin|yield,
#        SLOTS= (default: ipcbench-native's), PROBE=auto|0, NEAR_NS=200, SKIP_BUILD=1 (do not run cargo), CARGO=cargo.
# Needs: cargo (crates.io or vendored crates), jq, python3; for the probe the C# Release build (dotnet build IpcBench.sln -c Release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-2}
WARMUP=${WARMUP:-1}
PAYLOAD=${PAYLOAD:-8}
ACCESS=${ACCESS:-full}
WAIT=${WAIT:-spin}
SLOTS=${SLOTS:-}
PROBE=${PROBE:-auto}
NEAR_NS=${NEAR_NS:-200}
. bench/lib.sh
results_dir "${1:-$(mktemp -d -t ipcbench-ring-reference.XXXXXX)}"
for tool in jq python3; do
  command -v "$tool" >/dev/null || { echo "ring-reference: $tool not found" >&2; exit 2; }
done

native=bench/native/target/release/ipcbench-native
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  say "building bench/native (release)"
  (cd bench/native && ${CARGO:-cargo} build --release --locked) >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
fi
[[ -x $native ]] || { echo "ring-reference: $native not built" >&2; exit 2; }

daemon=src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll
probe_why=
if [[ $PROBE == 0 ]]; then
  probe_why="PROBE=0"
elif ! command -v dotnet >/dev/null; then
  probe_why="no dotnet"
elif [[ ! -f $daemon ]]; then
  probe_why="$daemon not built (dotnet build IpcBench.sln -c Release)"
fi
[[ -z $probe_why ]] || say "no core-to-core probe: $probe_why"
probes="$out/probes.tsv"
: >"$probes"

# One probe; appends a row to probes.tsv: index, time, placement, probe text ("before" or "before→after" ns), or
# "missing" and why. Argument: index (0 = before the first pair, i = after pair i).
probe() {
  local i=$1 at dir="$out/probe-$1"
  at=$(date +%T)
  if [[ -n $probe_why ]]; then
    printf '%s\t%s\tmissing\t%s\n' "$i" "$at" "$probe_why" >>"$probes"
    return
  fi
  timeout 120 dotnet "$daemon" run --transports shm-ring --payloads 8 --duration 100ms --warmup 0ms --out "$dir" \
    "--IpcBench:DatabasePath=$out/probe.db" "--IpcBench:RuntimeDirectory=$out/runtime" >>"$log" 2>&1 || true
  if [[ ! -f $dir/results.json ]]; then
    say "probe $i: the run failed (see $log)"
    printf '%s\t%s\tmissing\tthe run failed\n' "$i" "$at" >>"$probes"
    return
  fi
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=bench python3 - "$dir/results.json" "$i" "$at" "$NEAR_NS" >>"$probes" <<'PY'
import json, sys
from placement import placement
scenarios = json.load(open(sys.argv[1]))["scenarios"]
where, text = placement(scenarios[0]["scenario"].get("environment", {}), float(sys.argv[4])) if scenarios else ("unknown", "")
print("\t".join([sys.argv[2], sys.argv[3], where if text else "missing", text or "not measured (busy?)"]))
PY
}

# One native ring run; appends a TSV row: round, position in the pair, mode, time, msg/s, lost, corrupted,
# duplicated, state. Arguments: round, position, mode.
run_ring() {
  local round=$1 position=$2 mode=$3 line at
  local args=(ring --cursor "$mode" --payload "$PAYLOAD" --access "$ACCESS" --wait "$WAIT" --duration "$DURATION" --warmup "$WARMUP")
  [[ -z $SLOTS ]] || args+=(--slots "$SLOTS")
  at=$(date +%T)
  if line=$(timeout 120 "$native" "${args[@]}" 2>>"$log"); then
    printf '%s\n' "$line" >>"$out/native.jsonl"
    jq -r --arg r "$round" --arg p "$position" --arg m "$mode" --arg t "$at" '
      [$r, $p, $m, $t, .msgs_per_sec, .lost, .corrupted, .duplicated,
       (if .ring != $m then "RING-\(.ring // "unnamed")-NOT-\($m)"
        elif .lost == 0 and .corrupted == 0 and .duplicated == 0 then "COMPLETED" else "LOSS" end)] | @tsv' <<<"$line" >>"$tsv"
  else
    say "ring $mode round $round: failed (see $log)"
    printf '%s\t%s\t%s\t%s\t0\t0\t0\t0\tFAILED\n' "$round" "$position" "$mode" "$at" >>"$tsv"
  fi
}

probe 0
for ((round = 1; round <= ROUNDS; round++)); do
  if ((round % 2)); then order=(slot-sequence per-message); else order=(per-message slot-sequence); fi
  say "pair $round/$ROUNDS: ${order[0]}, then ${order[1]}"
  run_ring "$round" 1 "${order[0]}"
  run_ring "$round" 2 "${order[1]}"
  probe "$round"
done
say "done; raw results in $out (results.tsv, probes.tsv, native.jsonl, log.txt, probe-*/ when probed)"

python3 - "$tsv" "$probes" "$DURATION" "$WARMUP" "$PAYLOAD" "$ACCESS" "$WAIT" "${SLOTS:-default}" <<'PY'
import statistics, sys
from collections import defaultdict

tsv, probes, duration, warmup, payload, access, wait, slots = sys.argv[1:9]
runs, bad = defaultdict(dict), []
for line in open(tsv):
    r, position, mode, at, mps, lost, corrupted, duplicated, state = line.rstrip("\n").split("\t")
    if state != "COMPLETED":
        bad.append(f"pair {r} {mode}: {state}, lost {lost}, corrupted {corrupted}, duplicated {duplicated}")
        continue
    runs[int(r)][mode] = {"mps": float(mps), "at": at, "first": position == "1"}
probe = {}
for line in open(probes):
    i, at, where, text = line.rstrip("\n").split("\t")
    probe[int(i)] = (at, "missing" if where == "missing" else f"{where} {text}", where, text)

def si(v): return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v / 1e3:.1f} K" if v >= 1e3 else f"{v:.0f}"
def spread(values): return f"{si(statistics.median(values))} ({si(min(values))}–{si(max(values))})" if values else "–"

print(f"## Native rings: slot-sequence / per-message cursor ({payload} B {access} {wait}, slots {slots}; {duration} s + "
      f"{warmup} s warmup per run, 1:1 closed loop, back to back, order flipping every pair)\n")
print("| pair | started | first | probe before (ns) | slot-sequence msg/s | per-message msg/s | slot-sequence / per-message | probe after (ns) |")
print("|---:|---|---|---|---:|---:|---:|---|")
ratios = []
rounds = sorted(set(runs) | {int(l.split("\t")[0]) for l in open(tsv)})
for r in rounds:
    a, b = runs[r].get("slot-sequence"), runs[r].get("per-message")
    ratio = a["mps"] / b["mps"] if a and b and b["mps"] > 0 else None
    if ratio is not None:
        ratios.append(ratio)
    first = "slot-sequence" if (a and a["first"]) or (b and not b["first"]) else "per-message"
    started = min(x["at"] for x in (a, b) if x) if a or b else "–"
    before, after = probe.get(r - 1, ("", "–"))[1], probe.get(r, ("", "–"))[1]
    print(f"| {r} | {started} | {first} | {before} | {si(a['mps']) if a else '–'} | {si(b['mps']) if b else '–'} | "
          f"{f'{ratio:.2f}' if ratio is not None else '–'} | {after} |")
slot = [runs[r]["slot-sequence"]["mps"] for r in runs if "slot-sequence" in runs[r]]
per = [runs[r]["per-message"]["mps"] for r in runs if "per-message" in runs[r]]
print(f"\nMedian (min–max) over {len(rounds)} pairs: slot-sequence {spread(slot)} msg/s, per-message cursor {spread(per)} msg/s, "
      f"slot-sequence / per-message {f'{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})' if ratios else '–'}.")
missing = sorted({p[3] for p in probe.values() if p[2] == "missing"})
if missing:
    print(f"\nCore-to-core probe missing ({'; '.join(missing)}): read the ratios with the times above.")
else:
    kinds = {p[2] for p in probe.values()}
    if len(kinds) > 1:
        print(f"\nThe placement changed during the run ({', '.join(sorted(kinds))}): compare pairs within one placement.")
print("\n**Left out (failed, lost, corrupted or duplicated messages, or the wrong ring):**\n" + "\n".join(f"- {b}" for b in bad) if bad
      else "\nEvery run completed with zero loss, corruption and duplication.")
PY
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); wall time $(($(date +%s) - started)) s."
