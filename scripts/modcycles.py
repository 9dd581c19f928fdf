"""(From the team's shared tools.) Import cycles among core's top-level modules: a module is core/src/NAME.rs or core/src/NAME/;
an edge A -> B when a file of A names `crate::B`. Prints each cycle (strongly connected group of
two or more modules) and exits 1 when there is one."""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else "core/src"
edges = {}
for dp, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith(".rs"): continue
        rel = os.path.relpath(os.path.join(dp, f), root)
        mod = rel.split(os.sep)[0].removesuffix(".rs")
        if mod in ("lib", "main"): continue
        text = open(os.path.join(dp, f)).read()
        text = re.sub(r"//[^\n]*", "", text)
        for m in re.finditer(r"crate::(\w+)", text):
            if m.group(1) != mod: edges.setdefault(mod, set()).add(m.group(1))
        for m in re.finditer(r"use crate::\{([^}]*)\}", text, re.S):
            for name in re.findall(r"(?:^|,)\s*(\w+)", m.group(1)):
                if name != mod: edges.setdefault(mod, set()).add(name)
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
for c in sccs: print("cycle:", " <-> ".join(c))
print(f"{len(sccs)} cycle(s) among {len(mods)} modules")
sys.exit(1 if sccs else 0)
