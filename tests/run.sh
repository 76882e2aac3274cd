#!/usr/bin/env bash
# Quick-start command 2: install what the tests need and run the whole suite.
#   bash tests/run.sh            # everything (what CI runs: .ci/run)
#   bash tests/run.sh --fast     # everyday tier: no slow end-to-end, browser or real-model tests
#   bash tests/run.sh -k runner  # other arguments go to pytest
# One pytest run, two worker processes (pytest-xdist). For the whole suite, llama.cpp is
# built, vLLM's CPU build and Chromium installed in the background while the other tests
# run; the real-model and browser tests wait for them (docs/performance.md, "The test suite").
set -euo pipefail
cd "$(dirname "$0")/.."
# Byte code is written: an environment that sets PYTHONDONTWRITEBYTECODE (some container images do)
# would otherwise have every worker, script and vLLM start compile the same sources again, and
# pytest rewrite every test module's asserts in each worker (docs/performance.md, "Byte code").
# It is written beside the sources, inside this clone and its virtualenvs (ignored by git).
unset PYTHONDONTWRITEBYTECODE
FAST=0
ARGS=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then FAST=1; else ARGS+=("$arg"); fi
done
# For the whole suite three installs run in the background, each writing its exit code to a
# status file the tests that need it wait for (tests/conftest.py): Debian's Chromium for the
# browser tests (when absent; root on CI machines), started first because apt mostly waits on
# downloads and disk, vLLM's CPU build next (its own virtualenv), and llama.cpp's build for the
# real-model tests once the project's virtualenv is installed, below.
SETUP=""
CHROMIUM=""
BUILDER=""
VLLM=""
if [ "$FAST" = 0 ]; then
  SETUP="$(mktemp -d "${TMPDIR:-/tmp}/reasonscape-setup.XXXXXX")"
  # an interrupted run ends its background jobs (each its own process group, via setsid) and its files
  trap 'for job in $BUILDER $VLLM $CHROMIUM; do kill -TERM -- "-$job" "$job" 2>/dev/null; done; rm -rf "$SETUP"; exit 130' INT TERM
  SETSID=()
  if command -v setsid >/dev/null 2>&1; then SETSID=(setsid); fi
  if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
      echo "installing chromium and chromium-driver for the browser tests (in the background)..."
      export REASONSCAPE_CHROMIUM_STATUS="$SETUP/chromium-status"
      ${SETSID[@]+"${SETSID[@]}"} bash -c '{ apt-get update -qq && apt-get install -y -qq chromium chromium-driver; } \
        >"$1/chromium-output" 2>&1; echo $? >"$1/chromium-status.part" && mv "$1/chromium-status.part" "$1/chromium-status"' \
        chromium "$SETUP" &
      CHROMIUM=$!
      export REASONSCAPE_CHROMIUM_PID="$CHROMIUM"
    else
      echo "warning: chromium/chromedriver not found; browser tests will be skipped"
    fi
  fi
  # The real-vLLM tests (tests/test_real_vllm.py) need vLLM's CPU build, pinned, in a virtualenv of
  # its own (.venv-vllm/: its torch and transformers pins never touch the project's), and SmolLM2
  # converted for it: tests/install-vllm.sh, a few minutes the first time (docs/vllm.md).
  export REASONSCAPE_VLLM_VENV="${REASONSCAPE_VLLM_VENV:-$PWD/.venv-vllm}"
  export REASONSCAPE_VLLM_INSTALL_STATUS="$SETUP/vllm-status" REASONSCAPE_VLLM_INSTALL_LOG="$SETUP/vllm-output"
  # Started before the project's own install (it has a virtualenv of its own): pip's install below
  # keeps one core busy, so the other unpacks torch and vLLM meanwhile. At nice 10, as the build is:
  # later its CPU goes where the test workers leave room.
  ${SETSID[@]+"${SETSID[@]}"} bash -c 'nice -n 10 bash tests/install-vllm.sh "$1" >"$2/vllm-output" 2>&1
    echo $? >"$2/vllm-status.part" && mv "$2/vllm-status.part" "$2/vllm-status"' vllm "$REASONSCAPE_VLLM_VENV" "$SETUP" &
  VLLM=$!
  export REASONSCAPE_VLLM_INSTALL_PID="$VLLM"
fi
VENV="${REASONSCAPE_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
# --no-compile: the byte code of what the tests import is written when they first import it;
# compiling every installed module up front (plotly alone has thousands) is CPU the suite never uses
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile -r tests/requirements.txt; then
  # no test will run: the vLLM install stops (without its stamp, the next run installs again);
  # apt is left to finish, since a stopped dpkg leaves its lock behind
  if [ -n "$VLLM" ]; then kill -TERM -- "-$VLLM" "$VLLM" 2>/dev/null; fi
  wait $CHROMIUM $VLLM
  rm -rf "$SETUP"
  exit 1
fi
# -p no:dash: dash ships a pytest plugin we do not use (it only adds a deprecation warning);
# -rs: each skipped test's one-line reason (a failed llama.cpp build, no Chromium) above the last line;
# tmp_path_retention_policy=failed: a run that passes deletes its temporary folders (the simulated
# study and the real-model runs are a few GB a run), one that fails keeps them to look at
PYTEST=("$VENV/bin/python" -m pytest -q -rs -p no:dash -n "${REASONSCAPE_TEST_WORKERS:-2}" --dist loadfile
        --no-loadscope-reorder -o tmp_path_retention_policy=failed)
if [ "$FAST" = 1 ]; then
  exec "${PYTEST[@]}" -m "not slow and not browser and not real_model" tests ${ARGS[@]+"${ARGS[@]}"}
fi
# The real-model tests (tests/test_real_model.py) need llama.cpp's server, which pip builds
# from source once (about 2 minutes of two cores; later runs find it installed). The build
# runs beside the tests; its exit code lands in a status file, which those tests wait for.
# When it fails they skip with its one-line reason.
export REASONSCAPE_LLAMA_BUILD_STATUS="$SETUP/status" REASONSCAPE_LLAMA_BUILD_LOG="$SETUP/output"
# At a lower CPU priority (nice 10): the test workers come first, the build takes what they
# leave (docs/performance.md, "The test suite").
${SETSID[@]+"${SETSID[@]}"} bash -c 'nice -n 10 "$1" -m resolver.llamacpp install >"$2/output" 2>&1
  echo $? >"$2/status.part" && mv "$2/status.part" "$2/status"' build "$VENV/bin/python" "$SETUP" &
BUILDER=$!
export REASONSCAPE_LLAMA_BUILD_PID="$BUILDER"
set +e
"${PYTEST[@]}" tests ${ARGS[@]+"${ARGS[@]}"}
CODE=$?
# A run that did not need the installs (say -k runner) lets them finish, so the machine is
# never left half-installed; nothing is printed after pytest's last line.
wait $BUILDER $VLLM $CHROMIUM
rm -rf "$SETUP"
exit "$CODE"
