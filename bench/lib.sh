# Pieces the bench scripts share; sourced (`. bench/lib.sh` from the repository root), never run.

# results_dir DIR: creates DIR and sets out (DIR), log (DIR/log.txt), tsv (DIR/results.tsv, emptied) and started
# (now, in seconds), which say() counts from.
results_dir() {
  out=$1
  mkdir -p "$out"
  log="$out/log.txt"
  tsv="$out/results.tsv"
  : >"$tsv"
  started=$(date +%s)
}

# Progress on stderr, seconds since results_dir.
say() { echo "[$(($(date +%s) - started)) s] $*" >&2; }

# Sets GRPCURL: as given, else grpcurl on PATH, else ../shared/tools/grpcurl (beside the repository on developers'
# machines; a clone has no such folder), else empty. The tests look in the same order (tests/Shared/GrpcurlLocator.cs).
find_grpcurl() {
  GRPCURL=${GRPCURL:-}
  if [[ -z $GRPCURL ]]; then
    GRPCURL=$(command -v grpcurl || true)
    if [[ -z $GRPCURL && -x ../shared/tools/grpcurl ]]; then GRPCURL=../shared/tools/grpcurl; fi
  fi
}

# control_client PORT: grpcurl (find_grpcurl) and jq, or exit 2 naming the missing one; sets G (grpcurl -plaintext, an
# array) and D (127.0.0.1:PORT), the daemon the script serves and calls.
control_client() {
  find_grpcurl
  [[ -n $GRPCURL ]] || { echo "grpcurl not found (set GRPCURL)" >&2; exit 2; }
  command -v jq >/dev/null || { echo "jq not found" >&2; exit 2; }
  G=("$GRPCURL" -plaintext)
  D=127.0.0.1:$1
}
