#!/usr/bin/env bash
# inferscope-cli's bash completion, checked against the program's own --help: every command completes
# after the program's name, every option a command's --help lists completes after it, and after an
# option that takes a value bash completes file names.
#   completion_test.sh COMPLETION_FILE INFERSCOPE_CLI
set -euo pipefail
completion=$1 cli=$2
# shellcheck source=/dev/null
source "$completion"
source "$(dirname "$0")/cli_commands.sh"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# offered WORD...: what the completion offers for the last WORD, after the program's name and the others.
offered() {
  COMP_WORDS=(inferscope-cli "$@")
  COMP_CWORD=$#
  COMPREPLY=()
  _inferscope_cli
  printf '%s\n' "${COMPREPLY[@]}"
}
# expect_offered WANTED WORD...: WANTED is among what `offered WORD...` gives.
expect_offered() {
  local wanted=$1
  shift
  grep -qxF -- "$wanted" <<<"$(offered "$@")" || fail "'inferscope-cli $*<TAB>' does not offer $wanted"
}

[[ $(complete -p inferscope-cli) == *"-o default"* ]] || fail "not registered with -o default (file names after a value option)"

# The commands, read from the commands: section of `inferscope-cli --help`.
commands=$(cli_commands "$cli")
[[ $(wc -w <<<"$commands") -ge 10 ]] || fail "inferscope-cli --help lists only: $commands"
for command in $commands --help --version; do expect_offered "$command" ""; done
[[ $(offered gen) == generate ]] || fail "'inferscope-cli gen<TAB>' gives '$(offered gen)', not generate"

# Each command's options: every name in the first column of `inferscope-cli COMMAND --help`.
for command in $commands; do
  options=$("$cli" "$command" --help | sed -nE 's/^  (-[^ ,]+)(, (-[^ ,]+))?.*/\1 \3/p')
  [[ $command == devices || -n $options ]] || fail "$command --help lists no options"
  for option in $options --help; do expect_offered "$option" "$command" "-"; done
done

# After a value option nothing is offered, so bash completes file names; after a flag, options again.
[[ -z $(offered generate --model "") ]] || fail "'generate --model <TAB>' offers options instead of files"
[[ -z $(offered serve-sim --workload "") ]] || fail "'serve-sim --workload <TAB>' offers options instead of files"
expect_offered --prompt generate --json ""
[[ -z $(offered generate --model m.gguf --bogus-prefix) ]] || fail "an unknown prefix is completed"

((failures == 0)) && echo "bash completion matches inferscope-cli --help"
exit $((failures > 0))
