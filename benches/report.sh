#!/usr/bin/env bash
# Runs every benchmark once and regenerates BENCHMARKS.md and benches/chart.svg from that
# one run:
#   1. the criterion suites (latch, queue, scaling), wall clock;
#   2. instructions per operation with callgrind (count at N minus count at 0, over N),
#      plus callgrind_annotate profiles of our hot paths, and locked instructions per
#      message of the floor and the executor shapes (shared/tools/locked-per-op: callgrind's
#      per-instruction counts matched against objdump), including the ring engine alone;
#   3. allocations per operation and per wait with a counting global allocator, and heap
#      bytes per queued item;
#   4. CPython 3.13's asyncio.Queue on the same queue shapes;
#   5. tally-redis against the raw Streams loop and BullMQ, when redis-server is installed
#      (adapters/redis/benches/report.sh, which writes the Redis section of BENCHMARKS.md
#      from a run of its own; the report below keeps that section as it is);
#   6. the report itself (src/bin/report.rs).
#
#   bash benches/report.sh            # everything, about 25 minutes on 2 cores (Redis: 5)
#   SKIP_CRITERION=1 bash benches/report.sh   # reuse the last criterion results
#   SKIP_REDIS=1 bash benches/report.sh       # keep the Redis section as it is
#
# Needs valgrind (apt-get install -y valgrind) and `PYENV_VERSION=3.13.0 python3`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target
out=$target/bench-report
ops=${OPS:-100000}
begin=$(date +%s)
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install -y valgrind)" >&2; exit 2; }

echo "==> build (bench profile: release with debug info)"
cargo build --profile bench -p benches --bins
cargo bench -p benches --no-run
bin=$target/release
rm -rf "$out" && mkdir -p "$out/profiles"

if [[ -z ${SKIP_CRITERION:-} ]]; then
  echo "==> criterion suites"
  rm -rf "$target/criterion"
  started=$(date +%s)
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  cargo bench -p benches 2>&1 | grep -E '^(latch|queue|scaling)/|time:' || true
  echo "$(( $(date +%s) - started )) s, finished $(date -u +%Y-%m-%dT%H:%MZ); 1-min load average $load_before before, $(cut -d' ' -f1 /proc/loadavg) after" > "$target/criterion/duration.txt"
fi

echo "==> instructions per operation (callgrind, N = $ops)"
# The same method as shared/tools/instructions-per-op: whole-process count at N minus the
# count at 0, divided by N.
ir() {
  OPS=$1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "${@:2}" 2>&1 >/dev/null \
    | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
echo "# workload	instructions/op	(Ir at N - Ir at 0) / N" > "$out/instructions.tsv"
for workload in $("$bin/icount"); do
  zero=$(ir 0 "$bin/icount" "$workload")
  full=$(ir "$ops" "$bin/icount" "$workload")
  awk -v w="$workload" -v z="$zero" -v f="$full" -v n="$ops" \
    'BEGIN { printf "%s\t%.1f\t(%d - %d) / %d\n", w, (f - z) / n, f, z, n }' \
    | tee -a "$out/instructions.tsv"
done

echo "==> profiles of our hot paths"
for workload in latch/count_down/ours latch/wait_open/ours latch/open_no_waiters/ours \
  queue/local/spsc-bounded128/ours queue/local/spsc-bounded128/flume \
  queue/floor/ours queue/floor/async-channel queue/floor/flume queue/floor/kanal; do
  file=$out/profiles/${workload//\//_}
  OPS=$ops valgrind --tool=callgrind --callgrind-out-file="$file.out" \
    "$bin/icount" "$workload" >/dev/null 2>&1
  { echo "OPS=$ops icount $workload"
    callgrind_annotate "$file.out" 2>/dev/null \
      | sed -n '/file:function/,$p' | sed -n '3,18p' \
      | sed -E 's# \[[^]]*\]$##; s#/rustc/[0-9a-f]+/library/#<std>/#; s#'"$HOME"'/.cargo/registry/src/[^/]+/#<registry>/#; s#'"$root"'/##'
  } > "$file.txt"
  rm -f "$file.out"
done

echo "==> locked instructions per message (locked-per-op)"
# The shared tool: LOCKED_PER_OP, or shared/ beside the checkout (CI) or above a worktree.
tool=${LOCKED_PER_OP:-}
for candidate in "$root/../shared/tools/locked-per-op" "$root/../../shared/tools/locked-per-op"; do
  [[ -z $tool && -f $candidate ]] && tool=$candidate
done
echo "# workload	locked/op	instructions/op	(locked-per-op, N = $ops)" > "$out/locked.tsv"
if [[ -n $tool ]] && command -v objdump >/dev/null && command -v addr2line >/dev/null; then
  mkdir -p "$out/locked"
  locked() { # NAME BINARY WORKLOAD
    local file=$out/locked/${1//\//_}.txt
    python3 "$tool" "$2" "$3" "$ops" > "$file"
    printf '%s\t%s\t%s\n' "$1" \
      "$(sed -n 's/^locked instructions\/op: \([0-9.-]*\).*/\1/p' "$file")" \
      "$(sed -n 's/^instructions\/op.*over N): \([0-9.-]*\).*/\1/p' "$file")" \
      | tee -a "$out/locked.tsv"
  }
  for workload in $("$bin/icount" | grep -E '^queue/(floor|floor-unbounded|local)/' | grep -v tokio); do
    locked "$workload" "$bin/icount" "$workload"
  done
  # The ring engine alone: its floor unit test, built in the bench profile.
  ring=$(cargo test --profile bench -p tally-queue --lib --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
  locked engine/ring-floor "$ring" floor_ops_from_env
else
  echo "locked-per-op, objdump or addr2line not found: locked counts skipped" >&2
fi

echo "==> batches (locked-per-op)"
# The batch verbs against flume's drain and tokio's recv_many (benches/src/batch.rs), in
# a table of their own: BENCHMARKS.md's "Batches" section.
echo "# workload	locked/op	instructions/op	(locked-per-op, N = $ops)" > "$out/batches.tsv"
if [[ -n $tool ]] && command -v objdump >/dev/null && command -v addr2line >/dev/null; then
  mkdir -p "$out/locked"
  for workload in $("$bin/icount" | grep -E '^queue/batch'); do
    file=$out/locked/${workload//\//_}.txt
    python3 "$tool" "$bin/icount" "$workload" "$ops" > "$file"
    printf '%s\t%s\t%s\n' "$workload" \
      "$(sed -n 's/^locked instructions\/op: \([0-9.-]*\).*/\1/p' "$file")" \
      "$(sed -n 's/^instructions\/op.*over N): \([0-9.-]*\).*/\1/p' "$file")" \
      | tee -a "$out/batches.tsv"
  done
fi

echo "==> allocations per operation"
OPS=20000 "$bin/alloc_count" | tee "$out/allocations.tsv"

echo "==> heap bytes per queued item"
OPS=100000 "$bin/memory" | tee "$out/memory.tsv"

echo "==> CPython asyncio.Queue"
PYENV_VERSION=3.13.0 python3 benches/python/asyncio_queue.py | tee "$out/python.tsv"

echo "==> Redis (adapters/redis/benches/report.sh), if redis-server is installed"
redis_status=0
if [[ -n ${SKIP_REDIS:-} ]]; then
  echo "SKIP_REDIS is set: the Redis section of BENCHMARKS.md is kept as it is"
elif command -v redis-server >/dev/null; then
  # A failed Redis run does not stop the rest; this script exits with its status at the end.
  bash adapters/redis/benches/report.sh || redis_status=$?
else
  echo "redis-server is not installed: the Redis section of BENCHMARKS.md is kept as it is" >&2
fi

{
  echo "nproc:  $(nproc)"
  echo "cpu:    $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "memory: $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
  echo "kernel: $(uname -sr)"
  echo "rustc:  $(rustc --version)"
  echo "python: $(PYENV_VERSION=3.13.0 python3 --version)"
  echo "date:   $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "criterion suites: $(cat "$target/criterion/duration.txt" 2>/dev/null || echo "not timed")"
  echo "counts, profiles, CPython, Redis: $(( $(date +%s) - begin )) s; 1-min load average $(cut -d' ' -f1 /proc/loadavg) at the end"
  echo "(a load average above nproc means other work shared the cores: read the wall-clock"
  echo " ratios of such a run with care; the callgrind counts do not depend on it)"
} > "$out/machine.txt"

echo "==> BENCHMARKS.md and benches/chart.svg"
"$bin/report" "$out" "$target/criterion" BENCHMARKS.md benches/chart.svg
echo "done in $(( $(date +%s) - begin )) s"
if (( redis_status != 0 )); then
  echo "adapters/redis/benches/report.sh failed (status $redis_status): see its output above" >&2
  exit "$redis_status"
fi
