#!/usr/bin/env bash
# The floor in one run: instructions and locked instructions per message (callgrind, N
# minus 0, over N, via shared/tools/locked-per-op) for
#   - queue/floor/{ours,flume,kanal,async-channel}: try_put + try_get (+ succeed for ours)
#     on bounded(128), nobody waiting (benches/src/workloads.rs);
#   - the ring engine alone (queue-core/src/engine/buffer/raw/ring.rs): put + get + ending on a counting ring
#     (the kind the queue builds) bound at 128, the unit test
#     `ring::tests::floor_ops_from_env`, built in the bench profile.
#
#   bash benches/floor.sh [N]        # N defaults to 100000; about a minute on 2 cores
#
# Needs valgrind, objdump, addr2line and python3. LOCKED_PER_OP overrides the tool's path.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
tool=${LOCKED_PER_OP:-$PWD/../shared/tools/locked-per-op}
[[ -x $tool || -f $tool ]] || tool=/work/shared/tools/locked-per-op
target=${CARGO_TARGET_DIR:-$PWD/target}
export CARGO_TARGET_DIR=$target
cargo build --profile bench -p benches --bin icount >&2
ring=$(cargo test --profile bench -p tally-queue --lib --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
for workload in queue/floor/ours queue/floor/flume queue/floor/kanal queue/floor/async-channel; do
  python3 "$tool" "$target/release/icount" "$workload" "$n"
done
python3 "$tool" "$ring" floor_ops_from_env "$n"
