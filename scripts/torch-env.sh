# Source this file (`source scripts/torch-env.sh`) to build and run `ant` with LibTorch:
#
#     source scripts/torch-env.sh && cargo build --release --features torch
#
# It creates (or reuses) a Python venv holding torch 2.9.0, the version burn-tch 0.22
# expects, and exports what the build and the binary need: the build links against the
# libtorch inside that wheel (LIBTORCH_USE_PYTORCH=1, nothing else is downloaded), and the
# binary finds the wheel's shared libraries through LD_LIBRARY_PATH at run time.
# ANT_TORCH_VENV picks the venv's folder (default ~/.cache/ant-torch).

ANT_TORCH_VENV="${ANT_TORCH_VENV:-$HOME/.cache/ant-torch}"
export ANT_TORCH_VENV

_ant_torch_setup() {
    local py="$ANT_TORCH_VENV/bin/python"
    if ! "$py" -c 'import torch, numpy, sys; sys.exit(torch.__version__.split("+")[0] != "2.9.0")' 2>/dev/null; then
        echo "torch-env: installing torch 2.9.0 into $ANT_TORCH_VENV (about 4 GB, once)" >&2
        python3 -m venv "$ANT_TORCH_VENV" || return 1
        "$py" -m pip install --quiet --disable-pip-version-check torch==2.9.0 numpy || return 1
    fi
    local lib
    lib="$("$py" -W ignore -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')" || return 1
    export PATH="$ANT_TORCH_VENV/bin:$PATH"
    export LIBTORCH_USE_PYTORCH=1
    # The wheel's libtorch is built with the new C++ ABI; torch-sys reads it from Python.
    unset LIBTORCH LIBTORCH_INCLUDE LIBTORCH_LIB
    case ":${LD_LIBRARY_PATH:-}:" in
        *":$lib:"*) ;;
        *) export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
    esac
    echo "torch-env: torch $("$py" -W ignore -c 'import torch; print(torch.__version__)') from $lib" >&2
}

_ant_torch_setup
