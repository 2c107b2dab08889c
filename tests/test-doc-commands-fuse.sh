#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The documentation's ```sh fuse blocks (nbdfuse, fuse2fs) run as printed,
# with the blocks before them in the same document, as in
# test-doc-commands.sh.  Skips where FUSE cannot mount.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/doc-functions.sh"
doc_setup
requires_fuse
requires_cmd mkfs.ext4 fuse2fs

ran=0 failed=0
while read -r doc; do
  doc_run "$doc" fuse
  case $? in
    0) ran=$((ran + 1)) ;;
    3) ;;
    *) failed=$((failed + 1)) ;;
  esac
done < <(doc_documents)
[ $failed -eq 0 ] || fail "$failed document(s) have a block that fails"
[ $ran -gt 0 ] || fail "no document has a \`\`\`sh fuse block to run"
echo PASS
