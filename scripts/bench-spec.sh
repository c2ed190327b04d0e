#!/usr/bin/env bash
# Speculative decoding on the demo model (docs/PERFORMANCE.md): for each target level, prompt,
# temperature and proposer, decode tokens/s with and without speculation (k = 4), the acceptance
# rate and the mean acceptance length, through `inferscope-cli generate --json`. Prints a Markdown
# table. The draft-model rows use a `quantize --quant q4` copy of the target as the draft file (so
# they measure what self-quant measures, through a second file and its own KV cache).
#   scripts/bench-spec.sh [MODEL] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-models/SmolLM2-135M-Instruct.Q4_1.gguf}
threads=${2:-2}
cli=build/core/cli/inferscope-cli
draft=build/bench-spec-draft-q4.gguf
[[ -f $draft ]] || "$cli" quantize --model "$model" --quant q4 --out "$draft" --threads "$threads" >/dev/null
prose="Write a short story about a lighthouse keeper."
rename=$(cat resources/prompts/rewrite-code.txt)
comment=$(cat resources/prompts/comment-code.txt)
proposers=("ngram" "draft --draft-model $draft" "self-quant --draft-quant q4" "early-exit --draft-layers 20")

# One generate run: "decode_tokens_per_second acceptance_rate mean_acceptance_length tokens".
run() {
  "$cli" generate --model "$model" --chat "$1" -n 128 --threads "$threads" --json "${@:2}" 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); m=d["metrics"]; s=m.get("spec_decode",{})
print("%.2f %.3f %.2f %d" % (m["decode_tokens_per_second"], s.get("acceptance_rate",0), s.get("mean_acceptance_length",1), len(d["tokens"])))'
}

echo "| target | prompt | temp | proposer | plain t/s | spec t/s | speed-up | acceptance | mean acceptance length | tokens |"
echo "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for quant in native f32; do
  for prompt_name in prose rename comment; do
    case $prompt_name in prose) prompt=$prose ;; rename) prompt=$rename ;; comment) prompt=$comment ;; esac
    for temp in 0 0.8; do
      read -r plain _ _ _ <<<"$(run "$prompt" --quant "$quant" --temp "$temp" --seed 1)"
      for p in "${proposers[@]}"; do
        # shellcheck disable=SC2086
        read -r tps acc len n <<<"$(run "$prompt" --quant "$quant" --temp "$temp" --seed 1 --spec $p)"
        speedup=$(python3 -c "print('%.2f' % ($tps / $plain))")
        echo "| $quant | $prompt_name | $temp | ${p%% *} | $plain | $tps | ${speedup}× | $acc | $len | $n |"
      done
    done
  done
done
