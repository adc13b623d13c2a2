# Sourced by the real-model tests: check_models KILN ROOT DIR runs every model folder
# DIR/<name>/ (model.onnx, inputs/*.npy, optional `tolerance` "RTOL ATOL", optional
# `import_flags` for kiln print and compile, optional `compile_flags` for kiln compile
# alone) through ONNX Runtime, kiln's interpreter and kiln's
# compiled engine, and compares both with ONNX Runtime. It counts failures in $failures.
# With check_static=1 a model must also import with every dimension static.
failures=0
check_static=${check_static:-0}

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

# usage: read_flags DIR FILE... appends the words of each DIR/FILE that exists to the
# caller's `flags` array.
read_flags() {
  local dir=$1 file words
  shift
  for file in "$@"; do
    [[ -f $dir/$file ]] || continue
    read -r -a words <"$dir/$file"
    flags+=("${words[@]}")
  done
}

# usage: check_engine KILN ROOT NAME DIR ENGINE
check_engine() {
  local kiln=$1 root=$2 name=$3 dir=$4 engine=$5 model=$4/model.onnx tolerance=(1e-3 1e-4) flags=()
  [[ -f $dir/tolerance ]] && read -r -a tolerance <"$dir/tolerance"
  read_flags "$dir" compile_flags import_flags
  if [[ $engine == compiled ]]; then
    if ! "$kiln" compile "$model" -o "$dir/model.kiln" "${flags[@]}" >/dev/null; then
      fail "$name ($engine): compile"
      return
    fi
    model=$dir/model.kiln
  fi
  if ! "$kiln" run "$model" --engine "$engine" --inputs "$dir/inputs" --outputs "$dir/$engine" >/dev/null; then
    fail "$name ($engine): run"
  elif /usr/bin/python3 "$root/tests/realmodels/compare.py" "$dir/$engine" "$dir/ort" "${tolerance[@]}"; then
    echo "ok $name ($engine)"
  else
    fail "$name ($engine): outputs differ from ONNX Runtime"
  fi
}

# usage: check_models KILN ROOT DIR
check_models() {
  local kiln=$1 root=$2 dir name
  for dir in "$3"/*/; do
    dir=${dir%/}
    name=$(basename "$dir")
    local flags=()
    read_flags "$dir" import_flags
    if ! "$kiln" print "$dir/model.onnx" "${flags[@]}" >"$dir/ir.txt"; then
      fail "$name: import"
      continue
    fi
    if ((check_static)) && grep -q '?' "$dir/ir.txt"; then
      fail "$name: not fully static"
      continue
    fi
    if ! node "$root/tools/ort/run.js" "$dir/model.onnx" --inputs "$dir/inputs" --outputs "$dir/ort"; then
      fail "$name: ONNX Runtime"
      continue
    fi
    check_engine "$kiln" "$root" "$name" "$dir" interp
    check_engine "$kiln" "$root" "$name" "$dir" compiled
  done
}
