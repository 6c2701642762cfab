#!/usr/bin/env bash
# Creates (or reuses) the Python venv that builds and tests the Python package
# (python/): maturin, numpy, scikit-learn, pytest, joblib and ray, at the versions of
# python/requirements-test.txt. ANT_PY_VENV picks its folder (default ~/.cache/ant-py).
# Run it (`bash scripts/python-env.sh`) or source it; either way it prints the venv's path.
# Then (maturin, the build backend, must be on PATH):
#     PATH="$ANT_PY_VENV/bin:$PATH" pip install --no-build-isolation ./python && pytest python/tests

ANT_PY_VENV="${ANT_PY_VENV:-$HOME/.cache/ant-py}"
export ANT_PY_VENV

_ant_py_setup() {
    local here req py
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    req="$here/python/requirements-test.txt"
    py="$ANT_PY_VENV/bin/python"
    # Reused when it holds exactly what the requirements file asks for.
    if [ -f "$ANT_PY_VENV/.requirements" ] && cmp -s "$req" "$ANT_PY_VENV/.requirements" \
        && "$py" -c 'import numpy, sklearn, pytest, joblib, ray' 2>/dev/null; then
        echo "python-env: reusing $ANT_PY_VENV" >&2
    else
        echo "python-env: installing $(grep -c '==' "$req") packages into $ANT_PY_VENV (about 1 GB, once)" >&2
        if [ -e "$ANT_PY_VENV" ] && [ ! -f "$ANT_PY_VENV/pyvenv.cfg" ]; then
            echo "python-env: $ANT_PY_VENV exists and is not a venv: choose another ANT_PY_VENV" >&2
            return 1
        fi
        rm -rf "$ANT_PY_VENV"
        python3 -m venv "$ANT_PY_VENV" || return 1
        "$py" -m pip install --quiet --disable-pip-version-check -r "$req" || return 1
        cp "$req" "$ANT_PY_VENV/.requirements"
    fi
    echo "$ANT_PY_VENV"
}

_ant_py_setup
