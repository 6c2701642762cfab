#!/usr/bin/env python3
"""Import loops among the top-level modules of src/ (each file or folder under src/ but
lib.rs and main.rs): prints each strongly connected group of modules that import each
other, or "no import loop". A name the crate's root re-exports (`crate::Ant`) counts as an
import of the module that defines it. References in comments and in `mod tests` are ignored.

    python3 scripts/import_loops.py [SRC_DIR]
"""
import os, re, sys
src = sys.argv[1] if len(sys.argv) > 1 else 'src'
mods = {}
for e in os.listdir(src):
    p = os.path.join(src, e)
    if e in ('lib.rs', 'main.rs'): continue
    name = e[:-3] if e.endswith('.rs') else e
    files = [p] if p.endswith('.rs') else [os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith('.rs')]
    if os.path.isdir(p) and os.path.exists(p + '.rs'): pass
    mods.setdefault(name, []).extend(files)
# Names the crate's root re-exports (`pub use model::{Ant, ...}`, `internal_use!(pool::PathPos)`),
# each with the module that defines it: `crate::Ant` is an import of `model`.
reexport = {}
lib = open(os.path.join(src, 'lib.rs')).read()
for m in re.finditer(r'\buse!?\(?\s*([a-z_]+)::([^;)]*)', lib):
    if m.group(1) not in mods: continue
    items = m.group(2)
    items = items[items.index('{') + 1:items.rindex('}')] if '{' in items else items.split('::')[-1]
    for item in items.split(','):
        words = item.split()
        if words: reexport[words[-1].strip('}')] = m.group(1)
g = {m: set() for m in mods}
for m, files in mods.items():
    for f in files:
        text = open(f).read()
        text = re.sub(r'^\s*//.*$', '', text, flags=re.M)
        text = re.sub(r'#\[cfg\(test\)\]\s*mod tests \{.*', '', text, flags=re.S)
        for r in re.findall(r'crate::([A-Za-z_][A-Za-z0-9_]*)', text):
            r = reexport.get(r, r)
            if r in g and r != m: g[m].add(r)
        for block in re.findall(r'use crate::\{([^;]*)\};', text, flags=re.S):
            for r in re.findall(r'(?:^|[,{\s])([a-z_]+)::', block):
                if r in g and r != m: g[m].add(r)
            for r in re.findall(r'(?:^|[,{\s])([A-Z][A-Za-z0-9_]*)\b', block):
                r = reexport.get(r, r)
                if r in g and r != m: g[m].add(r)
# SCCs (Tarjan)
idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in g[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(comp)
sys.setrecursionlimit(10000)
for v in g:
    if v not in idx: sc(v)
for comp in out:
    print('cycle among:', sorted(comp))
    for a in sorted(comp):
        print('  ', a, '->', sorted(x for x in g[a] if x in comp))
print('no import loop' if not out else f'{len(out)} loop(s)')
