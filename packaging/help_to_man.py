#!/usr/bin/env python3
"""Writes a program's man page (gzipped, section 1) from its own --help and --version output, so the
page says what the program does. With --commands, each command's `PROGRAM COMMAND --help` follows.
  help_to_man.py --program PATH --name NAME --summary TEXT [--commands] [--see-also NAME] --out NAME.1.gz"""
import argparse
import gzip
import subprocess

import help_text


def roff(text):
    """Text as roff prints it literally: backslashes and hyphens escaped, no leading control dot."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + text if text[:1] in (".", "'") else text


def term(text):
    """A term with its names (a command, options) in bold and its value in italics: "--model, -m VALUE"."""
    words = []
    for word in text.split():
        comma = "," if word.endswith(",") else ""
        word = word.rstrip(",")
        bold = word.startswith("-") or not words
        words.append(("\\fB%s\\fR" if bold else "\\fI%s\\fR") % roff(word) + comma)
    return " ".join(words)


def sections(help, with_headings):
    """Every section ("options:", "commands:") of one --help text, each under its heading or, for a
    command's own options, run together."""
    lines = []
    for section in help.sections:
        if with_headings and section.entries:
            lines.append('.SH "%s"' % section.heading.upper())
        for name, description in section.entries:
            lines += [".TP", term(name), roff(description)]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--program", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--commands", action="store_true")
    parser.add_argument("--see-also", default="")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    version = subprocess.run([args.program, "--version"], check=True, capture_output=True, text=True).stdout
    main_help = help_text.parse(help_text.run_help(args.program))
    lines = ['.\\" Generated from `%s --help` by packaging/help_to_man.py; do not edit.' % args.name,
             '.TH "%s" "1" "" "%s" "User Commands"' % (args.name.upper(), roff(version.strip())),
             ".SH NAME", "%s \\- %s" % (roff(args.name), roff(args.summary)),
             ".SH SYNOPSIS", ".B %s" % roff(args.name), roff(main_help.usage),
             ".SH DESCRIPTION", roff(" ".join(main_help.description) or args.summary[:1].upper() + args.summary[1:] + ".")]
    lines += sections(main_help, with_headings=True)
    if args.commands:
        lines.append('.SH "COMMAND OPTIONS"')
        for command, _ in main_help.section("commands").entries:
            command_help = help_text.parse(help_text.run_help(args.program, command))
            lines += ['.SS "%s %s"' % (roff(args.name), roff(command)),
                      ".B %s" % roff(args.name), roff(command_help.usage)]
            if command_help.description:
                lines += [".PP", roff(" ".join(command_help.description))]
            lines += sections(command_help, with_headings=False)
    if args.see_also:
        lines += [".SH \"SEE ALSO\"", ".BR %s (1)" % roff(args.see_also)]
    # mtime 0 and no file name inside: the same page gives the same bytes (lintian checks this).
    with open(args.out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as out:
        out.write(("\n".join(lines) + "\n").encode())


if __name__ == "__main__":
    main()
