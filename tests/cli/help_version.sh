#!/usr/bin/env bash
# kiln --help lists every command on one line each; kiln help COMMAND and kiln COMMAND --help
# print its usage and options; --version prints the project version; unknown commands and
# options stay one-line errors; a compile writes no progress line when stderr is not a terminal.
kiln=$1 root=$2
source "$root/tests/cli/lib/expect.sh"

"$kiln" --help >"$tmp/help" 2>"$tmp/err" || fail "--help exits non-zero"
[[ -s $tmp/err ]] && fail "--help wrote to stderr"
for command in print compile run bench onnx-test onnx-ops export-mlir viz; do
  [[ $(grep -cE "^  $command +[a-z]" "$tmp/help") -eq 1 ]] || fail "--help does not list '$command' on one line"
done

for command in compile run bench; do
  "$kiln" help $command >"$tmp/a" || fail "help $command exits non-zero"
  "$kiln" $command --help >"$tmp/b" || fail "$command --help exits non-zero"
  cmp -s "$tmp/a" "$tmp/b" || fail "help $command and $command --help differ"
  grep -q "^usage: kiln $command " "$tmp/a" || fail "help $command: no usage line"
  grep -qE "^  --threads|^  -o " "$tmp/a" || fail "help $command: no options listed"
done
grep -qE "^  --profile +[a-z]" <("$kiln" bench --help) || fail "bench --help does not describe --profile"

version=$(sed -nE 's/^project\(kiln VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")
"$kiln" --version >"$tmp/version" || fail "--version exits non-zero"
grep -qE "^kiln $version( \(git [0-9a-f]+\))?$" "$tmp/version" || fail "--version: $(cat "$tmp/version"), expected kiln $version"

# Unknown commands and options: one line on stderr, non-zero status.
"$kiln" frobnicate >"$tmp/out" 2>"$tmp/err" && fail "unknown command exits 0"
[[ $(wc -l <"$tmp/err") -eq 1 ]] && grep -q "unknown command 'frobnicate'" "$tmp/err" ||
  fail "unknown command: $(cat "$tmp/err")"
"$kiln" help frobnicate >"$tmp/out" 2>"$tmp/err" && fail "help of an unknown command exits 0"
[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "help of an unknown command: $(cat "$tmp/err")"
expect_error "unknown option" "unknown option --frobnicate" "$kiln" compile "$root/examples/cnn/model.onnx" -o "$tmp/m.kiln" --frobnicate

# Not a terminal: nothing on stderr but errors.
"$kiln" compile "$root/examples/cnn/model.onnx" -o "$tmp/cnn.kiln" >"$tmp/out" 2>"$tmp/err" || fail "compile failed"
[[ -s $tmp/err ]] && fail "compile wrote to a non-terminal stderr: $(cat -A "$tmp/err")"

# A terminal (script(1) provides one): the progress line, rewritten with \r and erased before
# the summary. KILN_PROGRESS_DELAY_MS=0 shows it however fast the compile is.
if command -v script >/dev/null; then
  KILN_PROGRESS_DELAY_MS=0 KILN_CACHE_DIR=$tmp/cache script -qec \
    "'$kiln' compile '$root/examples/cnn/model.onnx' -o '$tmp/tty.kiln'" /dev/null >"$tmp/tty" || fail "compile on a tty"
  grep -qaE $'\rkiln: lowered [0-9]+/[0-9]+ functions' "$tmp/tty" || fail "no 'lowered' progress: $(cat -A "$tmp/tty")"
  grep -qaE $'\rkiln: compiling [0-9]+ kernels with the C compiler' "$tmp/tty" || fail "no 'compiling' progress: $(cat -A "$tmp/tty")"
  grep -qa $'\r\033\[Kwrote ' "$tmp/tty" || fail "progress line not erased before the summary: $(cat -A "$tmp/tty")"
  KILN_PROGRESS_DELAY_MS=0 KILN_CACHE_DIR=$tmp/cache script -qec \
    "'$kiln' compile '$root/examples/cnn/model.onnx' -o '$tmp/tty.kiln'" /dev/null >"$tmp/tty2" || fail "compile on a tty"
  grep -qaE $'\rkiln: [0-9]+ kernels found in the compile cache' "$tmp/tty2" || fail "no cache-hit progress: $(cat -A "$tmp/tty2")"
fi

[[ $failures -eq 0 ]] && echo "help_version: all passed"
exit $((failures > 0))
