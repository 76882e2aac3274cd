#!/usr/bin/env bash
# Quick-start command 2: install what the tests need and run the whole suite.
#   bash tests/run.sh            # everything
#   bash tests/run.sh -k runner  # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${REASONSCAPE_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r tests/requirements.txt
# Browser tests drive Debian's Chromium; install it when absent (root on CI machines).
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium and chromium-driver for the browser tests..."
    (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 \
      || echo "warning: could not install chromium; browser tests will be skipped"
  else
    echo "warning: chromium/chromedriver not found; browser tests will be skipped"
  fi
fi
# -p no:dash: dash ships a pytest plugin we do not use (it only adds a deprecation warning)
exec "$VENV/bin/python" -m pytest -q -p no:dash tests "$@"
