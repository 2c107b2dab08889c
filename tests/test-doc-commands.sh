#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every command block of README.md, the man pages and docs/*.md runs as
# printed, in a fresh directory, with the environment "make install" gives
# (tests/doc-functions.sh); blocks that need FUSE are left to
# test-doc-commands-fuse.sh.  Which blocks are commands: "Commands in the
# documentation" in docs/testing.md.
# The quick run gives the commands that make LUKS keyslots a cheap KDF
# (tests/doc-cryptsetup): every block still runs as printed, but no
# luksFormat benchmarks Argon2 for two seconds and no unlock then takes
# as long.  The full run (DMCRYPT_TEST_FULL=1) leaves cryptsetup its own
# defaults, as a reader has them.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/doc-functions.sh"
doc_setup
echo "$doc_variant"

failed=0
while read -r doc; do
  doc_run "$doc" plain
  case $? in 0|3) ;; *) failed=$((failed + 1)) ;; esac
done < <(doc_documents)
[ $failed -eq 0 ] || fail "$failed document(s) have a block that fails"
echo PASS
