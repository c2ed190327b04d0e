# Sourced by the packaging tests.
# cli_commands INFERSCOPE_CLI: the commands its --help lists under "commands:", one a line.
cli_commands() {
  "$1" --help | awk '/^commands:/ { listed = 1; next } /^$/ { listed = 0 } listed { print $1 }'
}
