# Sourced by the command-line tests (tests/cli/*.sh): a scratch folder $tmp removed on exit,
# a failure count, and the check that a command fails the way kiln promises (exit status 1,
# one line on stderr).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect_error DESCRIPTION PATTERN COMMAND...: exit 1 and one stderr line matching the
# extended regular expression PATTERN.
expect_error() {
  local what=$1 pattern=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local status=$? lines
  lines=$(wc -l <"$tmp/err")
  if [[ $status -ne 1 || $lines -ne 1 ]] || ! grep -qE -- "$pattern" "$tmp/err"; then
    fail "$what: status $status, $lines stderr lines:"
    cat "$tmp/err"
  fi
}
