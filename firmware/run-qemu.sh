#!/usr/bin/env bash
# Builds a firmware image and boots it on QEMU (MPS2 AN386, Cortex-M4), then checks its
# semihosting log. Fails when the build fails, when QEMU does not exit by itself within
# FIRMWARE_TIMEOUT seconds (a hang), when the firmware reports failure, or when an expected
# line is missing from the log.
#
#   run-qemu.sh            the image with a heap (this directory)
#   run-qemu.sh noalloc    the image with no heap (noalloc/); also fails if its symbol
#                          table holds any allocator symbol or any symbol of the `alloc` crate
#
# Needs: rustup target thumbv7em-none-eabihf, qemu-system-arm (Debian: qemu-system-arm),
# and for `noalloc` readelf (Debian: binutils).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
image="${1:-heap}"

timeout_s="${FIRMWARE_TIMEOUT:-60}"
# Both images keep this directory's target directory, whatever the caller's
# CARGO_TARGET_DIR says.
export CARGO_TARGET_DIR="${FIRMWARE_TARGET_DIR:-$here/target}"

case "$image" in
heap)
    dir="$here"
    elf="$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/firmware"
    log="${FIRMWARE_LOG:-$CARGO_TARGET_DIR/qemu.log}"
    # Each line must appear verbatim in the log.
    expected=(
        "latch: boot latch open after 10 ticks"
        "tracking: ready latch open, pending []"
        "tracking: timed out waiting for [sensor]"
        "queue: shutdown refused a put and returned item 20"
        "ledger: accepted=20 buffered=0 in_flight=0 succeeded=13 rejected=4 uncertain=2 abandoned=1 discarded=0"
        "ledger: identity holds"
        "storm: every item taken once, all three ledgers settled"
        "firmware: ok"
    )
    ;;
noalloc)
    dir="$here/noalloc"
    elf="$CARGO_TARGET_DIR/thumbv7em-none-eabihf/release/firmware-noalloc"
    log="${FIRMWARE_LOG:-$CARGO_TARGET_DIR/qemu-noalloc.log}"
    expected=(
        "latch: third waiter refused: every waiter slot is taken (the latch has 2)"
        "latch: boot latch open after 10 ticks, 2 waiters released"
        "tracking: timed out waiting for: sensor"
        "tracking: ready latch open after the stalled counter reported, pending []"
        "failable: link latch failed from an interrupt: crc error in frame 3"
        "queue: FixedQueue<u32, 16, 2> in a static, 416 bytes"
        "queue: ledger accepted=24 buffered=0 in_flight=0 succeeded=17 rejected=4 uncertain=2 abandoned=1 discarded=0"
        "firmware-noalloc: ok"
    )
    ;;
*)
    echo "run-qemu: unknown image '$image' (heap or noalloc)" >&2
    exit 2
    ;;
esac

if ! command -v qemu-system-arm >/dev/null; then
    echo "run-qemu: qemu-system-arm not found (apt-get install -y qemu-system-arm)" >&2
    exit 1
fi

echo "run-qemu: building the $image image"
(cd "$dir" && cargo build --release)

if [ "$image" = noalloc ]; then
    # The image links without a `#[global_allocator]`, which rustc refuses if any crate in
    # it uses `alloc`; check the symbol table as well: no allocator entry points or shims
    # (`__rust_alloc`, `__rust_no_alloc_shim_is_unstable`, ...) and nothing of the `alloc`
    # crate (v0-mangled as `Cs<hash>_5alloc`). The heap image has several of these.
    if ! command -v readelf >/dev/null; then
        echo "run-qemu: readelf not found (apt-get install -y binutils)" >&2
        exit 1
    fi
    alloc_symbols="$(readelf -sW "$elf" \
        | grep -E '__rust_(alloc|dealloc|realloc|alloc_zeroed|alloc_error_handler|no_alloc_shim)|__rg_alloc|Cs[0-9A-Za-z_]+_5alloc' || true)"
    if [ -n "$alloc_symbols" ]; then
        echo "run-qemu: FAIL: the noalloc image links allocator symbols:" >&2
        echo "$alloc_symbols" >&2
        exit 1
    fi
    echo "run-qemu: no allocator symbols in $elf ($(readelf -sW "$elf" | wc -l) symbols checked)"
fi

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
