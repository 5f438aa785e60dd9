#!/usr/bin/env bash
# shm-ring against uds and named-pipes through the daemon's one-shot `run` (agents and all), with the machine's memcpy
# bandwidth measured in the same run for scale. Usage: bench/shm-ring.sh [output directory]
# The figures are as noisy as the machine is shared: compare within one run, not across runs.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-results/shm-ring-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"

echo "Building Release..." >&2
dotnet build -c Release src/BenchDaemon -nologo -v q >&2
dotnet build -c Release bench/MemcpyBandwidth -nologo -v q >&2

daemon_run() {
  dotnet run -c Release --no-build --project src/BenchDaemon -- run "$@"
}

status=0
{
  failed=0
  echo "# shm-ring benchmark ($(date -Iseconds), $(nproc) cores, $(uname -r))"
  echo
  echo "## memcpy bandwidth (one thread, this machine, this run)"
  echo
  dotnet run -c Release --no-build --project bench/MemcpyBandwidth
  echo
  echo "## 1:1 stream, --wait yield (named-pipes offers BLOCK only, so it runs BLOCK)"
  echo
  daemon_run --transports shm-ring,uds,named-pipes --payloads 8,1024,65536,1048576 --access full,header-only \
    --duration 3s --warmup 1s --wait yield --out "$out/matrix" || failed=1
  echo
  echo "## paired 1:1 at 1 KB, --wait yield"
  echo
  daemon_run --transports shm-ring,uds,named-pipes --payloads 1024 --topology paired --publishers 1 --subscribers 1 \
    --duration 3s --warmup 1s --wait yield --out "$out/paired-1x1" || failed=1
  echo
  echo "## paired 2:2 at 1 KB, --wait yield"
  echo
  daemon_run --transports shm-ring,uds,named-pipes --payloads 1024 --topology paired --publishers 2 --subscribers 2 \
    --duration 3s --warmup 1s --wait yield --out "$out/paired-2x2" || failed=1
  exit "$failed"
} | tee "$out/summary.md" || status=$?

echo "Tables in $out/summary.md, one JSON result per scenario beside them." >&2
exit "$status"
