#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/doc-blocks.py reads the documentation's blocks as the convention
# says ("Commands in the documentation" in docs/testing.md): its own checks,
# then every document keeps the convention, and the man pages built by
# pod2man show none of the =for doc-test markers.
source "$(dirname "$0")/functions.sh"
requires_cmd pod2man pod2text
scratch

"$PY" "$srcdir/doc-blocks.py" selftest > "$tmp/selftest" 2>&1 \
  || { cat "$tmp/selftest"; fail "doc-blocks.py selftest"; }
tail -n 3 "$tmp/selftest"

docs=(README.md plugin/nbdkit-dmcrypt-plugin.pod filter/nbdkit-dmcrypt-filter.pod
      tools/dmcryptctl.pod)
for d in "$topdir"/docs/*.md; do docs+=("docs/$(basename "$d")"); done
(cd "$topdir" && "$PY" "$srcdir/doc-blocks.py" check "${docs[@]}") \
  || fail "documents break the convention (above)"
echo "ok: ${#docs[@]} documents keep the convention"

for pod in plugin/nbdkit-dmcrypt-plugin.pod filter/nbdkit-dmcrypt-filter.pod \
           tools/dmcryptctl.pod; do
  grep -q '^=for doc-test' "$topdir/$pod" || fail "$pod has no marker to check"
  pod2man "$topdir/$pod" > "$tmp/page.1" || fail "pod2man $pod"
  if grep -n 'doc-test' "$tmp/page.1"; then
    fail "pod2man shows a doc-test marker of $pod (above)"
  fi
  # The verbatim paragraph after a marker is still in the page.
  line=$(awk '/^=for doc-test/ { getline; getline; print; exit }' \
           "$topdir/$pod" | sed 's/^ *//')
  pod2text "$topdir/$pod" > "$tmp/page.txt" || fail "pod2text $pod"
  grep -qF -- "$line" "$tmp/page.txt" \
    || fail "$pod: '$line', after a marker, is not in the page"
  echo "ok: $pod: markers invisible, the paragraphs they mark shown"
done
echo PASS
