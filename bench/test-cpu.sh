#!/usr/bin/env bash
# Where BenchDaemon.Tests' CPU goes, per test class: runs the test project under process accounting (acct) with vmstat
# beside it, then charges every BenchDaemon process to the class (or fixture) that started it and every BenchAgent to
# its daemon. For CI's time budget: on 2 cores the lanes are CPU-bound, so CPU-s, not test seconds, is what to cut.
#
# Usage: bench/test-cpu.sh [dotnet test arguments, e.g. --filter FullyQualifiedName~SoakTests]
# Needs root (accton) and a Release build (SKIP_BUILD=1 uses the existing one). Writes results/test-cpu-<time>/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v accton >/dev/null || { apt-get update -qq && apt-get install -y -qq acct >/dev/null; }

out=${OUT:-results/test-cpu-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  dotnet build IpcBench.sln -c Release -nologo -v q >&2
fi

: >"$out/pacct"
: >"$out/daemons.txt"
accton "$out/pacct" >/dev/null
vmstat 5 >"$out/vmstat.txt" &
vmstat_pid=$!
trap 'accton off >/dev/null 2>&1 || true; kill "$vmstat_pid" 2>/dev/null || true' EXIT

read -r _ u n s _ _ q sq st _ </proc/stat
busy0=$((u + n + s + q + sq + st))
start=$(date +%s)
status=0
IPCBENCH_TEST_DAEMON_MAP="$out/daemons.txt" dotnet test tests/BenchDaemon.Tests -c Release --no-build \
  --logger trx --results-directory "$out" "$@" >"$out/test.log" 2>&1 || status=$?
read -r _ u n s _ _ q sq st _ </proc/stat
echo "tests: exit $status, $(($(date +%s) - start)) s, machine busy $(((u + n + s + q + sq + st - busy0) / $(getconf CLK_TCK))) CPU-s" | tee "$out/summary.txt"
accton off >/dev/null

dump-acct "$out/pacct" >"$out/pacct.txt"
python3 bench/test-cpu.py "$out/pacct.txt" "$out/daemons.txt" "$out/vmstat.txt" | tee -a "$out/summary.txt"
echo "in $out" >&2
exit "$status"
