#!/usr/bin/env bash
# What does a Prometheus scrape cost a running measurement? Runs the same 1:1 scenario (uds, 1 KB, 5 s by default)
# alternately without and with a scrape of /metrics every second, and prints msg/s side by side.
#
#   bench/scrape-cost.sh                      # 3 pairs, uds, 1024 B, 5 s, 1 s scrape interval
#   REPEAT=5 TRANSPORT=tcp bench/scrape-cost.sh
#   NO_BUILD=1 bench/scrape-cost.sh           # use the Release build as it is
#
# Needs: the .NET SDK, grpcurl ($GRPCURL or on PATH), curl and jq. Starts its own daemon on free
# loopback ports (nothing else is touched) and stops it at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REPEAT=${REPEAT:-3}
TRANSPORT=${TRANSPORT:-uds}
PAYLOAD=${PAYLOAD:-1024}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
SCRAPE_INTERVAL=${SCRAPE_INTERVAL:-1}

. bench/lib.sh
find_grpcurl
for tool in "$GRPCURL" curl jq; do
  command -v "$tool" >/dev/null || { echo "scrape-cost: $tool not found (grpcurl: set GRPCURL=)" >&2; exit 2; }
done

if [[ -z ${NO_BUILD:-} ]]; then
  dotnet build src/BenchDaemon/BenchDaemon.csproj -c Release -v quiet -nologo >&2
fi
DAEMON=src/BenchDaemon/bin/Release/net10.0/BenchDaemon
[[ -x $DAEMON ]] || { echo "scrape-cost: $DAEMON not built" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
CONTROL=127.0.0.1:$(free_port)
METRICS=127.0.0.1:$(free_port)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ipcbench-scrape-cost.XXXXXX")
DAEMON_PID=

cleanup() {
  [[ -f $WORK/scraper.pid ]] && kill "$(cat "$WORK/scraper.pid")" 2>/dev/null || true
  if [[ -n $DAEMON_PID ]] && kill -0 "$DAEMON_PID" 2>/dev/null; then
    kill -TERM "$DAEMON_PID"
    wait "$DAEMON_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$DAEMON" serve --listen "$CONTROL" "--IpcBench:MetricsAddress=$METRICS" "--IpcBench:RuntimeDirectory=$WORK/runtime" \
  >"$WORK/daemon.log" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 100); do
  "$GRPCURL" -plaintext "$CONTROL" grpc.health.v1.Health/Check >/dev/null 2>&1 && break
  kill -0 "$DAEMON_PID" 2>/dev/null || { cat "$WORK/daemon.log" >&2; exit 1; }
  sleep 0.2
done

# One scenario; prints "msg/s state".
run_scenario() {
  local spec id final
  spec=$(jq -cn --arg t "$TRANSPORT" --argjson p "$PAYLOAD" --arg d "$DURATION" --arg w "$WARMUP" \
    '{spec:{transport:$t,publishers:1,subscribers:1,payload_bytes:$p,duration:$d,warmup:$w,name:"scrape-cost"}}')
  id=$("$GRPCURL" -plaintext -d "$spec" "$CONTROL" ipcbench.v1.BenchControl/StartScenario | jq -r .id)
  # WatchScenario streams a snapshot a second and ends after the final one (the same in both variants).
  final=$("$GRPCURL" -plaintext -d "{\"id\":\"$id\"}" "$CONTROL" ipcbench.v1.BenchControl/WatchScenario | jq -s '.[-1]')
  jq -r '"\(.stats.messages_per_second // 0) \(.state)"' <<<"$final"
}

# Scrapes every SCRAPE_INTERVAL s until killed, logging "seconds bytes" per scrape. Like Prometheus: one client
# keeping its connection open (curl --rate over a URL range); SCRAPER=spawn starts a new curl for every scrape instead;
# SCRAPER=none does not scrape at all (an A/A run: the "with" column then shows how much runs differ anyway).
scrape_loop() {
  if [[ ${SCRAPER:-keepalive} == spawn ]]; then
    while :; do
      curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "http://$METRICS/metrics" >>"$WORK/scrapes.txt" || true
      sleep "$SCRAPE_INTERVAL"
    done
  else
    local rate
    rate=$(awk -v i="$SCRAPE_INTERVAL" 'BEGIN { printf "%d/h", 3600 / i }')
    exec curl -s --rate "$rate" -w '%{stderr}%{time_total} %{size_download}\n' "http://$METRICS/metrics?scrape=[1-1000000]" \
      >/dev/null 2>>"$WORK/scrapes.txt"
  fi
}

printf '%s %s:%s %s B, %s after %s warmup, scrape every %s s (%s); %d pairs, ABBA order\n\n' \
  "$TRANSPORT" 1 1 "$PAYLOAD" "$DURATION" "$WARMUP" "$SCRAPE_INTERVAL" "${SCRAPER:-keepalive}" "$REPEAT"
printf '| Pair | Without scraping (msg/s) | With scraping (msg/s) | Difference |\n|---:|---:|---:|---:|\n'
without_all=() with_all=() diff_all=()
run_scraped() {
  if [[ ${SCRAPER:-keepalive} == none ]]; then run_scenario; return; fi   # A/A control: shows the noise alone
  # (Runs in a command substitution: the scraper's pid goes through a file, for cleanup too; its stdout is not the
  # substitution's pipe, so the substitution ends when the scenario does.)
  scrape_loop >/dev/null & echo $! >"$WORK/scraper.pid"
  run_scenario
  kill "$(cat "$WORK/scraper.pid")" 2>/dev/null || true
  rm -f "$WORK/scraper.pid"
}
for i in $(seq "$REPEAT"); do
  # ABBA: odd pairs run without scraping first, even pairs second, so a drift or an order effect cancels out.
  if (( i % 2 )); then
    a=$(run_scenario); b=$(run_scraped)
  else
    b=$(run_scraped); a=$(run_scenario)
  fi
  read -r without state1 <<<"$a"
  read -r with state2 <<<"$b"
  [[ $state1 == SCENARIO_STATE_COMPLETED && $state2 == SCENARIO_STATE_COMPLETED ]] || { echo "scenario ended $state1 / $state2" >&2; exit 1; }
  without_all+=("$without") with_all+=("$with")
  diff_all+=("$(awk -v a="$without" -v b="$with" 'BEGIN { print (b - a) / a * 100 }')")
  awk -v i="$i" -v a="$without" -v b="$with" 'BEGIN { printf "| %d | %.0f | %.0f | %+.1f %% |\n", i, a, b, (b - a) / a * 100 }'
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mw=$(median "${without_all[@]}") mx=$(median "${with_all[@]}")
awk -v a="$mw" -v b="$mx" 'BEGIN { printf "| median | %.0f | %.0f | %+.1f %% |\n", a, b, (b - a) / a * 100 }'
awk -v d="$(median "${diff_all[@]}")" 'BEGIN { printf "\nMedian of the pairs'"'"' differences: %+.1f %%\n", d }'
if [[ -s $WORK/scrapes.txt ]]; then
  # Plain awk (mawk has no asort): sort first.
  sort -g "$WORK/scrapes.txt" | awk '{ t[NR] = $1 * 1000; s += $2 } END { printf "\n%d scrapes: median %.2f ms, max %.2f ms, %.0f bytes on average\n", NR, t[int((NR + 1) / 2)], t[NR], s / NR }'
fi

# The daemon's own CPU per scrape, measured directly (independent of the run-to-run noise above): N back-to-back
# scrapes over one connection, CPU from /proc/PID/stat (utime + stime, in clock ticks) before and after; then the
# same number of requests for a 404 on the same port, i.e. what Kestrel costs without the exposition.
N=${CPU_SCRAPES:-1000}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"; }
per_request() {
  local before after start_ns end_ns
  before=$(cpu_ticks); start_ns=$(date +%s%N)
  curl -s "http://$METRICS/$1?n=[1-$N]" >/dev/null
  end_ns=$(date +%s%N); after=$(cpu_ticks)
  awk -v n="$N" -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" -v ns="$((end_ns - start_ns))" -v what="$2" \
    'BEGIN { printf "%d back-to-back %s: daemon CPU %.2f ms each, %.2f ms wall each\n", n, what, t / hz * 1000 / n, ns / 1e6 / n }'
}
per_request metrics "scrapes of /metrics"
per_request nothing "requests for a 404"
