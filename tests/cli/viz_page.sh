#!/usr/bin/env bash
# kiln viz writes a self-contained page that headless Chromium loads without script errors,
# drawing examples/cnn's ONNX nodes before and after fusion, the fused kernels with their
# share of run time from `kiln bench --profile`, and highlighting search matches.
kiln=$1 root=$2
source "$root/tests/cli/lib/expect.sh"
model=$root/examples/cnn/model.onnx
chromium=$(command -v chromium || command -v chromium-browser) || {
  echo "FAIL: no chromium (scripts/setup.sh installs it)"
  exit 1
}

# dump_dom URL: the DOM after the page's script ran.
dump_dom() {
  timeout 120 "$chromium" --headless --disable-gpu --no-sandbox --user-data-dir="$tmp/chromium" \
    --virtual-time-budget=5000 --dump-dom "$1" 2>/dev/null
}

"$kiln" bench "$model" --profile --repeat 2 --warmup 1 >"$tmp/profile.txt" || fail "bench --profile"
"$kiln" viz "$model" --profile "$tmp/profile.txt" -o "$tmp/cnn.html" >/dev/null || fail "viz failed"

# Self-contained: nothing fetched (the SVG namespace is a name, not a request).
grep -qiE '<(script|link|img)[^>]+(src|href)=' "$tmp/cnn.html" && fail "the page loads external resources"
grep -oE 'https?://[^"]*' "$tmp/cnn.html" | grep -qv '^http://www.w3.org/2000/svg$' && fail "the page names a URL"

dump_dom "file://$tmp/cnn.html" >"$tmp/dom.html"
grep -q 'data-kiln-viz="ready"' "$tmp/dom.html" || fail "the page did not finish drawing: $(grep -o 'kiln-viz-status">[^<]*' "$tmp/dom.html")"
grep -q 'kiln-viz-status">error' "$tmp/dom.html" && fail "script error: $(grep -o 'kiln-viz-status">[^<]*' "$tmp/dom.html")"
for name in /0/Conv /2/Relu /3/MaxPool /4/Conv /7/GlobalAveragePool /8/Flatten /9/Gemm /10/Softmax; do
  [[ $(grep -o ">$name<" "$tmp/dom.html" | wc -l) -ge 2 ]] || fail "node $name not drawn in both views"
done
grep -q '>before fusion' "$tmp/dom.html" || fail "no before-fusion view"
grep -q '>after fusion (-O3)' "$tmp/dom.html" || fail "no after-fusion view"
grep -q '>nn.conv2d' "$tmp/dom.html" || fail "ops not shown"
grep -q 'Tensor\[(1, 16, 32, 32), float32\]' "$tmp/dom.html" || fail "types not shown"
grep -qE '<g class="group">' "$tmp/dom.html" || fail "no fused group boxes"
grep -qE '>fused_nn_softmax +[0-9.]+% of run time<' "$tmp/dom.html" || fail "no profile share on fused_nn_softmax"

# Search: #search=relu highlights the relu nodes of both views and dims the others.
dump_dom "file://$tmp/cnn.html#search=relu" >"$tmp/search.html"
hits=$(grep -o '<g class="node op hit"' "$tmp/search.html" | wc -l)
[[ $hits -eq 4 ]] || fail "search relu: $hits highlighted nodes, expected 4"
grep -q 'kiln-viz-status">4 of [0-9]* nodes match' "$tmp/search.html" || fail "search relu: no match count"
grep -q '<g class="node op dim"' "$tmp/search.html" || fail "search relu: other nodes not dimmed"

# -O0: every op its own kernel; a profile that is not bench output is a one-line error.
"$kiln" viz "$model" -O 0 -o "$tmp/o0.html" >/dev/null || fail "viz -O 0 failed"
grep -q 'after fusion (-O0)' "$tmp/o0.html" || fail "viz -O 0: no -O0 view"
echo "not a profile" >"$tmp/bad.txt"
expect_error "bad profile" "no profile rows found" "$kiln" viz "$model" --profile "$tmp/bad.txt" -o "$tmp/x.html"
expect_error "no -o" "viz needs the output file" "$kiln" viz "$model"

[[ $failures -eq 0 ]] && echo "viz_page: all passed"
exit $((failures > 0))
