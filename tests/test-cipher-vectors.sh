#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The known answers of tests/unit/test-cipher come from the oracle:
# tests/cipher-vectors.py run on tests/oracle.py prints exactly the
# digest table of tests/unit/cipher-vectors.h, and the C code's own
# digests (test-cipher --print-digests) are the same.  A change to the
# oracle's ciphers, IV generators or sector loop that moves any vector
# fails here.
# front-end: none
source "$(dirname "$0")/functions.sh"
requires_oracle
requires_cmd openssl
bin="$topdir/tests/unit/test-cipher"
[ -x "$bin" ] || fail "$bin is not built: run make first"
scratch

"$PY" "$srcdir/cipher-vectors.py" > "$tmp/made" || fail "cipher-vectors.py"
sed -n '/digest_vectors\[\] = {/,/^};/p' "$srcdir/unit/cipher-vectors.h" \
  | sed '1d;$d' > "$tmp/header"
[ -s "$tmp/header" ] || fail "no digest_vectors in cipher-vectors.h"
expect_same "the oracle's digests, the header's" "$tmp/header" "$tmp/made"
"$PY" "$srcdir/cipher-vectors.py" --compare "$bin" \
  || fail "the C code's digests differ from the oracle's"
echo "PASS"
