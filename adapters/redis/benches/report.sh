#!/usr/bin/env bash
# tally-redis against the raw Streams loop (unbatched and batched) and BullMQ, in one run
# on one redis-server that the harness starts (adapters/redis/benches/peers/), then the
# "Redis" section of BENCHMARKS.md from that run.
#
#   bash adapters/redis/benches/report.sh                 # about 5 minutes on 2 cores
#   REDIS_BENCH_JOBS=2000 REDIS_BENCH_ROUNDS=1 bash adapters/redis/benches/report.sh
#   REDIS_BENCH_SAVE_BASELINE=1 bash adapters/redis/benches/report.sh   # a new baseline
#   REDIS8=1 bash adapters/redis/benches/report.sh       # on Redis 8.6, with chasquimq
#
# REDIS8=1 runs the same harness on Redis 8.6.3 (fetched by redis8.sh into target/redis8,
# the system's packages untouched), with chasquimq as one more system, and writes its own
# section ("## Redis 8.6, with chasquimq", after the Redis section), compared with no
# baseline (the baseline is from the system's server). chasquimq is measured only on a
# server >= 8.2 (it needs XACKDEL); its side is the project of its own in
# adapters/redis/benches/chasquimq/, built here in release, never by the workspace.
#
# Every REDIS_BENCH_* setting is passed on (see adapters/redis/benches/peers/main.rs):
# jobs, rounds, batch, consumers, fsync policy (everysec unless REDIS_BENCH_FSYNC says),
# systems. NO_MARKDOWN=1 leaves BENCHMARKS.md alone (the section is in the output folder).
#
# Needs redis-server. With node and npm, BullMQ and ioredis (the versions below) are
# installed into the output folder under target/, never into the repository; without them
# the section says BullMQ was not measured, and why.
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target
out=$target/redis-bench
begin_marker='<!-- redis section: begin (adapters/redis/benches/report.sh writes it) -->'
end_marker='<!-- redis section: end -->'
after_marker=
if [[ -n ${REDIS8:-} ]]; then
  bin=$(bash adapters/redis/benches/redis8.sh) || { echo "no Redis 8.6: nothing measured" >&2; exit 2; }
  export PATH=$bin:$PATH
  out=$target/redis-bench-redis8
  export REDIS_BENCH_HEADING="## Redis 8.6, with chasquimq" REDIS_BENCH_NO_BASELINE=1
  unset REDIS_BENCH_SAVE_BASELINE
  after_marker=$end_marker
  begin_marker='<!-- redis 8 section: begin (REDIS8=1 adapters/redis/benches/report.sh writes it) -->'
  end_marker='<!-- redis 8 section: end -->'
fi
export REDIS_BENCH_OUT=$out
bullmq_version=${BULLMQ_VERSION:-6.7.6}
ioredis_version=${IOREDIS_VERSION:-5.11.1}
begin=$(date +%s)
mkdir -p "$out"

command -v redis-server >/dev/null || {
  echo "redis-server is not installed (apt-get install redis-server): nothing measured, BENCHMARKS.md left as it is" >&2
  exit 2
}

echo "==> BullMQ $bullmq_version and ioredis $ioredis_version under node"
unset REDIS_BENCH_BULLMQ REDIS_BENCH_BULLMQ_ABSENT
node_dir=$out/node
installed() { # NAME VERSION
  [[ -f $node_dir/node_modules/$1/package.json ]] &&
    grep -q "\"version\": \"$2\"" "$node_dir/node_modules/$1/package.json"
}
if ! command -v node >/dev/null; then
  export REDIS_BENCH_BULLMQ_ABSENT="node is not installed"
elif installed bullmq "$bullmq_version" && installed ioredis "$ioredis_version"; then
  export REDIS_BENCH_BULLMQ=$node_dir/node_modules
elif ! command -v npm >/dev/null; then
  export REDIS_BENCH_BULLMQ_ABSENT="npm is not installed, so BullMQ could not be installed"
else
  mkdir -p "$node_dir"
  printf '{ "private": true, "dependencies": { "bullmq": "%s", "ioredis": "%s" } }\n' \
    "$bullmq_version" "$ioredis_version" > "$node_dir/package.json"
  # No install scripts: msgpackr-extract's native build is optional (msgpackr falls back
  # to JavaScript), and nothing else needs one.
  if log=$(cd "$node_dir" && npm install --no-audit --no-fund --ignore-scripts 2>&1); then
    export REDIS_BENCH_BULLMQ=$node_dir/node_modules
  else
    export REDIS_BENCH_BULLMQ_ABSENT="npm install bullmq@$bullmq_version ioredis@$ioredis_version failed: $(printf '%s' "$log" | tail -n 1)"
  fi
fi
echo "${REDIS_BENCH_BULLMQ:-not measured: ${REDIS_BENCH_BULLMQ_ABSENT:-}}"

echo "==> chasquimq (Redis >= 8.2 only)"
unset REDIS_BENCH_CHASQUIMQ REDIS_BENCH_CHASQUIMQ_ABSENT
server_version=$(redis-server --version)
if ! [[ $server_version =~ v=([0-9]+)\.([0-9]+) ]] ||
  ((BASH_REMATCH[1] < 8 || (BASH_REMATCH[1] == 8 && BASH_REMATCH[2] < 2))); then
  export REDIS_BENCH_CHASQUIMQ_ABSENT="the server is not Redis >= 8.2 (chasquimq needs XACKDEL; REDIS8=1 runs on 8.6): $server_version"
elif log=$(nice cargo build --release --manifest-path adapters/redis/benches/chasquimq/Cargo.toml 2>&1); then
  export REDIS_BENCH_CHASQUIMQ=$target/release/chasquimq-peer
else
  export REDIS_BENCH_CHASQUIMQ_ABSENT="cargo build of adapters/redis/benches/chasquimq failed: $(printf '%s' "$log" | grep -m1 '^error' || printf '%s' "$log" | tail -n 1)"
fi
echo "${REDIS_BENCH_CHASQUIMQ:-not measured: ${REDIS_BENCH_CHASQUIMQ_ABSENT:-}}"

echo "==> what is measured"
head=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
source_commit=$(git log -1 --format=%h -- adapters/redis/src 2>/dev/null || echo unknown)
# The baseline is the harness's data, not what it measures.
if [[ -n $(git status --porcelain -- adapters/redis ':!adapters/redis/benches/peers/baseline.tsv' 2>/dev/null) ]]; then
  state="with uncommitted changes in adapters/redis"
else
  state="adapters/redis as committed"
fi
export REDIS_BENCH_COMMIT="commit $head ($state; adapters/redis/src last changed in $source_commit)"
echo "$REDIS_BENCH_COMMIT"

echo "==> the run"
section=$out/section.md
rm -f "$section"
# A run that failed still writes its section, failures listed; the script then exits with
# the run's status.
status=0
cargo bench -p tally-redis --bench peers || status=$?
[[ -s $section ]] || { echo "no $section: the run wrote nothing" >&2; exit 1; }
if [[ -n ${NO_MARKDOWN:-} ]]; then
  echo "NO_MARKDOWN set: BENCHMARKS.md left as it is; the section is $section"
else
  echo "==> the ${REDIS8:+Redis 8.6 }Redis section of BENCHMARKS.md"
  # The section goes between the markers (benches/report.sh keeps what is between them);
  # without markers, it replaces the heading "## Redis…" up to the next "## " (REDIS8=1:
  # it goes right after the Redis section's end marker), or is appended.
  [[ -f BENCHMARKS.md ]] || echo "# Benchmarks" > BENCHMARKS.md
  awk -v section="$section" -v begin="$begin_marker" -v end="$end_marker" -v after="$after_marker" '
    function emit(   line) {
      print begin
      while ((getline line < section) > 0) print line
      print end
      done = 1
    }
    BEGIN { marked = 0 }
    { lines[NR] = $0; if ($0 == begin) marked = 1 }
    END {
      skip = 0
      for (i = 1; i <= NR; i++) {
        line = lines[i]
        if (marked) {
          if (line == begin) { emit(); skip = 1; continue }
          if (skip && line == end) { skip = 0; continue }
        } else if (after != "") {
          if (!done && line == after) { print line; print ""; emit(); continue }
        } else {
          if (!done && line ~ /^## Redis/) { emit(); print ""; skip = 1; continue }
          if (skip && line ~ /^## /) skip = 0
        }
        if (!skip) print line
      }
      if (!done) { print ""; emit() }
    }' BENCHMARKS.md > "$out/BENCHMARKS.md.new"
  mv "$out/BENCHMARKS.md.new" BENCHMARKS.md
  echo "BENCHMARKS.md: Redis section from $section"
fi
echo "done in $(( $(date +%s) - begin )) s"
exit "$status"
