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

# Sets GRPCURL: as given, else ../shared/tools/grpcurl, else grpcurl on PATH (empty if none).
find_grpcurl() {
  GRPCURL=${GRPCURL:-}
  if [[ -z $GRPCURL ]]; then
    if [[ -x ../shared/tools/grpcurl ]]; then GRPCURL=../shared/tools/grpcurl; else GRPCURL=$(command -v grpcurl || true); fi
  fi
}
