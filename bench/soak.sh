#!/usr/bin/env bash
# Soak: a 2:4 ALL_TO_ALL scenario (1 KB, FULL, closed loop unless --rate, each transport's default wait strategy unless
# --wait) per transport for DURATION each, on a daemon of its own. Reports msg/s of the first vs the last tenth, RSS and
# GC heap of the daemon and the agents, their live heaps after a forced full collection, open descriptors, /dev/shm
# usage and lost messages, and judges them: zero loss, live heap growth within its bound, no descriptor or /dev/shm
# growth. Exit code 0 when every check passed.
#
# Usage: bench/soak.sh DURATION [--transports a,b] [--parallel] [--payload BYTES] [--rate MSG_PER_S] [--wait spin|yield|block]
#   DURATION: 90s, 30m, 2h ... per transport (with --parallel: every transport at once, for DURATION in all).
#   --rate: messages a second per publisher (paced); --wait: one wait strategy for every transport (all offer block).
# Writes report.md and report.json to results/soak-<time>/ (or $OUT). SKIP_BUILD=1 uses the existing Release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ $# -lt 1 ]]; then
  sed -n '2,11p' "$0" >&2
  exit 2
fi

out=${OUT:-results/soak-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  echo "Building Release..." >&2
  dotnet build -c Release src/BenchDaemon -nologo -v q >&2
  dotnet build -c Release bench/Soak -nologo -v q >&2
fi

status=0
dotnet bench/Soak/bin/Release/net10.0/Soak.dll "$@" --json "$out/report.json" | tee "$out/report.md" || status=$?
echo "report: $out/report.md, $out/report.json" >&2
exit "$status"
