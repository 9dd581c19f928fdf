"""(A copy of the team's shared tool, ../shared/tools/modcycles.py, which the before-stop check runs.) Import cycles among core's top-level modules: a module is core/src/NAME.rs or core/src/NAME/;
an edge A -> B when a file of A names `crate::B`, or a name that lib.rs re-exports from B
(`pub use B::{X, Y}` makes `crate::X` an edge to B). Prints each cycle (strongly connected
group of two or more modules) with one line that makes each edge, and exits 1 when there is one."""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else "core/src"

def strip(text):
    return re.sub(r"//[^\n]*", "", text)

# Names that lib.rs re-exports, and the module each comes from.
reexport = {}
lib = os.path.join(root, "lib.rs")
if os.path.exists(lib):
    for m in re.finditer(r"pub\s+use\s+(\w+)::(\{[^}]*\}|\w+)\s*;", strip(open(lib).read()), re.S):
        src, names = m.group(1), m.group(2).strip("{}")
        for name in re.findall(r"\b(\w+)\b(?:\s+as\s+(\w+))?", names):
            reexport[name[1] or name[0]] = src

mods_on_disk = {f.removesuffix(".rs") for f in os.listdir(root)} - {"lib", "main"}
edges, why = {}, {}
def edge(a, b, where):
    if b == a or b not in mods_on_disk: return
    edges.setdefault(a, set()).add(b); why.setdefault((a, b), where)

for dp, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith(".rs"): continue
        path = os.path.join(dp, f)
        rel = os.path.relpath(path, root)
        mod = rel.split(os.sep)[0].removesuffix(".rs")
        if mod in ("lib", "main"): continue
        for i, line in enumerate(strip(open(path).read()).splitlines(), 1):
            for name in re.findall(r"crate::(\w+)", line):
                edge(mod, reexport.get(name, name), f"{rel}:{i}")
        text = strip(open(path).read())
        for m in re.finditer(r"use crate::\{([^}]*)\}", text, re.S):
            line = text[:m.start()].count("\n") + 1
            for name in re.findall(r"(?:^|,)\s*(\w+)", m.group(1)):
                edge(mod, reexport.get(name, name), f"{rel}:{line}")
mods = set(edges) | {b for v in edges.values() for b in v}
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index: strong(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for v in sorted(mods):
    if v not in index: strong(v)
for c in sccs:
    print("cycle:", " <-> ".join(c))
    for a in c:
        for b in sorted(edges.get(a, ())):
            if b in c: print(f"    {a} -> {b}  ({why[(a, b)]})")
print(f"{len(sccs)} cycle(s) among {len(mods)} modules")
sys.exit(1 if sccs else 0)
