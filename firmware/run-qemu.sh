#!/usr/bin/env bash
# Builds the firmware and boots it on QEMU (MPS2 AN386, Cortex-M4), then checks its
# semihosting log. Fails when the build fails, when QEMU does not exit by itself within
# FIRMWARE_TIMEOUT seconds (a hang), when the firmware reports failure, or when an expected
# line is missing from the log.
#
# Needs: rustup target thumbv7em-none-eabihf, and qemu-system-arm (Debian: qemu-system-arm).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

timeout_s="${FIRMWARE_TIMEOUT:-60}"
# The firmware keeps its own target directory, whatever the caller's CARGO_TARGET_DIR says.
export CARGO_TARGET_DIR="${FIRMWARE_TARGET_DIR:-$here/target}"
elf="$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/firmware"
log="${FIRMWARE_LOG:-$CARGO_TARGET_DIR/qemu.log}"

if ! command -v qemu-system-arm >/dev/null; then
    echo "run-qemu: qemu-system-arm not found (apt-get install -y qemu-system-arm)" >&2
    exit 1
fi

echo "run-qemu: building firmware"
cargo build --release

echo "run-qemu: booting $elf (timeout ${timeout_s}s)"
mkdir -p "$(dirname "$log")"
status=0
timeout --kill-after=5 "$timeout_s" \
    qemu-system-arm -cpu cortex-m4 -machine mps2-an386 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$elf" >"$log" 2>&1 || status=$?
sed 's/^/  | /' "$log"

if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "run-qemu: FAIL: firmware did not exit within ${timeout_s}s (hang)" >&2
    exit 1
fi
if [ "$status" -ne 0 ]; then
    echo "run-qemu: FAIL: firmware exited with status $status" >&2
    exit 1
fi

# Each line must appear verbatim in the log.
expected=(
    "latch: boot latch open after 10 ticks"
    "tracking: ready latch open, pending []"
    "tracking: timed out waiting for [sensor]"
    "queue: shutdown refused a put and returned item 20"
    "ledger: accepted=20 buffered=0 in_flight=0 succeeded=13 rejected=4 uncertain=2 abandoned=1 discarded=0"
    "ledger: identity holds"
    "firmware: ok"
)
missing=0
for line in "${expected[@]}"; do
    if ! grep -qxF -- "$line" "$log"; then
        echo "run-qemu: FAIL: missing line: $line" >&2
        missing=1
    fi
done
if [ "$missing" -ne 0 ]; then
    exit 1
fi
echo "run-qemu: ok (${#expected[@]} expected lines found)"
