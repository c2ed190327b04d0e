#!/usr/bin/env python3
"""Writes bash completion for inferscope-cli from its own --help: the commands, then each command's
options; after an option that takes a value, bash completes file names.
  bash_completion.py --program PATH --out FILE"""
import argparse

import help_text

SCRIPT = """# bash completion for inferscope-cli. Generated from `inferscope-cli --help` by
# packaging/bash_completion.py; do not edit.
_inferscope_cli() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W "%(commands)s" -- "$cur"))
    return
  fi
  local options="" with_value=""
  case ${COMP_WORDS[1]} in
%(cases)s
  esac
  # After an option that takes a value, COMPREPLY stays empty: `complete -o default` completes files.
  [[ " $with_value " == *" $prev "* ]] && return
  COMPREPLY=($(compgen -W "$options --help" -- "$cur"))
}
complete -o default -F _inferscope_cli inferscope-cli
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    main_help = help_text.parse(help_text.run_help(args.program))
    commands = [name for name, _ in main_help.section("commands").entries]
    global_options = [n for term, _ in main_help.section("options").entries for n in help_text.option_names(term)]
    cases = []
    for command in commands:
        entries = help_text.parse(help_text.run_help(args.program, command)).section("options").entries
        options = [n for term, _ in entries for n in help_text.option_names(term)]
        with_value = [n for term, _ in entries if help_text.takes_value(term) for n in help_text.option_names(term)]
        cases.append('    %s) options="%s" with_value="%s" ;;' % (command, " ".join(options), " ".join(with_value)))
    with open(args.out, "w") as out:
        out.write(SCRIPT % {"commands": " ".join(commands + global_options), "cases": "\n".join(cases)})


if __name__ == "__main__":
    main()
