#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Which source file of the product calls which, read from the objects.

A file A depends on a file B when A's object leaves a symbol undefined
(nm: U) that B's object defines: A calls a function of B's, or reads a
variable of B's.  A cycle is a set of files that depend on each other,
directly or through a chain: a strongly connected component of that
graph with more than one file.  Calls through function pointers (the
callbacks that carry completions back up) are no edges: nm sees only
names.

Usage (from the top of a built tree):
  layering.py cycles FOLDER...   every cycle that holds a file of one of
                                 the FOLDERs (with their subfolders), one
                                 chain of calls each; exit 1 if any
  layering.py refers A B         every symbol an object of folder A
                                 takes from an object of folder B; exit
                                 1 if any
  layering.py globals            every mutable variable that a header of
                                 the product declares extern; exit 1 if
                                 any
  layering.py selftest           the graph's own checks
"""

import glob
import os
import re
import subprocess
import sys
import unittest

# The folders whose objects make the plugin, the filter and the tools.
PRODUCT = ("common", "crypto", "table", "backend", "dm", "scheduler",
           "luks", "control", "volume", "plugin", "filter", "tools/ctl",
           "tools/trace")
DEFINED = set("TDBRCVWGSitdbrgs")   # nm -P types of a definition


def sources():
    """Every C file of the product, with its object."""
    found = []
    for folder in PRODUCT:
        for src in sorted(glob.glob(os.path.join(folder, "**", "*.c"),
                                    recursive=True)):
            found.append(src)
    return found


def symbols(obj):
    """(defined, undefined) global names of OBJ, as nm -P lists them."""
    out = subprocess.run(["nm", "-P", "-g", obj], check=True,
                         capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind == "U":
            undefined.add(name)
        elif kind in DEFINED and kind not in "wvWV":
            defined.add(name)
    return defined, undefined


def graph(files):
    """FILES: {source: (defined, undefined)}.  Returns {source: {callee:
    sorted symbols}}."""
    owner = {}
    for src, (defined, _) in files.items():
        for name in defined:
            owner.setdefault(name, src)
    edges = {src: {} for src in files}
    for src, (_, undefined) in files.items():
        for name in undefined:
            callee = owner.get(name)
            if callee and callee != src:
                edges[src].setdefault(callee, []).append(name)
    for src in edges:
        for callee in edges[src]:
            edges[src][callee].sort()
    return edges


def components(edges):
    """The strongly connected components of EDGES (Tarjan's), each a
    sorted list, those of more than one file only."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        # Iterative: a chain of calls may be longer than Python's stack.
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    pushed = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def chain(edges, comp):
    """One cycle through COMP's first file: [file, file, ..., first]."""
    start, members = comp[0], set(comp)
    # Breadth first from START back to START, inside the component.
    prev, frontier = {}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges[v]):
                if w not in members:
                    continue
                if w == start:
                    path = [start]
                    while v != start:
                        path.append(v)
                        v = prev[v]
                    path.append(start)
                    path.reverse()
                    return path
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def in_folders(src, folders):
    return any(src == f or src.startswith(f.rstrip("/") + "/")
               for f in folders)


def load():
    files = {}
    missing = []
    for src in sources():
        obj = src[:-2] + ".o"
        if not os.path.exists(obj):
            missing.append(obj)
            continue
        files[src] = symbols(obj)
    if missing:
        sys.exit("layering: not built (run make first): "
                 + " ".join(missing[:5]))
    return files


def cmd_cycles(folders):
    edges = graph(load())
    bad = [c for c in components(edges)
           if any(in_folders(s, folders) for s in c)]
    for comp in bad:
        path = chain(edges, comp)
        print("cycle of %d files: %s" % (len(comp), ", ".join(comp)))
        for a, b in zip(path, path[1:]):
            names = edges[a][b]
            more = " ..." if len(names) > 3 else ""
            print("  %s -> %s (%s%s)" % (a, b, ", ".join(names[:3]), more))
    return 1 if bad else 0


def cmd_refers(a, b):
    edges = graph(load())
    found = 0
    for src in sorted(edges):
        if not in_folders(src, [a]):
            continue
        for callee, names in sorted(edges[src].items()):
            if in_folders(callee, [b]):
                print("%s takes %s from %s" % (src, ", ".join(names), callee))
                found += 1
    return 1 if found else 0


def extern_objects(text):
    """The extern declarations of variables in C header TEXT, each with
    whether what it declares may be written."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    found = []
    for m in re.finditer(r"^\s*extern\s+([^;]*);", text, flags=re.M):
        decl = " ".join(m.group(1).split())
        if "(" in decl:
            continue                    # a function
        decl = re.sub(r"\[[^]]*\]", "", decl)
        star = decl.rfind("*")
        const = decl.rfind("const")
        mutable = const == -1 or (star != -1 and const < star)
        found.append((decl, mutable))
    return found


def cmd_globals():
    bad = 0
    for folder in PRODUCT:
        for header in sorted(glob.glob(os.path.join(folder, "**", "*.h"),
                                       recursive=True)):
            with open(header) as f:
                for decl, mutable in extern_objects(f.read()):
                    if mutable:
                        print("%s: extern %s" % (header, decl))
                        bad += 1
    return 1 if bad else 0


class SelfTest(unittest.TestCase):
    def test_two_files_calling_each_other(self):
        files = {"a.c": ({"f"}, {"g"}), "b.c": ({"g"}, {"f"}),
                 "c.c": ({"h"}, {"f"})}
        edges = graph(files)
        self.assertEqual(components(edges), [["a.c", "b.c"]])
        self.assertEqual(chain(edges, ["a.c", "b.c"]), ["a.c", "b.c", "a.c"])

    def test_chain_of_three(self):
        files = {"a.c": ({"f"}, {"g"}), "b.c": ({"g"}, {"h"}),
                 "c.c": ({"h"}, {"f"}), "d.c": ({"x"}, {"f", "g"})}
        edges = graph(files)
        self.assertEqual(components(edges), [["a.c", "b.c", "c.c"]])
        self.assertEqual(chain(edges, ["a.c", "b.c", "c.c"]),
                         ["a.c", "b.c", "c.c", "a.c"])

    def test_one_way_is_no_cycle(self):
        files = {"a.c": ({"f"}, {"g", "h"}), "b.c": ({"g"}, {"h"}),
                 "c.c": ({"h"}, set())}
        self.assertEqual(components(graph(files)), [])

    def test_own_symbols_are_no_edge(self):
        files = {"a.c": ({"f", "g"}, {"g", "printf"})}
        self.assertEqual(graph(files), {"a.c": {}})

    def test_externs(self):
        text = """
extern struct dmcrypt_params params;
extern const char help[];
extern const char *const names[];
extern const char *prompt;
extern const struct model a, b,
  c;
extern void nbdkit_error (const char *msg, ...)
  __attribute__ ((format (printf, 1, 2)));
/* extern int commented_out; */
"""
        self.assertEqual(extern_objects(text), [
            ("struct dmcrypt_params params", True),
            ("const char help", False),
            ("const char *const names", False),
            ("const char *prompt", True),
            ("const struct model a, b, c", False),
        ])

    def test_folders(self):
        self.assertTrue(in_folders("volume/params/config.c", ["volume"]))
        self.assertFalse(in_folders("volumes/x.c", ["volume"]))
        self.assertTrue(in_folders("dm/gate.c", ["dm/"]))


def main(argv):
    if len(argv) >= 2 and argv[1] == "selftest":
        unittest.main(argv=argv[:1], verbosity=1)
    if len(argv) >= 3 and argv[1] == "cycles":
        return cmd_cycles(argv[2:])
    if len(argv) == 4 and argv[1] == "refers":
        return cmd_refers(argv[2], argv[3])
    if len(argv) == 2 and argv[1] == "globals":
        return cmd_globals()
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
