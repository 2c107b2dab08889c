#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The code blocks of the documentation, and which of them are commands.

The convention ("Commands in the documentation" in docs/testing.md):

Markdown (README.md, docs/*.md): every code block is fenced and has an
info string.  ```sh blocks are commands, run by tests/test-doc-commands.sh;
further words say what a block needs: ```sh fuse (FUSE, run by
tests/test-doc-commands-fuse.sh), ```sh root (run only as root).  Any
other language (text, console, c, ...) is shown, not run.  Indented code
blocks are refused: a block must say what it is.

POD (the man pages): verbatim paragraphs are commands, except in SYNOPSIS
and where the paragraph before is "=for doc-test text".  "=for doc-test
requires fuse" (or root) says what the next one needs.  pod2man ignores
"=for" paragraphs of formats it does not know, so the markers do not show.
Verbatim paragraphs with only blank lines between them are one block.

Usage:
  doc-blocks.py check FILE...      print what breaks the convention; exit 1
  doc-blocks.py list FILE          one line per block: LINE KIND NEEDS
  doc-blocks.py extract FILE DIR   the commands as DIR/NNN.sh, exactly as
                                   printed, and DIR/index ("NNN LINE NEEDS")
  doc-blocks.py selftest           the extraction's own checks
"""

import os
import re
import sys
import textwrap
import unittest
from collections import namedtuple

# kind: "run" (a command block), "show" (shown only), "syntax" (SYNOPSIS).
Block = namedtuple("Block", "line kind needs text")

NEEDS = ("fuse", "root")
# Languages that suggest a command but are not the convention's word.
NOT_SH = ("bash", "shell", "zsh", "sh-session")


def problem(problems, line, message):
    problems.append((line, message))


# ---- Markdown ----

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
LIST_ITEM = re.compile(r"^( *)([-*+]|\d+[.)])( +|$)")


def _indent(line):
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _strip_indent(line, n):
    """Up to N leading spaces off LINE, as CommonMark does in a fence."""
    i = 0
    while i < n and i < len(line) and line[i] == " ":
        i += 1
    return line[i:]


def _fence_block(lines, i, m, blocks, problems):
    """The fenced block opened at lines[i]; returns the index after it."""
    indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
    close = re.compile(r"^ {0,3}%s{%d,}\s*$" % (re.escape(fence[0]),
                                                 len(fence)))
    j = i + 1
    while j < len(lines) and not close.match(lines[j]):
        j += 1
    if j == len(lines):
        problem(problems, i + 1, "code fence is never closed")
    text = "".join(_strip_indent(l, indent) + "\n" for l in lines[i + 1:j])
    words = info.split()
    if not words:
        problem(problems, i + 1, "fenced block without an info string: "
                "```sh for commands, ```text for anything else")
    elif words[0] in NOT_SH:
        problem(problems, i + 1, "```%s: write ```sh for commands that run, "
                "```text or ```console for ones that do not" % words[0])
    elif words[0] == "sh":
        unknown = [w for w in words[1:] if w not in NEEDS]
        if unknown:
            problem(problems, i + 1, "```sh block needs %s: only %s are known"
                    % (" ".join(unknown), " and ".join(NEEDS)))
        blocks.append(Block(i + 1, "run", tuple(w for w in words[1:]
                                                if w in NEEDS), text))
    else:
        blocks.append(Block(i + 1, "show", (), text))
    return j + 1


def markdown_blocks(lines, allow_indented=False):
    """The code blocks of a Markdown text, and the problems found."""
    blocks, problems = [], []
    i, prev_blank, list_indent = 0, True, None
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
            i = _fence_block(lines, i, m, blocks, problems)
            prev_blank = False
            continue
        if not line.strip():
            prev_blank, i = True, i + 1
            continue
        ind, item = _indent(line), LIST_ITEM.match(line)
        if prev_blank and not item and ind < (list_indent or 0):
            list_indent = None
        if item:
            list_indent = len(item.group(0).expandtabs(4))
        elif prev_blank and ind >= (list_indent or 0) + 4:
            if not allow_indented:
                problem(problems, i + 1, "indented code block: fence it "
                        "with ```sh (commands) or ```text (anything else)")
            while i < len(lines) and (not lines[i].strip() or
                                      _indent(lines[i]) >= (list_indent or 0) + 4):
                i += 1
            prev_blank = not lines[i - 1].strip()
            continue
        prev_blank, i = False, i + 1
    return blocks, problems


# ---- POD ----

def _paragraphs(lines):
    """(first line number, lines) of each paragraph."""
    start, para = None, []
    for n, line in enumerate(lines, 1):
        if line.strip():
            if start is None:
                start = n
            para.append(line)
        elif para:
            yield start, para
            start, para = None, []
    if para:
        yield start, para


def _marker(words, line, problems):
    """The needs of a "=for doc-test" marker, or "text"."""
    if words == ["text"]:
        return "text"
    if len(words) >= 2 and words[0] == "requires" and \
       all(w in NEEDS for w in words[1:]):
        return tuple(words[1:])
    problem(problems, line, "=for doc-test %s: say 'text' or 'requires %s'"
            % (" ".join(words), "|".join(NEEDS)))
    return None


class _PodState:
    def __init__(self):
        self.section = None
        self.marker = None          # (line, "text" | needs) before a block
        self.run = []               # the verbatim paragraphs of one block
        self.blocks, self.problems = [], []

    def close_run(self, lines):
        if not self.run:
            return
        first, last = self.run[0][0], self.run[-1][0] + len(self.run[-1][1])
        text = textwrap.dedent("".join(l + "\n"
                                       for l in lines[first - 1:last - 1]))
        marker = self.marker[1] if self.marker else ()
        if self.section == "SYNOPSIS":
            kind, needs = "syntax", ()
        elif marker == "text":
            kind, needs = "show", ()
        else:
            kind, needs = "run", marker or ()
        self.blocks.append(Block(first, kind, needs, text))
        self.run, self.marker = [], None

    def dangling_marker(self):
        if self.marker:
            problem(self.problems, self.marker[0], "=for doc-test is not "
                    "followed by a verbatim paragraph")
            self.marker = None


def pod_blocks(lines):
    """The verbatim blocks of a POD text, and the problems found."""
    st, in_pod, begin = _PodState(), True, None
    for start, para in _paragraphs(lines):
        first = para[0]
        if not in_pod:
            in_pod = bool(re.match(r"=[a-zA-Z]", first))
            if not in_pod:
                continue
        if first[0] in " \t" and begin is None:
            st.run.append((start, para))
            continue
        st.close_run(lines)
        if begin is not None:
            if re.match(r"=end\b", first):
                begin = None
            continue
        words = " ".join(para).split()
        if words[0] == "=for" and len(words) > 1 and words[1] == "doc-test":
            st.dangling_marker()
            needs = _marker(words[2:], start, st.problems)
            if needs is not None:
                st.marker = (start, needs)
            continue
        st.dangling_marker()
        if words[0] == "=cut":
            in_pod = False
        elif words[0] == "=begin":
            begin = words[1:2]
        elif words[0] == "=head1":
            st.section = " ".join(words[1:])
    st.close_run(lines)
    st.dangling_marker()
    return st.blocks, st.problems


# ---- Files ----

def file_blocks(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if path.endswith(".pod"):
        return pod_blocks(lines)
    if path.endswith(".md"):
        return markdown_blocks(lines)
    sys.exit("doc-blocks: %s: neither .md nor .pod" % path)


def cmd_check(paths):
    bad = 0
    for path in paths:
        for line, message in file_blocks(path)[1]:
            print("%s:%d: %s" % (path, line, message))
            bad += 1
    return 1 if bad else 0


def cmd_list(path):
    blocks, problems = file_blocks(path)
    for b in blocks:
        print(b.line, b.kind, ",".join(b.needs) or "-")
    return 1 if problems else 0


def cmd_extract(path, outdir):
    blocks, problems = file_blocks(path)
    if problems:
        return cmd_check([path])
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "index"), "w") as index:
        for n, b in enumerate((b for b in blocks if b.kind == "run"), 1):
            with open(os.path.join(outdir, "%03d.sh" % n), "w") as f:
                f.write(b.text)
            index.write("%03d %d %s\n" % (n, b.line, ",".join(b.needs) or "-"))
    return 0


# ---- Self-test ----

def md(text, allow_indented=False):
    return markdown_blocks(textwrap.dedent(text).split("\n"), allow_indented)


def pod(text):
    return pod_blocks(textwrap.dedent(text).split("\n"))


class TestMarkdown(unittest.TestCase):
    def test_sh_is_run_exactly_as_printed(self):
        blocks, problems = md("""\
            Intro

            ```sh
            echo "a  b" | tr -s ' '
              indented line
            ```
            """)
        self.assertEqual(problems, [])
        self.assertEqual(blocks, [Block(3, "run", (),
                                        'echo "a  b" | tr -s \' \'\n'
                                        "  indented line\n")])

    def test_text_and_other_languages_are_shown(self):
        blocks, _ = md("```text\nnbdinfo nbd://localhost\n```\n"
                       "```console\n$ ls\n```\n```c\nint x;\n```\n")
        self.assertEqual([b.kind for b in blocks], ["show"] * 3)

    def test_needs(self):
        blocks, problems = md("```sh fuse\nmkdir mnt\n```\n"
                              "```sh root fuse\nlosetup -f\n```\n")
        self.assertEqual(problems, [])
        self.assertEqual([b.needs for b in blocks],
                         [("fuse",), ("root", "fuse")])

    def test_unknown_need_and_bash_are_refused(self):
        _, problems = md("```sh network\nx\n```\n```bash\ny\n```\n")
        self.assertEqual([p[0] for p in problems], [1, 4])

    def test_fence_without_info_string_is_refused(self):
        blocks, problems = md("```\nls\n```\n")
        self.assertEqual(blocks, [])
        self.assertEqual(problems[0][0], 1)

    def test_unclosed_fence(self):
        _, problems = md("```sh\nls\n")
        self.assertIn("never closed", problems[0][1])

    def test_longer_fence_and_tildes(self):
        blocks, _ = md("````sh\n```\n````\n~~~sh\necho ~\n~~~\n")
        self.assertEqual([b.text for b in blocks], ["```\n", "echo ~\n"])

    def test_indented_fence_loses_its_indent(self):
        blocks, _ = md("- item\n\n  ```sh\n  echo hi\n    more\n  ```\n")
        self.assertEqual(blocks[0].text, "echo hi\n  more\n")

    def test_indented_code_block_is_refused(self):
        blocks, problems = md("Text:\n\n      make demo\n    make check\n\n"
                              "End\n")
        self.assertEqual(blocks, [])
        self.assertEqual([p[0] for p in problems], [3])
        self.assertEqual(md("Text:\n\n    make\n", allow_indented=True)[1], [])

    def test_list_continuation_is_not_code(self):
        _, problems = md("- item\n\n    continued paragraph\n\nText\n"
                         "    lazy line, not after a blank one\n")
        self.assertEqual(problems, [])

    def test_code_after_a_list_ends(self):
        _, problems = md("- item\n\nParagraph\n\n    code\n")
        self.assertEqual([p[0] for p in problems], [5])

    def test_inline_backticks_are_not_a_fence(self):
        blocks, problems = md("```not a fence```\n\ntext\n")
        self.assertEqual((blocks, problems), ([], []))


class TestPod(unittest.TestCase):
    def test_verbatim_is_run_synopsis_is_not(self):
        blocks, problems = pod("""\
            =head1 SYNOPSIS

             nbdkit dmcrypt IMAGE

            =head1 EXAMPLES

            Text.

             truncate -s 1M a.img
             ls

            =cut
            """)
        self.assertEqual(problems, [])
        self.assertEqual(blocks, [Block(3, "syntax", (), "nbdkit dmcrypt IMAGE\n"),
                                  Block(9, "run", (),
                                        "truncate -s 1M a.img\nls\n")])

    def test_consecutive_verbatim_paragraphs_are_one_block(self):
        blocks, _ = pod("=head1 X\n\n a\n\n   b\n\nText\n\n c\n")
        self.assertEqual([(b.line, b.text) for b in blocks],
                         [(3, "a\n\n  b\n"), (9, "c\n")])

    def test_markers(self):
        blocks, problems = pod("""\
            =head1 X

            =for doc-test text

             0 <length> crypt

            =for doc-test requires fuse root

             nbdfuse mnt URI &

             more of the same block

            Text

             ls
            """)
        self.assertEqual(problems, [])
        self.assertEqual([(b.kind, b.needs) for b in blocks],
                         [("show", ()), ("run", ("fuse", "root")),
                          ("run", ())])

    def test_bad_and_dangling_markers(self):
        _, problems = pod("=head1 X\n\n=for doc-test maybe\n\n ls\n\n"
                          "=for doc-test text\n\nText\n")
        self.assertEqual([p[0] for p in problems], [3, 7])

    def test_begin_end_and_cut_are_skipped(self):
        blocks, _ = pod("=head1 X\n\n=begin html\n\n <pre>\n\n=end html\n\n"
                        "=cut\n\n not pod\n\n=pod\n\n ls\n")
        self.assertEqual([b.text for b in blocks], ["ls\n"])


def cmd_selftest():
    suite = unittest.TestSuite()
    for case in (TestMarkdown, TestPod):
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    return 0 if result.wasSuccessful() else 1


def main(argv):
    if len(argv) >= 2 and argv[0] == "check":
        return cmd_check(argv[1:])
    if len(argv) == 2 and argv[0] == "list":
        return cmd_list(argv[1])
    if len(argv) == 3 and argv[0] == "extract":
        return cmd_extract(argv[1], argv[2])
    if argv == ["selftest"]:
        return cmd_selftest()
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
