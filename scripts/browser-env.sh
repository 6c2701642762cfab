#!/usr/bin/env bash
# Prepares what tests/web/test_page.mjs needs: Debian's Chromium (/usr/bin/chromium,
# installed with apt-get when missing; needs root) and puppeteer-core from the npm
# registry at the versions of tests/web/package-lock.json (npm ci; no browser download).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "browser-env: installing Debian's chromium" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q chromium >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi
npm ci --prefix "$here/tests/web" --no-audit --no-fund --loglevel=error
"${CHROMIUM:-/usr/bin/chromium}" --version
