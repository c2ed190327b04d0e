"""Reads a program's --help text (inferscope-cli's or Qt's layout) into its parts, for the man pages
and the bash completion generated from it (help_to_man.py, bash_completion.py)."""
import re
import subprocess
from dataclasses import dataclass, field

ENTRY = re.compile(r"^  (\S.*?)(?:\s{2,}(\S.*))?$")  # "  term   description" (2-space indent)
CONTINUATION = re.compile(r"^\s{3,}(\S.*)$")         # a wrapped description, indented deeper


@dataclass
class Section:
    heading: str                                  # "options", "commands", "arguments"
    entries: list = field(default_factory=list)   # [term, description]


@dataclass
class Help:
    usage: str = ""                               # the usage line after "usage: PROGRAM"
    description: list = field(default_factory=list)
    sections: list = field(default_factory=list)

    def section(self, heading):
        return next((s for s in self.sections if s.heading == heading), Section(heading))


def run_help(program, *args):
    """The stdout of `program args... --help`."""
    return subprocess.run([program, *args, "--help"], check=True, capture_output=True, text=True).stdout


def parse(text):
    help = Help()
    for line in text.splitlines():
        if not line.strip():
            continue
        if re.match(r"(?i)usage:", line):
            help.usage = line.split(None, 2)[2] if len(line.split()) > 2 else ""
        elif help.usage and not help.sections and not help.description and CONTINUATION.match(line):
            help.usage += " " + CONTINUATION.match(line).group(1)  # a wrapped usage line
        elif not line.startswith(" ") and line.endswith(":"):
            help.sections.append(Section(line[:-1].lower()))
        elif help.sections and help.sections[-1].entries and CONTINUATION.match(line):
            help.sections[-1].entries[-1][1] += " " + CONTINUATION.match(line).group(1)
        elif help.sections and ENTRY.match(line):
            term, description = ENTRY.match(line).groups()
            help.sections[-1].entries.append([term, description or ""])
        else:
            help.description.append(line.strip())
    return help


def option_names(term):
    """The option names a term spells: "--model, -m VALUE" -> ["--model", "-m"]; "-h, --help" too."""
    return [word.rstrip(",") for word in term.split() if word.startswith("-")]


def takes_value(term):
    """Whether the option is followed by a value ("VALUE" or Qt's "<PATH>")."""
    return any(not word.startswith("-") for word in term.split())
