#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# accuracy.sh VRAMFIT - the engines' accuracy, measured:
#   (a) llama.cpp buffers against real llama.cpp on CPU (bench/accuracy-llamacpp.sh: a sweep of
#       generated GGUF files through ../shared/peers; skipped without node/npm);
#   (b) vLLM and Ollama predictions against shared/reference/measured-public.jsonl, as the
#       table-driven unit tests print them (tests/unit/t_vllm.c, t_ollama.c); vLLM: every row
#       with the release it is mapped to and how, per quantity, medians per rule set and per
#       half, leave-one-out and leave-one-source-out of the fitted constants (issue 20);
#   (c) the training estimator against the public training measurements
#       (bench/accuracy-train.sh), the image/video estimators against the diffusion rows
#       (bench/accuracy-diffusion.sh); both score with bench/score.sh.
# Prints the tables; exits non-zero when a step fails.
bin=${1:-build/vramfit}
dir=$(dirname "$0")
build=$(dirname "$bin")
rc=0
echo "== llama.cpp buffers vs real llama.cpp (CPU oracle)"
sh "$dir/accuracy-llamacpp.sh" "$bin" || rc=1
for t in vllm ollama; do
    echo
    echo "== $t vs measured-public.jsonl"
    if [ -x "$build/tests/t_$t" ]; then
        out=$("$build/tests/t_$t" 2>&1) || rc=1
        printf '%s\n' "$out" | grep -v '^\[' || echo "(the ollama rows are asserted in tests/unit/t_$t.c; see docs/FORMULAS.md F-OLL)"
    else
        echo "missing $build/tests/t_$t (make $build/tests/t_$t)"
        rc=1
    fi
done
echo
echo "== llama.cpp and Ollama rows of measured-public.jsonl by era (bench/accuracy-ollama.py)"
if command -v python3 >/dev/null 2>&1; then
    python3 "$dir/accuracy-ollama.py" "$bin" || rc=1
else
    echo "accuracy-ollama: skipped: python3 not available"
fi
echo
echo "== training (pytorch) vs measured-train-diffusion-public.jsonl, measured-public.jsonl"
sh "$dir/accuracy-train.sh" "$bin" || rc=1
echo
echo "== image/video (comfyui, diffusers) vs measured-train-diffusion-public.jsonl"
sh "$dir/accuracy-diffusion.sh" "$bin" || rc=1
exit $rc
