# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the tests of the dm-integrity images the kernel made
# (tests/data/integrity/MANIFEST, its format at its top), sourced after
# functions.sh.
integrity_data=$srcdir/data/integrity

# field LINE KEY: the value of KEY= in a MANIFEST line.
field ()
{
  tr '\t' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

# manifest_line NAME: the MANIFEST's line of image NAME.
manifest_line ()
{
  grep "^name=$1	" "$integrity_data/MANIFEST" || fail "no $1 in MANIFEST"
}

# The internal hash of a standalone image, as its kernel table names it.
internal_hash ()  # internal_hash LINE
{
  field "$1" table.integrity | sed -n 's/.*internal_hash:\([^: ]*\).*/\1/p'
}

# The oracle's arguments for an image of a MANIFEST line.
oracle_args ()  # oracle_args LINE
{
  local hash key
  if [ "$(field "$1" kind)" = luks2 ]; then
    echo "--luks-key $(field "$1" volume_key)"
    return
  fi
  hash=$(internal_hash "$1")
  [ -n "$hash" ] || fail "$(field "$1" name): no internal_hash in its table"
  echo "--internal-hash $hash"
  key=$(field "$1" key_file)
  [ -z "$key" ] || echo "--key-file $integrity_data/$key"
}

# The "bad OFF LEN ..." lines of OUTPUT as the MANIFEST writes errors:
# OFF+LEN,...
bad_runs ()  # bad_runs OUTPUT
{
  awk '$1 == "bad" { printf "%s%s+%s", n++ ? "," : "", $2, $3 }' "$1"
}

# flip IMAGE BYTE-OFFSET: one bit of that byte inverted.
flip ()
{
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $(( b ^ 1 )))" \
    | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# The byte offset in IMAGE of the first data block, from the oracle's
# geometry of the image of LINE.
first_data_byte ()  # first_data_byte IMAGE LINE
{
  # shellcheck disable=SC2046
  oracle integrity-check "$1" $(oracle_args "$2") > "$tmp/geo.txt" \
    || fail "$1: integrity-check"
  awk '$1 == "geometry" { print $3 + ($5 + $7) * 512 }' "$tmp/geo.txt"
}
