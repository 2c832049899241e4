#!/usr/bin/env bash
# Install the .deb as a person does (apt resolves its Depends), run the installed program
# from PATH, check its menu entry and icons, then remove it and check that nothing of it
# is left. Needs root and Debian or Ubuntu; CI runs it after `packaging/build.py --deb`.
#
#     bash packaging/deb_check.sh [dist/trulymem_<version>_<arch>.deb]
set -euo pipefail
cd "$(dirname "$0")/.."
deb=${1:-$(ls -t dist/trulymem_*.deb | head -n 1)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "deb check: $*" >&2; exit 1; }

apt-get install -y -qq --reinstall "./$deb" >/dev/null
[ "$(command -v trulymem)" = /usr/bin/trulymem ] || fail "trulymem is not on PATH"
owned=$(dpkg -L trulymem)
for file in /usr/share/applications/trulymem.desktop \
        /usr/share/icons/hicolor/scalable/apps/trulymem.svg \
        /usr/share/icons/hicolor/48x48/apps/trulymem.png /opt/trulymem/trulymem; do
    [ -f "$file" ] || fail "$file is missing"
done
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate /usr/share/applications/trulymem.desktop
fi

# The installed program, from PATH, in a home of its own (the smoke test keeps its data in
# a temporary folder; the home keeps anything else it might write away from root's).
(cd "$scratch" && HOME="$scratch" QT_QPA_PLATFORM=offscreen trulymem --smoke-test) \
    > "$scratch/stdout" 2> "$scratch/stderr" \
    || { cat "$scratch/stdout" "$scratch/stderr" >&2; fail "the smoke test failed"; }
if grep -qE "Traceback|Warning:" "$scratch/stderr"; then
    cat "$scratch/stderr" >&2
    fail "the smoke test printed a warning or a traceback"
fi
# A person's own menu entry from the installed program starts the installed program.
HOME="$scratch" XDG_DATA_HOME="$scratch/data" trulymem --install-desktop-entry >/dev/null
grep -qx "Exec=/opt/trulymem/trulymem" "$scratch/data/applications/trulymem.desktop" \
    || fail "the menu entry does not start /opt/trulymem/trulymem"
[ -f "$scratch/data/icons/hicolor/256x256/apps/trulymem.png" ] || fail "no PNG icon"
HOME="$scratch" XDG_DATA_HOME="$scratch/data" trulymem --remove-desktop-entry >/dev/null
[ -z "$(find "$scratch/data" -type f)" ] || fail "--remove-desktop-entry left files"

dpkg -r trulymem 2>&1 >/dev/null | grep -v "directory '/opt' not empty" || true
left=$(while read -r path; do
    # folders other packages share (/usr/share/icons/hicolor/48x48/apps) may stay
    if [ -e "$path" ] && [ ! -d "$path" ] || [ -L "$path" ]; then echo "$path"; fi
done <<< "$owned")
[ -z "$left" ] || fail "removing the package left: $left"
for path in /opt/trulymem /usr/bin/trulymem; do
    [ ! -e "$path" ] && [ ! -L "$path" ] || fail "removing the package left $path"
done
echo "deb check: $deb installs, runs from PATH ($(dpkg-deb -f "$deb" Installed-Size) KiB)," \
    "and removes clean"
