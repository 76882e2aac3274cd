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
# The real-model tests (tests/test_real_model.py) need llama.cpp's server, which pip
# builds from source once (6-9 minutes on two cores; pip caches the wheel). When it
# cannot be built, the reason is printed on one line and those tests skip with it.
"$VENV/bin/python" -m resolver.llamacpp install \
  || echo "warning: the real-model tests will be skipped (reason above)"
# -p no:dash: dash ships a pytest plugin we do not use (it only adds a deprecation warning)
exec "$VENV/bin/python" -m pytest -q -p no:dash tests "$@"
