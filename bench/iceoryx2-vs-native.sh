#!/usr/bin/env bash
# C# transports (iceoryx2, uds, named-pipes, through BenchDaemon `run`, subscribers in BenchAgent processes) against
# the native Rust reference in bench/native (same per-message work, same iceoryx2 0.10.0 / a Unix domain socket), on
# this machine, in one go, C# and native runs interleaved. Prints Markdown tables to stdout (progress to stderr):
#   1. 1:1 stream throughput at 8 B, 1 KB, 64 KB, 512 KB, FULL and HEADER_ONLY, YIELD and SPIN, with C#/native ratios
#   2. named-pipes (BLOCK only) against native uds with blocking sockets
#   3. 8 B round-trip latency p50/p99, C# and native
#   4. iceoryx2 (C#) N:M aggregate delivered msg/s at 1 KB, YIELD and BLOCK
#
# Every figure is the median of ROUNDS rounds; each round runs every section once, C# and native side by side, so a
# slow spell of the machine (the two vCPUs placed far apart, a noisy neighbour) lands on both and on one round only.
#
# Usage: bench/iceoryx2-vs-native.sh [results-dir]     (default: a new temporary directory)
# Knobs: ROUNDS=1, DURATION=2 WARMUP=0.5 (seconds per cell), PAYLOADS=8,1024,65536,524288, SKIP_BUILD=1, JSON_TOOL=jq|python3,
#        RENDER_ONLY=1 (print the tables again from an earlier results-dir/results.tsv; pass the same DURATION/WARMUP),
#        WARM_START=0 (no throwaway first scenario per C# `run`),
#        SECTIONS=stream,pipes,rtt,nm (which of the four to run), STREAM_TRANSPORTS=iceoryx2,uds (section 1's transports:
#        `SECTIONS=stream STREAM_TRANSPORTS=iceoryx2` is the "same work" bar alone, in a third of the time),
#        STREAM_WAITS=yield,spin (section 1's subscriber waits).
# Needs: the .NET 10 SDK, cargo (crates.io or vendored crates, see native/iceoryx2-ipcbench/README.md), python3 or jq.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-1}
DURATION=${DURATION:-2}
WARMUP=${WARMUP:-0.5}
PAYLOADS=${PAYLOADS:-8,1024,65536,524288}
SECTIONS=,${SECTIONS:-stream,pipes,rtt,nm},
STREAM_TRANSPORTS=${STREAM_TRANSPORTS:-iceoryx2,uds}
STREAM_WAITS=${STREAM_WAITS:-yield,spin}
out=${1:-$(mktemp -d -t ipcbench-vs-native.XXXXXX)}
mkdir -p "$out"
log="$out/log.txt"
tsv="$out/results.tsv"
started=$(date +%s)
render_only=${RENDER_ONLY:-0}
[[ $render_only == 1 ]] || : >"$tsv"

say() { echo "[$(($(date +%s) - started)) s] $*" >&2; }

if [[ -n ${JSON_TOOL:-} ]]; then
  json=$JSON_TOOL # jq or python3, to force one
elif command -v jq >/dev/null; then
  json=jq
elif command -v python3 >/dev/null; then
  json=python3
else
  echo "iceoryx2-vs-native: needs jq or python3 to read the JSON results" >&2
  exit 1
fi

if [[ ${SKIP_BUILD:-0} != 1 && $render_only != 1 ]]; then
  say "building the daemon and agent (Release) and bench/native (release)"
  dotnet build src/BenchDaemon -c Release -nologo -v q >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
  (cd bench/native && cargo build --release --locked) >>"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
fi
daemon=(dotnet src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll)
native=bench/native/target/release/ipcbench-native

# One TSV row per result: impl transport payload access wait mode publishers subscribers msg/s p50_us p99_us lost corrupted state group round
round=1
csharp_rows() { # directory, group label, leading scenarios to skip (the warm-start one)
  local dir=$1 group=$2 skip=$3
  if [[ $json == jq ]]; then
    # results.json: the export format of ExportScenarios (proto field names), one record per scenario.
    jq -r '
      def us(d): ((d // "0s") | rtrimstr("s") | tonumber) * 1e6;
      .scenarios[$skip:][].scenario |
      ["csharp", .spec.transport, .spec.payload_bytes,
       (if .spec.payload_access == "PAYLOAD_ACCESS_HEADER_ONLY" then "header-only" else "full" end),
       (.spec.wait_strategy | sub("WAIT_STRATEGY_"; "") | ascii_downcase),
       (if .spec.mode == "MODE_ROUND_TRIP" then "round-trip" else "stream" end),
       .spec.publishers, .spec.subscribers, (.stats.messages_per_second // 0),
       us(.stats.latency.p50), us(.stats.latency.p99),
       (.stats.messages_lost // "0"), (.stats.messages_corrupted // "0"), (.state | sub("SCENARIO_STATE_"; "")), $group, $round] | @tsv' \
      --arg group "$group" --argjson skip "$skip" --arg round "$round" "$dir/results.json"
  else
    python3 - "$dir" "$group" "$skip" "$round" <<'PY'
import json, pathlib, sys
def us(d): return float((d or "0s").rstrip("s")) * 1e6
for record in json.loads((pathlib.Path(sys.argv[1]) / "results.json").read_text())["scenarios"][int(sys.argv[3]):]:
    s = record["scenario"]; spec = s["spec"]; st = s.get("stats", {}); lat = st.get("latency", {})
    print("\t".join(map(str, ["csharp", spec["transport"], spec["payload_bytes"],
        "header-only" if spec.get("payload_access") == "PAYLOAD_ACCESS_HEADER_ONLY" else "full",
        spec.get("wait_strategy", "").replace("WAIT_STRATEGY_", "").lower(),
        "round-trip" if spec.get("mode") == "MODE_ROUND_TRIP" else "stream",
        spec["publishers"], spec["subscribers"], st.get("messages_per_second", 0), us(lat.get("p50")), us(lat.get("p99")),
        st.get("messages_lost", "0"), st.get("messages_corrupted", "0"), s.get("state", "").replace("SCENARIO_STATE_", ""), sys.argv[2], sys.argv[4]])))
PY
  fi
}

native_row() {
  local line=$1
  if [[ $json == jq ]]; then
    jq -r '["native", (if .transport == "iox2" then "iceoryx2" else .transport end), .payload, .access, .wait, .mode, 1,
            .subscribers, .msgs_per_sec, .p50_us, .p99_us, .lost, .corrupted,
            (if .lost == 0 and .corrupted == 0 then "COMPLETED" else "LOSS" end), "native", $round] | @tsv' --arg round "$round" <<<"$line"
  else
    python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("\t".join(map(str, ["native", "iceoryx2" if r["transport"] == "iox2" else r["transport"], r["payload"], r["access"],
    r["wait"], r["mode"], 1, r["subscribers"], r["msgs_per_sec"], r["p50_us"], r["p99_us"], r["lost"], r["corrupted"],
    "COMPLETED" if r["lost"] == 0 and r["corrupted"] == 0 else "LOSS", "native", sys.argv[2]])))' "$line" "$round"
  fi
}

run_csharp() { # label, payloads, run arguments...
  local label=$1 sizes=$2
  shift 2
  local dir="$out/r$round/cs-$label" skip=0
  # Every `run` is a new daemon: its first scenario would also measure the JIT warming up the publisher loop (tens of
  # per cent for small messages). A throwaway scenario of the first payload goes first and is left out of the results.
  if [[ ${WARM_START:-1} == 1 ]]; then
    sizes="${sizes%%,*},$sizes"
    skip=1
  fi
  say "C#     round $round/$ROUNDS $label: --payloads $sizes $*"
  # The native reference reads the clock and records a latency for every message: so does the C# side here (the
  # daemon's closed-loop default is one in 64), or the two would not do the same work.
  if ! "${daemon[@]}" run --duration "${DURATION}s" --warmup "$(awk "BEGIN{print $WARMUP*1000}")ms" --out "$dir" --payloads "$sizes" \
      --latency-sample-every 1 "$@" >>"$log" 2>&1; then
    say "C#     $label: some scenario failed (see $log)"
  fi
  if compgen -G "$dir/*.json" >/dev/null; then
    csharp_rows "$dir" "$label" "$skip" >>"$tsv"
  fi
}

run_native() { # transport, arguments...
  local line
  if line=$("$native" "$@" --duration "$DURATION" --warmup "$WARMUP" 2>>"$log"); then
    native_row "$line" >>"$tsv"
  else
    say "native $*: failed (see $log)"
  fi
}

IFS=, read -r -a payloads <<<"$PAYLOADS"
if [[ $render_only != 1 ]]; then
for ((round = 1; round <= ROUNDS; round++)); do

# 1. 1:1 stream, iceoryx2 and uds, interleaved per (wait, access) group.
if [[ $SECTIONS == *,stream,* ]]; then
for wait in ${STREAM_WAITS//,/ }; do
  for access in full header-only; do
    run_csharp "$wait-$access" "$PAYLOADS" --transports "$STREAM_TRANSPORTS" --access "$access" --wait "$wait"
    say "native $wait-$access: $STREAM_TRANSPORTS × ${#payloads[@]} payloads"
    for p in "${payloads[@]}"; do
      [[ ,$STREAM_TRANSPORTS, == *,iceoryx2,* ]] && run_native iox2 --payload "$p" --access "$access" --wait "$wait"
      [[ ,$STREAM_TRANSPORTS, == *,uds,* ]] && run_native uds --payload "$p" --access "$access" --wait "$wait"
    done
  done
done
fi

# 2. named-pipes (BLOCK only) and native uds with blocking sockets.
if [[ $SECTIONS == *,pipes,* ]]; then
run_csharp "pipes" "$PAYLOADS" --transports named-pipes --access full,header-only --wait block
say "native block: uds × ${#payloads[@]} payloads × 2 accesses"
for access in full header-only; do
  for p in "${payloads[@]}"; do
    run_native uds --payload "$p" --access "$access" --wait block
  done
done
fi

# 3. 8 B round trip.
if [[ $SECTIONS == *,rtt,* ]]; then
for wait in yield spin; do
  run_csharp "rtt-$wait" 8 --transports iceoryx2,uds --mode round-trip --wait "$wait"
  run_native iox2 --payload 8 --mode round-trip --wait "$wait"
  run_native uds --payload 8 --mode round-trip --wait "$wait"
done
fi

# 4. iceoryx2 N:M at 1 KB.
if [[ $SECTIONS == *,nm,* ]]; then
for nm in 1:1 1:2 1:4 2:2 4:4; do
  for wait in yield block; do
    run_csharp "nm-$wait-${nm/:/x}" 1024 --transports iceoryx2 --publishers "${nm%:*}" --subscribers "${nm#*:}" --wait "$wait"
  done
done
fi

done
say "done; raw results in $out (results.tsv, r*/cs-*/, log.txt)"
fi

# ---------------------------------------------------------------------------------------------------------------------
awk -F'\t' -v payloads="$PAYLOADS" -v duration="$DURATION" -v warmup="$WARMUP" '
function human(v) { if (v == "") return "–"; if (v >= 1e6) return sprintf("%.2f M", v / 1e6); if (v >= 1e3) return sprintf("%.1f K", v / 1e3); return sprintf("%.0f", v) }
function size(p) { if (p >= 1048576) return (p / 1048576) " MB"; if (p >= 1024) return (p / 1024) " KB"; return p " B" }
function ratio(a, b) { return (a == "" || b == "" || b == 0) ? "–" : sprintf("%.2f", a / b) }
function cell(k) { return (k in mps) ? mps[k] : "" }
function us(v) { return v == "" ? "–" : sprintf("%.1f", v) }
{
  key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5 SUBSEP $6 SUBSEP $7 SUBSEP $8
  if ($15 ~ /^nm-/) key = "nm" SUBSEP key   # the N:M runs (1:1 included) have a table of their own
  # Every round adds a value; the tables show the median (rows of older results files have no round column).
  count[key]++; vm[key, count[key]] = $9; v50[key, count[key]] = $10; v99[key, count[key]] = $11
  if ($16 > rounds) rounds = $16
  if ($12 != 0 || $13 != 0 || $14 != "COMPLETED") bad = bad sprintf("\n- round %s: %s %s %s B %s %s %s %d:%d: state %s, lost %s, corrupted %s", $16, $1, $2, $3, $4, $5, $6, $7, $8, $14, $12, $13)
}
function median(values, key, n,    i, j, x, sorted) {
  for (i = 1; i <= n; i++) {
    x = values[key, i] + 0
    for (j = i - 1; j >= 1 && sorted[j] > x; j--) sorted[j + 1] = sorted[j]
    sorted[j + 1] = x
  }
  return n % 2 ? sorted[(n + 1) / 2] : (sorted[n / 2] + sorted[n / 2 + 1]) / 2
}
END {
  for (key in count) { mps[key] = median(vm, key, count[key]); p50[key] = median(v50, key, count[key]); p99[key] = median(v99, key, count[key]) }
  if (rounds < 1) rounds = 1
  n = split(payloads, P, ",")
  printf "## C# transports vs native reference (%s s + %s s warmup per cell, 1 publisher : 1 subscriber process, closed loop; median of %d round%s)\n\n", duration, warmup, rounds, rounds == 1 ? "" : "s"
  print "### 1:1 stream throughput, delivered msg/s\n"
  print "| Payload | Access | Wait | iceoryx2 C# | iceoryx2 native | C#/native | uds C# | uds native | C#/native |"
  print "|---|---|---|---|---|---|---|---|---|"
  split("yield spin", W, " "); split("full header-only", A, " ")
  for (w = 1; w <= 2; w++) for (a = 1; a <= 2; a++) for (i = 1; i <= n; i++) {
    k = P[i] SUBSEP A[a] SUBSEP W[w] SUBSEP "stream" SUBSEP 1 SUBSEP 1
    ic = cell("csharp" SUBSEP "iceoryx2" SUBSEP k); in_ = cell("native" SUBSEP "iceoryx2" SUBSEP k)
    uc = cell("csharp" SUBSEP "uds" SUBSEP k); un = cell("native" SUBSEP "uds" SUBSEP k)
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", size(P[i]), A[a], W[w], human(ic), human(in_), ratio(ic, in_), human(uc), human(un), ratio(uc, un)
  }
  print "\n### named-pipes (BLOCK; .NET named pipes are Unix sockets on Linux) vs native uds with blocking sockets, msg/s\n"
  print "| Payload | Access | named-pipes C# | uds native (block) | C#/native |"
  print "|---|---|---|---|---|"
  for (a = 1; a <= 2; a++) for (i = 1; i <= n; i++) {
    k = P[i] SUBSEP A[a] SUBSEP "block" SUBSEP "stream" SUBSEP 1 SUBSEP 1
    pc = cell("csharp" SUBSEP "named-pipes" SUBSEP k); un = cell("native" SUBSEP "uds" SUBSEP k)
    printf "| %s | %s | %s | %s | %s |\n", size(P[i]), A[a], human(pc), human(un), ratio(pc, un)
  }
  print "\n### 8 B round trip (FULL), latency in µs\n"
  print "| Transport | Wait | C# p50 | C# p99 | native p50 | native p99 | C#/native p50 |"
  print "|---|---|---|---|---|---|---|"
  split("iceoryx2 uds", T, " ")
  for (t = 1; t <= 2; t++) for (w = 1; w <= 2; w++) {
    c = "csharp" SUBSEP T[t] SUBSEP 8 SUBSEP "full" SUBSEP W[w] SUBSEP "round-trip" SUBSEP 1 SUBSEP 1
    v = "native" SUBSEP T[t] SUBSEP 8 SUBSEP "full" SUBSEP W[w] SUBSEP "round-trip" SUBSEP 1 SUBSEP 1
    printf "| %s | %s | %s | %s | %s | %s | %s |\n", T[t], W[w], us(p50[c]), us(p99[c]), us(p50[v]), us(p99[v]), ratio(p50[c], p50[v])
  }
  print "\n### iceoryx2 (C#) N:M, 1 KB FULL, aggregate delivered msg/s (ALL_TO_ALL: every subscriber gets every message)\n"
  print "| N:M | YIELD | BLOCK |"
  print "|---|---|---|"
  split("1:1 1:2 1:4 2:2 4:4", NM, " ")
  for (m = 1; m <= 5; m++) {
    split(NM[m], x, ":")
    y = cell("nm" SUBSEP "csharp" SUBSEP "iceoryx2" SUBSEP 1024 SUBSEP "full" SUBSEP "yield" SUBSEP "stream" SUBSEP x[1] SUBSEP x[2])
    b = cell("nm" SUBSEP "csharp" SUBSEP "iceoryx2" SUBSEP 1024 SUBSEP "full" SUBSEP "block" SUBSEP "stream" SUBSEP x[1] SUBSEP x[2])
    printf "| %s | %s | %s |\n", NM[m], human(y), human(b)
  }
  if (bad != "") print "\n**Runs that did not complete without loss:**" bad
  else print "\nEvery run completed with zero loss and zero corruption."
}' "$tsv"
echo
[[ $render_only == 1 ]] && echo "(tables re-rendered from $tsv)"
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); wall time $(($(date +%s) - started)) s."
