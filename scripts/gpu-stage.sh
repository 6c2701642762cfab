#!/usr/bin/env bash
# Builds `ant`, the device tests, the library's unit tests (for the kernels) and the
# benches (train_step, step_phases) with the `torch` feature against the libtorch of
# another PyTorch version than scripts/torch-env.sh's 2.9.0 (default 2.11.0+cu130, what
# this project's lent GPU machines hold), and packs them, stripped, with the PyTorch
# peer into one tarball for scripts/gpu-prebuilt.sh on a machine that
# has that PyTorch but no network or Rust (xz: the binaries are 3x smaller packed).
#
#     bash scripts/gpu-stage.sh [TARBALL]      # default .gpu/stage.tar.xz (git-ignored)
#
# ANT_GPU_TORCH picks the version, ANT_GPU_VENV the venv (default /tmp/ant-torch-$version),
# ANT_GPU_TARGET the cargo target directory (default target-gpu/). tch 0.22 is written for
# libtorch 2.9; its version check is bypassed, and the device tests are the check.
set -euo pipefail
cd "$(dirname "$0")/.."
tarball="${1:-.gpu/stage.tar.xz}"
version="${ANT_GPU_TORCH:-2.11.0}"
venv="${ANT_GPU_VENV:-/tmp/ant-torch-$version}"
if ! "$venv/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$version')" 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "torch==$version" numpy
fi
export PATH="$venv/bin:$PATH" LIBTORCH_USE_PYTORCH=1 LIBTORCH_BYPASS_VERSION_CHECK=1
export CARGO_TARGET_DIR="${ANT_GPU_TARGET:-target-gpu}"
unset LIBTORCH LIBTORCH_INCLUDE LIBTORCH_LIB
# On a fresh clone the target directory does not exist until cargo makes it, after the
# list of what it built is already being written there.
mkdir -p "$CARGO_TARGET_DIR"

# The executables cargo built, by target name, from its JSON messages.
built() {
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        lib_tests = m["profile"]["test"] and "lib" in m["target"]["kind"]
        print("kernels" if lib_tests else m["target"]["name"], m["executable"])'
}
{
    cargo build --release --features torch --bin ant --message-format=json
    cargo test --release --features torch --test devices --no-run --message-format=json
    cargo test --release --features torch --lib --no-run --message-format=json
    cargo bench --features torch --bench train_step --no-run --message-format=json
    cargo bench --features torch --bench step_phases --no-run --message-format=json
} | built >"$CARGO_TARGET_DIR/staged.txt"

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
while read -r name path; do
    case "$name" in ant | devices | kernels | train_step | step_phases) strip -o "$stage/$name" "$path" ;; esac
done <"$CARGO_TARGET_DIR/staged.txt"
[ -d ../shared/peer ] && cp -r ../shared/peer "$stage/peer"
mkdir -p "$(dirname "$tarball")"
tar cf - -C "$stage" . | xz -T0 -6 >"$tarball.tmp" && mv "$tarball.tmp" "$tarball"
ls -la "$tarball"
