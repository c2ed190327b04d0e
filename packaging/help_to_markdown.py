#!/usr/bin/env python3
"""Writes docs/CLI.md's option reference from inferscope-cli's own --help, as the man page is written:
every command's usage and options, the options most commands share listed once. The reference sits
between two marker lines in the file; the rest of the file is left as it is.
  help_to_markdown.py --program PATH --doc docs/CLI.md           rewrites the reference in place
  help_to_markdown.py --program PATH --doc docs/CLI.md --check   exits 1 when it is not what --help says"""
import argparse
import os
import sys
import tempfile

import help_text

BEGIN = "<!-- options reference: generated from --help by packaging/help_to_markdown.py; do not edit -->"
END = "<!-- end of the options reference -->"
SHARED_BY = 3  # an option this many commands take is listed once, with the commands that take it


def cell(text):
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def option_table(entries):
    lines = ["| option | what it does |", "| --- | --- |"]
    lines += ["| `%s` | %s |" % (term, cell(description)) for term, description in entries]
    return lines


def reference(program):
    main_help = help_text.parse(help_text.run_help(program))
    commands = [(name, summary) for name, summary in main_help.section("commands").entries]
    helps = {name: help_text.parse(help_text.run_help(program, name)) for name, _ in commands}
    takers = {}
    for name, _ in commands:
        for term, description in helps[name].section("options").entries:
            takers.setdefault((term, description), []).append(name)
    shared = [key for key, names in takers.items() if len(names) >= SHARED_BY]
    lines = [BEGIN, "", "## Every option", "",
             "What `inferscope-cli COMMAND --help` prints, command by command. The options that %d or more "
             "commands take are listed once, at the end, with the commands that take them." % SHARED_BY]
    for name, summary in commands:
        help = helps[name]
        lines += ["", "### %s" % name, "", cell(summary[:1].upper() + summary[1:]) + ".", "", "```", "inferscope-cli " + help.usage, "```"]
        for text in help.description:
            lines += ["", text]
        own = [(t, d) for t, d in help.section("options").entries if (t, d) not in shared]
        if own:
            lines += [""] + option_table(own)
    lines += ["", "### Options shared by several commands", "",
              "| option | what it does | commands |", "| --- | --- | --- |"]
    lines += ["| `%s` | %s | %s |" % (term, cell(description), ", ".join(takers[(term, description)]))
              for term, description in shared]
    return "\n".join(lines + ["", END])


def with_reference(text, generated):
    """`text` with its reference replaced (or appended, the first time)."""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        return head + generated + tail
    return text.rstrip("\n") + "\n\n" + generated + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True)
    parser.add_argument("--doc", required=True)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with open(args.doc, encoding="utf-8") as f:
        text = f.read()
    updated = with_reference(text, reference(args.program))
    if args.check:
        if updated != text:
            print("%s: its options reference differs from `%s COMMAND --help`; run "
                  "scripts/cli-reference.sh to write it again" % (args.doc, os.path.basename(args.program)))
            return 1
        return 0
    # Written atomically: a temporary file beside it, then renamed over it.
    folder = os.path.dirname(os.path.abspath(args.doc))
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, delete=False) as f:
        f.write(updated)
    os.replace(f.name, args.doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
