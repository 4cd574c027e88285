#!/usr/bin/env bash
# Long local fuzzing run of one target: restarts after a crash (keeping the grown corpus) until the time is up.
#   tests/fuzz/long_run.sh TARGET SECONDS OUTDIR
# OUTDIR gets corpus/, artifacts/ (crash-*, oom-*, timeout-*) and log. Run it under `nice -n 19` on a shared machine.
set -u
target=$1 seconds=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/corpus" "$out/artifacts"
end=$(( $(date +%s) + seconds ))
while :; do
  left=$(( end - $(date +%s) ))
  (( left > 5 )) || break
  python "$here/run.py" "$target" -max_total_time="$left" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$out/corpus" "$here/corpus/$target" >>"$out/log" 2>&1
  echo "=== exit $? at $(date -u +%T)" >>"$out/log"
done
