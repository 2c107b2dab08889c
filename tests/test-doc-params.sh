#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The documentation lists what the program has: every parameter that
# "nbdkit dmcrypt --help" lists (a key=<VALUE> line of
# volume/params/names.c's help, or an alias named there as "also
# KEY=") has a row in the table of docs/parameters.md and an =item in
# the man page's PARAMETERS, and neither documents a parameter the
# program does not list; README.md's table of the parameters people use
# first names none that the program does not list; README.md's
# "Supported ciphers" paragraph names every IV mode of
# crypto/cipher_spec.c.  The filter's help lists the same parameters
# but file= (the plugin's).  Each --help names every format and only
# the filter's speaks of dmcrypt-KEY=.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit
plugin_built_or_fail
[ -f "$filter_so" ] || fail "$filter_so is not built: run make first"
scratch

# The key=<VALUE> lines and "also KEY=" aliases of a --help section.
help_params ()  # help_params HELP-SECTION
{
  {
    sed -n 's/^\([a-z][a-z0-9-]*\)=.*/\1/p' "$1"
    grep -o 'also [a-z][a-z0-9-]*=' "$1" | sed 's/^also //; s/=$//'
  } | sort -u
}

nbdkit "$plugin" --help > "$tmp/help" 2>&1 || fail "nbdkit --help failed"
# The plugin's part of the help starts after "plugin: dmcrypt".
sed -n '/^plugin: dmcrypt/,$p' "$tmp/help" > "$tmp/plugin-help"
help_params "$tmp/plugin-help" > "$tmp/program"
[ "$(wc -l < "$tmp/program")" -ge 10 ] \
  || fail "found only $(wc -l < "$tmp/program") parameters in --help"

nbdkit --filter="$filter_so" null --help > "$tmp/fhelp" 2>&1 \
  || fail "nbdkit --filter=dmcrypt null --help failed"
sed -n '/^filter: dmcrypt/,/^plugin:/p' "$tmp/fhelp" > "$tmp/filter-help"

# Each front end's --help names every format where it says what dmcrypt
# serves (its description, the third line; the plugin's file=), and says
# nothing true of the other front end alone: dmcrypt-KEY= is the filter's.
sed -n 3p "$tmp/plugin-help" > "$tmp/plugin-what"
sed -n '/^file=/,/^[a-z][a-z0-9-]*=/p' "$tmp/plugin-help" | sed '$d' \
  > "$tmp/plugin-file"
sed -n 3p "$tmp/filter-help" > "$tmp/filter-what"
for format in LUKS1 LUKS2 "plain dm-crypt" BitLocker TrueCrypt/VeraCrypt \
              FileVault2; do
  for what in plugin-what plugin-file filter-what; do
    tr '\n' ' ' < "$tmp/$what" | sed 's/  */ /g' | grep -qF "$format" \
      || fail "--help does not name $format ($what: $(cat "$tmp/$what"))"
  done
done
grep -q 'dmcrypt-KEY=' "$tmp/plugin-help" \
  && fail "the plugin's --help speaks of dmcrypt-KEY=, the filter's alone"
grep -q 'dmcrypt-KEY=' "$tmp/filter-help" \
  || fail "the filter's --help does not say dmcrypt-KEY="
echo "ok: both --help name every format; dmcrypt-KEY= in the filter's alone"
help_params "$tmp/filter-help" > "$tmp/filter-program"
grep -vx file "$tmp/program" > "$tmp/program-but-file"
if cmp -s "$tmp/program-but-file" "$tmp/filter-program"; then
  echo "ok: the filter's --help lists the plugin's parameters but file="
else
  diff "$tmp/program-but-file" "$tmp/filter-program"
  fail "the filter's --help and the plugin's differ (above: < plugin, > filter)"
fi

# The `key=...` in the first cell of each table row under a heading.
table_keys ()  # table_keys FILE HEADING-REGEX
{
  awk -v h="$2" '$0 ~ h { on = 1; next } /^## / { on = 0 }
       on && /^\|/ { split($0, cell, "|"); print cell[2] }' "$1" \
    | grep -o '`[a-z][a-z0-9-]*=' | tr -d '`=' | sort -u
}
table_keys "$topdir/docs/parameters.md" '^## Parameters$' > "$tmp/params-page"
table_keys "$topdir/README.md" '^## The parameters people use first$' \
  > "$tmp/readme"
[ "$(wc -l < "$tmp/readme")" -ge 10 ] \
  || fail "README.md's table names only $(wc -l < "$tmp/readme") parameters"

# The man page: B<key=...> in the =item lines of PARAMETERS.
awk '/^=head1 PARAMETERS/ { on = 1; next } /^=head1/ { on = 0 }
     on && /^=item/' "$topdir/plugin/nbdkit-dmcrypt-plugin.pod" \
  | grep -o 'B<[a-z][a-z0-9-]*=' | sed 's/^B<//; s/=$//' | sort -u \
  > "$tmp/manpage"

problems=0
compare ()  # compare DOCUMENTED WHERE
{
  local missing extra
  missing=$(comm -23 "$tmp/program" "$1" | tr '\n' ' ')
  extra=$(comm -13 "$tmp/program" "$1" | tr '\n' ' ')
  if [ -n "$missing" ]; then
    echo "MISSING from $2: $missing"; problems=$((problems + 1))
  fi
  if [ -n "$extra" ]; then
    echo "NOT A PARAMETER of --help, yet in $2: $extra"
    problems=$((problems + 1))
  fi
  [ -n "$missing$extra" ] || echo "ok: $2 lists the $(wc -l < "$1") parameters of --help"
}
compare "$tmp/params-page" "docs/parameters.md's tables"
extra=$(comm -13 "$tmp/program" "$tmp/readme" | tr '\n' ' ')
if [ -n "$extra" ]; then
  echo "NOT A PARAMETER of --help, yet in README.md's table: $extra"
  problems=$((problems + 1))
else
  echo "ok: README.md's table names $(wc -l < "$tmp/readme") parameters" \
       "of --help"
fi
compare "$tmp/manpage" "the man page's PARAMETERS items"

# IV modes: the names of iv_modes[] in crypto/cipher_spec.c, each written
# `mode` or `mode:...` in the paragraph that starts "Supported ciphers".
grep -o '{ *"[a-z0-9]*", *IV_[A-Z0-9]* *}' "$topdir/crypto/cipher_spec.c" \
  | sed 's/^{ *"\([a-z0-9]*\)".*/\1/' | sort -u > "$tmp/ivmodes"
[ "$(wc -l < "$tmp/ivmodes")" -ge 5 ] \
  || fail "found only $(wc -l < "$tmp/ivmodes") IV modes in crypto/cipher_spec.c"
awk '/^Supported ciphers/ { on = 1 } on && /^$/ { exit } on' \
  "$topdir/README.md" | tr '\n' ' ' > "$tmp/ciphers"
[ -s "$tmp/ciphers" ] || fail "README.md has no \"Supported ciphers\" paragraph"
missing=
while read -r mode; do
  grep -qE "\`$mode(:[^\`]*)?\`" "$tmp/ciphers" || missing="$missing$mode "
done < "$tmp/ivmodes"
if [ -n "$missing" ]; then
  echo "MISSING from README.md's \"Supported ciphers\": IV modes $missing"
  problems=$((problems + 1))
else
  echo "ok: \"Supported ciphers\" names the $(wc -l < "$tmp/ivmodes") IV modes"
fi

[ $problems -eq 0 ] || fail "the documentation and the program disagree (above)"
echo PASS
