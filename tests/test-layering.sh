#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The layers call each other one way (docs/architecture.md), read from
# the built objects by tests/layering.py: no cycle of files (files that
# call each other, directly or through a chain) in the layer both front
# ends share (volume/), the device-mapper core (dm/), the engine
# (scheduler/) or the front ends; neither front end takes a symbol from
# the other's objects, nor the shared layer from either; neither front
# end's sources include the other's headers, nor does the Makefile build
# one from the other's folder; and no header of the product declares a
# mutable variable extern.  Every source file carries an SPDX line.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
requires_cmd nm make
plugin_built_or_fail
[ -f "$filter_so" ] || fail "$filter_so is not built: run make first"
cd "$topdir" || fail "cd $topdir"
scratch

layering () { "$PY" "$srcdir/layering.py" "$@"; }

layering selftest > "$tmp/selftest" 2>&1 \
  || { cat "$tmp/selftest"; fail "layering.py selftest"; }

if ! layering cycles volume dm scheduler plugin filter > "$tmp/cycles"; then
  cat "$tmp/cycles"
  fail "files that call each other (above)"
fi
echo "ok: no cycle of files in volume/, dm/, scheduler/, plugin/, filter/"

for pair in "filter plugin" "plugin filter" "volume plugin" "volume filter"; do
  set -- $pair
  if ! layering refers "$1" "$2" > "$tmp/refers"; then
    cat "$tmp/refers"
    fail "$1/ takes symbols from $2/ (above)"
  fi
done
echo "ok: neither front end takes from the other, nor volume/ from either"

if grep -n '#include "\.\./plugin/' filter/*.[ch] \
   || grep -n '#include "\.\./filter/' plugin/*.[ch]; then
  fail "a front end includes the other's headers (above)"
fi
for fe in PLUGIN FILTER; do
  folder=$(echo "$fe" | tr A-Z a-z)
  srcs=$(make -s --no-print-directory TREE_AS_BUILT=1 \
           --eval="print-srcs: ; @echo \$(${fe}_SRCS)" print-srcs) \
    || fail "make cannot list ${fe}_SRCS"
  [ -n "$srcs" ] || fail "${fe}_SRCS is empty"
  for f in $srcs; do
    case $f in "$folder"/*) ;; *) fail "${fe}_SRCS holds $f" ;; esac
  done
done
echo "ok: each front end is built from its own folder and volume/"

if ! layering globals > "$tmp/globals"; then
  cat "$tmp/globals"
  fail "headers declare mutable globals (above)"
fi
echo "ok: no header declares a mutable global"

# Every source file names its licence (docs/contributing.md); the
# encrypted images and fuzz inputs in tests/data and fuzz/ are data, and
# fuzz/build holds builds.  find, not git: a tarball is checked too.
find . \( -path ./.git -o -path ./tests/data -o -path ./fuzz/build \
          -o -path '*/regressions' -o -path '*corpus*' \) -prune \
     -o -type f \( -name '*.[ch]' -o -name '*.sh' -o -name '*.py' \
                   -o -name '*.gp' -o -name '*.pod' -o -name '*.dict' \
                   -o -name '*.supp' -o -name Makefile -o -path ./.ci/run \
                   -o -path ./tools/lab \) -print > "$tmp/sources"
n=$(grep -c . "$tmp/sources")
[ "$n" -ge 300 ] || fail "only $n source files found"
missing=$(while read -r f; do
            head -n 3 "$f" | grep -q 'SPDX-License-Identifier: ' || echo "$f"
          done < "$tmp/sources")
[ -z "$missing" ] || fail "no SPDX line in: $(echo $missing)"
echo "ok: all $n source files have an SPDX licence line"

# Elsewhere, for the record: cycles this test does not refuse.
layering cycles common crypto table backend luks control tools/ctl \
  tools/trace > "$tmp/elsewhere" || true
n=$(grep -c '^cycle' "$tmp/elsewhere")
[ "$n" -eq 0 ] || report "cycles of files outside the checked folders: $n" \
  "($(sed -n 's/^cycle of [0-9]* files: //p' "$tmp/elsewhere" \
      | sed 's/,.*//' | paste -sd' '))"
echo PASS
