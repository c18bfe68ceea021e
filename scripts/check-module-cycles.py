#!/usr/bin/env python3
"""Finds cycles between the modules (files) of every workspace crate.

An edge A -> B means file A names module B through a path: `crate::b::...`,
`super::...` (resolved against A's place in the module tree) or `self::b::...`,
in a `use` or anywhere in code (comments and string literals are ignored). A path
resolves to the deepest module file that exists (`crate::b::C` -> `b.rs` or
`b/mod.rs`). `mod b;` declarations are not edges. Inline modules (`mod tests { .. }`)
belong to their file. Edges are then lifted to siblings (see `lift`): a cycle is a strongly
connected component of more than one module among the children of one module.

Usage: scripts/check-module-cycles.py [workspace root]   (exit 1 on a cycle not allowed)
"""

import os
import re
import sys

# Cycles allowed to stay. Empty, and it must stay empty: the last entry (peregrine-http's
# top-level modules, issue 15) went when the Binance dialect (errors, parameters, keys,
# limits, listen keys) moved into its own module below the app. The checker also fails
# on a stale entry.
ALLOWED = set()


def strip(text):
    """Removes comments, string and char literals (keeps newlines)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not re.match(r"\w", text[i - 1] if i else " "):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12]):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Crate:
    def __init__(self, name, src):
        self.name = name
        self.src = src
        self.files = {}  # module path tuple -> file

    def load(self):
        for root in ("lib.rs", "main.rs"):
            p = os.path.join(self.src, root)
            if os.path.exists(p):
                self.walk((), p, os.path.dirname(p), True)

    def walk(self, path, file, dir_for_children, is_dir_owner):
        if path in self.files:
            return
        self.files[path] = file
        raw = open(file, encoding="utf-8").read()
        # `#[path]` attributes live in the raw text (their value is a string literal).
        for m in re.finditer(r'(?:#\[path\s*=\s*"([^"]+)"\]\s*)?(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', raw):
            custom, name = m.group(1), m.group(2)
            if self.commented(raw, m.start(2)):
                continue
            if custom:
                child = os.path.join(os.path.dirname(file), custom)
                self.walk(path + (name,), os.path.normpath(child), os.path.dirname(child), False)
                continue
            base = dir_for_children if is_dir_owner else os.path.join(dir_for_children, os.path.splitext(os.path.basename(file))[0])
            a = os.path.join(base, name + ".rs")
            b = os.path.join(base, name, "mod.rs")
            if os.path.exists(a):
                self.walk(path + (name,), a, base, False)
            elif os.path.exists(b):
                self.walk(path + (name,), b, os.path.join(base, name), True)

    @staticmethod
    def commented(raw, pos):
        line_start = raw.rfind("\n", 0, pos) + 1
        return "//" in raw[line_start:pos]

    def resolve(self, segs):
        """Deepest existing module for an absolute path (tuple of segments)."""
        for k in range(len(segs), -1, -1):
            if tuple(segs[:k]) in self.files:
                return tuple(segs[:k])
        return ()

    def children(self, path):
        return {p[-1] for p in self.files if len(p) == len(path) + 1 and p[:-1] == path}

    def edges(self):
        out = {p: set() for p in self.files}
        for path, file in self.files.items():
            text = strip(open(file, encoding="utf-8").read())
            inline = inline_modules(text)
            kids = self.children(path)
            paths = []
            # `use` trees, braces expanded.
            for m in re.finditer(r"\buse\s+([^;]+);", text):
                for p in expand(m.group(1)):
                    paths.append((p, m.start()))
            code = re.sub(r"\buse\s+[^;]+;", lambda m: "\n" * m.group(0).count("\n"), text)
            for m in re.finditer(r"(?<![\w:])(\w+)((?:\s*::\s*\w+)+)", code):
                segs = [m.group(1)] + [x.strip() for x in m.group(2).split("::") if x.strip()]
                paths.append((segs, m.start()))
            for segs, pos in paths:
                target = self.target(path, kids, segs, inline_depth(inline, pos))
                if target is not None and target != path:
                    out[path].add(target)
        return out

    def target(self, path, kids, segs, depth):
        head, rest = segs[0], segs[1:]
        if head == "crate":
            return self.resolve(rest)
        if head == "self":
            return None if depth else self.resolve(list(path) + rest)
        if head == "super":
            ups = 1
            while rest and rest[0] == "super":
                ups, rest = ups + 1, rest[1:]
            ups -= depth  # `super` inside an inline module first leaves it
            if ups <= 0:
                return None
            base = list(path[:len(path) - ups]) if ups <= len(path) else []
            return self.resolve(base + rest)
        if head in kids and not depth:
            return self.resolve(list(path) + segs)
        return None


def expand(tree):
    """Paths of a `use` tree: `a::{b, c::{d, e}}` -> [a,b], [a,c,d], [a,c,e]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def go(prefix, t):
        out, depth, start, parts = [], 0, 0, []
        for i, ch in enumerate(t):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(t[start:i])
                start = i + 1
        parts.append(t[start:])
        for part in parts:
            if not part:
                continue
            if "{" in part:
                head, body = part.split("{", 1)
                body = body[: body.rfind("}")]
                segs = [x for x in head.split("::") if x]
                out.extend(go(prefix + segs, body))
            else:
                segs = [x for x in part.split("::") if x and x != "*"]
                segs = [x for x in segs if x != "self"] if segs[-1:] == ["self"] else segs
                out.append(prefix + segs)
        return out

    return [p for p in go([], tree.lstrip(":")) if p]


def inline_modules(text):
    """(start, end) offsets of the bodies of inline `mod name { ... }` blocks."""
    spans = []
    for m in re.finditer(r"\bmod\s+\w+\s*\{", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        spans.append((m.end(), i))
    return spans


def inline_depth(spans, pos):
    return sum(1 for a, b in spans if a <= pos < b)


def sccs(graph):
    index, low, stack, on, result, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            result.append(comp)

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return result


def name(path):
    return "::".join(path) if path else "(crate root)"


def lift(graph):
    """Lifts file edges to edges between siblings: A -> B becomes a -> b where a and b
    are the children of the lowest common ancestor of A and B that contain them. An
    edge between a module and its own ancestor or descendant (re-exports, `super::*`
    of a parent) is structure, not a dependency cycle, and is dropped."""
    lifted = {}
    for a, targets in graph.items():
        for b in targets:
            k = 0
            while k < min(len(a), len(b)) and a[k] == b[k]:
                k += 1
            if k == len(a) or k == len(b):
                continue
            x, y = a[: k + 1], b[: k + 1]
            lifted.setdefault(x, set()).add(y)
            lifted.setdefault(y, set())
    return lifted


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    crates_dir = os.path.join(root, "crates")
    found, bad = set(), []
    for c in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, c, "src")
        if not os.path.isdir(src):
            continue
        crate = Crate(c, src)
        crate.load()
        files = crate.edges()
        graph = lift(files)
        for comp in sccs(graph):
            if len(comp) < 2:
                continue
            key = (c, frozenset(name(p) for p in comp))
            found.add(key)
            members = set(comp)
            evidence = sorted(
                f"{name(a)} -> {name(b)}"
                for a in files
                for b in files[a]
                if any(a[: len(m)] == m for m in members)
                and any(b[: len(m)] == m for m in members)
                and not any(a[: len(m)] == m and b[: len(m)] == m for m in members)
            )
            tag = "allowed (must go)" if key in ALLOWED else "CYCLE"
            print(f"{tag}: {c}: {{{', '.join(sorted(key[1]))}}}")
            for e in evidence:
                print(f"    {e}")
            if key not in ALLOWED:
                bad.append(key)
    stale = [k for k in ALLOWED if k not in found]
    for c, mods in sorted(stale, key=str):
        print(f"STALE allowlist entry (the cycle is gone: remove it): {c}: {sorted(mods)}")
    if bad or stale:
        sys.exit(1)
    print("module cycles: none")


if __name__ == "__main__":
    main()
