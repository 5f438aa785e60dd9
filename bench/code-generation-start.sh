#!/usr/bin/env bash
# What a code-generation setting costs a daemon before its first result: for each setting, ROUNDS times in turn (the
# settings interleaved), starts a built BenchDaemon, times it until it answers gRPC health, starts one short scenario
# (1:1 uds, 64 B, 0.5 s, no warmup) through grpcurl and times it until it has ended, then stops the daemon. Prints the
# median of each per setting. This is what the tests' TestDefaults chose from: their daemons start a hundred times.
#
# Usage: bench/code-generation-start.sh [SETTING...]     a SETTING is space-separated VAR=value pairs, quoted
#   default settings: "DOTNET_TieredCompilation=0" "DOTNET_TieredPGO=0" "" (the runtime's default), each with
#   IpcBench__CodeSettleTimeoutSeconds=0 (no settling wait) unless the setting names it. A word daemon=PATH in a
#   setting runs that BenchDaemon instead of the build's (e.g. another checkout's build, to compare two builds).
# Knobs: ROUNDS=3, GRPCURL. Needs: a Release build of src/BenchDaemon, grpcurl, jq, python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
rounds=${ROUNDS:-3}
settings=("$@")
((${#settings[@]})) || settings=("DOTNET_TieredCompilation=0" "DOTNET_TieredPGO=0" "")
daemon=src/BenchDaemon/bin/Release/net10.0/BenchDaemon
[[ -x $daemon ]] || { echo "build first: dotnet build src/BenchDaemon -c Release" >&2; exit 2; }
find_grpcurl
[[ -n $GRPCURL ]] || { echo "grpcurl not found (set GRPCURL)" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq not found" >&2; exit 2; }

dir=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
now() { date +%s.%N; }

# one SETTING: sets start_s (until health answered) and first_s (the first scenario, start to end)
one() {
  local setting=$1 port=$((20000 + RANDOM % 20000)) run="$dir/$RANDOM" t0 t1 t2 id state
  mkdir -p "$run"
  local env=(IpcBench__CodeSettleTimeoutSeconds=0) bin=$daemon word
  if [[ -n $setting ]]; then
    read -r -a more <<<"$setting"
    for word in "${more[@]}"; do
      if [[ $word == daemon=* ]]; then bin=${word#daemon=}; else env+=("$word"); fi
    done
  fi
  t0=$(now)
  env "${env[@]}" "$bin" serve --listen "127.0.0.1:$port" "--IpcBench:RuntimeDirectory=$run" \
    "--IpcBench:MetricsAddress=127.0.0.1:$((port + 1))" "--IpcBench:DatabasePath=$run/db" >"$run/log" 2>&1 &
  pid=$!
  until "$GRPCURL" -plaintext "127.0.0.1:$port" grpc.health.v1.Health/Check >/dev/null 2>&1; do sleep 0.02; done
  t1=$(now)
  id=$("$GRPCURL" -plaintext -d '{"spec":{"transport":"uds","publishers":1,"subscribers":1,"payload_bytes":64,"duration":"0.5s","warmup":"0s"}}' \
    "127.0.0.1:$port" ipcbench.v1.BenchControl/StartScenario | jq -r .id)
  while :; do
    state=$("$GRPCURL" -plaintext -d "{\"id\":\"$id\"}" "127.0.0.1:$port" ipcbench.v1.BenchControl/GetScenario | jq -r .state)
    [[ $state == SCENARIO_STATE_COMPLETED || $state == SCENARIO_STATE_FAILED || $state == SCENARIO_STATE_STOPPED ]] && break
    sleep 0.02
  done
  t2=$(now)
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  [[ $state == SCENARIO_STATE_COMPLETED ]] || { echo "the scenario ended $state; daemon log: $run/log" >&2; exit 1; }
  start_s=$(python3 -c "print(round($t1 - $t0, 3))")
  first_s=$(python3 -c "print(round($t2 - $t1, 3))")
}

results=$dir/results.tsv
for ((r = 1; r <= rounds; r++)); do
  for s in "${settings[@]}"; do
    one "$s"
    printf '%s\t%s\t%s\n' "${s:-default}" "$start_s" "$first_s" >>"$results"
    echo "round $r: ${s:-default}: health after $start_s s, first scenario $first_s s" >&2
  done
done

python3 - "$results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, start, first = line.rstrip('\n').split('\t')
    rows.setdefault(name, []).append((float(start), float(first)))
print(f"| setting (+ no settling wait) | runs | health answered, s (median) | first 0.5 s uds scenario, s (median) |")
print("|---|---:|---:|---:|")
for name, xs in rows.items():
    print(f"| {name} | {len(xs)} | {statistics.median(x[0] for x in xs):.2f} | {statistics.median(x[1] for x in xs):.2f} |")
EOF
