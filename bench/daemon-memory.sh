#!/usr/bin/env bash
# Memory of a long-running daemon: one daemon (Release build), COUNT short scenarios (default 1,000) run one after
# another through grpcurl, and every 100 the daemon's RSS (/proc/<pid>/status VmRSS) and its GC heap
# (dotnet_total_memory_bytes from its /metrics: GC.GetTotalMemory, so garbage not yet collected counts too).
# A finished scenario should cost its final record only: RSS under 250 MB, and flat after the first 200.
#
# Usage: bench/daemon-memory.sh   env: COUNT (1000), PARALLEL (4), TRANSPORT (channels), DURATION (0.2s), SKIP_BUILD=1
# The daemon keeps its database and runtime directory in a temporary directory, removed at exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

count=${COUNT:-1000}
transport=${TRANSPORT:-channels}
duration=${DURATION:-0.2s}
parallel=${PARALLEL:-4}
(( 100 % parallel == 0 )) || { echo "PARALLEL must divide 100" >&2; exit 2; }
. bench/lib.sh
find_grpcurl
grpcurl=$GRPCURL
[[ -n $grpcurl && -x $(command -v "$grpcurl") ]] || { echo "grpcurl not found (not on PATH; set GRPCURL to its path)" >&2; exit 2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  echo "building BenchDaemon (Release)" >&2
  dotnet build src/BenchDaemon -c Release -nologo -v q >&2
fi

work=$(mktemp -d /tmp/ipcbench-memory.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
control=127.0.0.1:$(free_port)
metrics=127.0.0.1:$(free_port)

dotnet src/BenchDaemon/bin/Release/net10.0/BenchDaemon.dll serve --listen "$control" \
  "--IpcBench:MetricsAddress=$metrics" "--IpcBench:DatabasePath=$work/scenarios.db" \
  "--IpcBench:RuntimeDirectory=$work/runtime" "--Serilog:MinimumLevel:Default=Warning" >"$work/daemon.log" 2>&1 &
daemon=$!
cleanup() {
  kill "$daemon" 2>/dev/null || true
  # A daemon that does not stop within its 5 s shutdown timeout (and a margin) is killed: this is a bench, not a test.
  for _ in $(seq 1 50); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.2; done
  kill -9 "$daemon" 2>/dev/null || true
  wait "$daemon" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

call() { "$grpcurl" -plaintext "$@"; }
for _ in $(seq 1 100); do
  call "$control" grpc.health.v1.Health/Check >/dev/null 2>&1 && break
  kill -0 "$daemon" 2>/dev/null || { cat "$work/daemon.log" >&2; exit 1; }
  sleep 0.2
done

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$daemon/status"; }
heap_mb() {
  curl -s "http://$metrics/metrics" | awk '/^dotnet_total_memory_bytes / { printf "%.1f", $2 / 1048576 }'
}

spec="{\"spec\":{\"transport\":\"$transport\",\"publishers\":1,\"subscribers\":1,\"payload_bytes\":64,\"duration\":\"$duration\"}}"
start=$(date +%s)
printf '%10s  %8s  %11s  %9s\n' scenarios "RSS MB" "GC heap MB" "elapsed s"
printf '%10d  %8s  %11s  %9d\n' 0 "$(rss_mb)" "$(heap_mb)" 0
# PARALLEL scenarios at a time (each waits for its own end), so that per-scenario waits (agent start, the daemon's
# core-to-core probe, which gives up after 2 s on a busy machine) do not make the run take an hour.
one() {
  local id state
  id=$(call -d "$spec" "$control" ipcbench.v1.BenchControl/StartScenario | grep -o -m1 '"id": "[0-9a-f]*"' | cut -d'"' -f4)
  # WatchScenario streams until the scenario has finished; its last message is the final state.
  state=$(call -d "{\"id\":\"$id\"}" "$control" ipcbench.v1.BenchControl/WatchScenario | grep -o '"state": "[A-Z_]*"' | tail -1)
  [[ $state == *COMPLETED* ]] || echo "scenario ${id:-?} ended ${state:-without a state}" | tee -a "$work/failed" >&2
}
for (( i = parallel; i <= count; i += parallel )); do
  pids=()
  for (( j = 0; j < parallel; j++ )); do one & pids+=($!); done
  wait "${pids[@]}"
  if (( i % 100 == 0 )); then
    printf '%10d  %8s  %11s  %9d\n' "$i" "$(rss_mb)" "$(heap_mb)" $(( $(date +%s) - start ))
  fi
done
failed=$( (cat "$work/failed" 2>/dev/null || true) | wc -l)
echo "transport $transport, $duration each; $failed of $count did not complete" >&2
