#!/usr/bin/env bash
# Quick-start command 2: install what the tests need and run the whole suite.
#   bash tests/run.sh            # everything (what CI runs: .ci/run)
#   bash tests/run.sh --fast     # everyday tier: no slow end-to-end, browser or real-model tests
#   bash tests/run.sh -k runner  # other arguments go to pytest
# One pytest run, two worker processes (pytest-xdist). For the whole suite, llama.cpp is
# built in the background while the other tests run; the real-model tests come last and
# wait for it (docs/performance.md, "The test suite").
set -euo pipefail
cd "$(dirname "$0")/.."
FAST=0
ARGS=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then FAST=1; else ARGS+=("$arg"); fi
done
# Browser tests drive Debian's Chromium; for the whole suite it is installed when absent (root
# on CI machines), beside the Python install below: both mostly wait on downloads and disk.
CHROMIUM_PID=""
if [ "$FAST" = 0 ] && { ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; }; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing chromium and chromium-driver for the browser tests..."
    (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 &
    CHROMIUM_PID=$!
  else
    echo "warning: chromium/chromedriver not found; browser tests will be skipped"
  fi
fi
VENV="${REASONSCAPE_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
# --no-compile: the byte code of what the tests import is written when they first import it;
# compiling every installed module up front (plotly alone has thousands) is CPU the suite never uses
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -r tests/requirements.txt
# -p no:dash: dash ships a pytest plugin we do not use (it only adds a deprecation warning);
# -rs: each skipped test's one-line reason (a failed llama.cpp build, no Chromium) above the last line
PYTEST=("$VENV/bin/python" -m pytest -q -rs -p no:dash -n "${REASONSCAPE_TEST_WORKERS:-2}" --dist loadfile
        --no-loadscope-reorder)
if [ "$FAST" = 1 ]; then
  exec "${PYTEST[@]}" -m "not slow and not browser and not real_model" tests ${ARGS[@]+"${ARGS[@]}"}
fi
# The real-model tests (tests/test_real_model.py) need llama.cpp's server, which pip builds
# from source once (about 4 minutes of two cores; later runs find it installed). The build
# runs beside the tests; its exit code lands in BUILD/status, which those tests wait for.
# When it fails they skip with its one-line reason.
BUILD="$(mktemp -d "${TMPDIR:-/tmp}/reasonscape-llamacpp.XXXXXX")"
export REASONSCAPE_LLAMA_BUILD_STATUS="$BUILD/status" REASONSCAPE_LLAMA_BUILD_LOG="$BUILD/output"
# setsid (when there): the build is its own process group, so an interrupted run ends all of it.
SETSID=()
if command -v setsid >/dev/null 2>&1; then SETSID=(setsid); fi
${SETSID[@]+"${SETSID[@]}"} bash -c '"$1" -m resolver.llamacpp install >"$2/output" 2>&1
  echo $? >"$2/status.part" && mv "$2/status.part" "$2/status"' build "$VENV/bin/python" "$BUILD" &
BUILDER=$!
export REASONSCAPE_LLAMA_BUILD_PID="$BUILDER"
trap 'kill -TERM -- "-$BUILDER" "$BUILDER" 2>/dev/null; rm -rf "$BUILD"; exit 130' INT TERM
# Chromium's install (started above) must be over before the browser tests start.
if [ -n "$CHROMIUM_PID" ] && ! wait "$CHROMIUM_PID"; then
  echo "warning: could not install chromium; browser tests will be skipped"
fi
set +e
"${PYTEST[@]}" tests ${ARGS[@]+"${ARGS[@]}"}
CODE=$?
# A run that did not need the build (say -k runner) lets it finish, so the environment is
# never left half-installed; nothing is printed after pytest's last line.
wait "$BUILDER"
rm -rf "$BUILD"
exit "$CODE"
