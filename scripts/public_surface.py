#!/usr/bin/env python3
"""The crate's public surface, counted as the lines that declare a `pub`
item (fn, struct, enum, trait, const, static, type, mod, use) and the public fields,
in the files of modules a user of the crate can reach (the `internal_mods!` of
src/lib.rs and private modules are left out; so are tests, items that exist only with
the `internals` feature, and macro templates). Prints both totals, then
the files with the most.

    python3 scripts/public_surface.py [--top N]
"""
import os, re, sys

SRC = os.path.join(os.path.dirname(__file__), '..', 'src')


def internal_modules():
    """Top-level modules that are crate-private without the `internals` feature."""
    lib = open(os.path.join(SRC, 'lib.rs')).read()
    block = re.search(r'internal_mods! \{(.*?)\n\}', lib, flags=re.S).group(1)
    names = re.findall(r'^\s*([a-z_]+);', block, flags=re.M)
    names += re.findall(r'^(?:pub\(crate\) )?mod ([a-z_]+);', lib, flags=re.M)
    return set(names)


def private_children(path):
    """Files of the modules `path` declares without `pub` (or inside internal_mods!) and
    re-exports nothing from."""
    text = open(path).read()
    dirname = os.path.dirname(path) if os.path.basename(path) in ('mod.rs', 'lib.rs') else path[:-3]
    names = re.findall(r'^(?:#\[cfg[^\n]*\]\n)?(?:pub\(crate\) )?mod ([a-z_]+);', text, flags=re.M)
    m = re.search(r'internal_mods! \{(.*?)\n\}', text, flags=re.S)
    if m and not path.endswith('lib.rs'):
        names += re.findall(r'^\s*([a-z_]+);', m.group(1), flags=re.M)
    # A private module whose items the parent re-exports is public through them.
    names = [n for n in names if not re.search(r'^\s*pub use (?:self::)?' + n + r'::', text, flags=re.M)]
    out = []
    for n in names:
        for cand in (os.path.join(dirname, n + '.rs'), os.path.join(dirname, n)):
            if os.path.exists(cand):
                out.append(os.path.normpath(cand))
    return out


# The building blocks the count left out (losses, modules, numerics, training).
BLOCKS = ('loss', 'malloc', 'modules', 'normalise', 'ops', 'os', 'train')


def reexported():
    """Module paths (`data/split`) named by a `pub use` anywhere: their items are
    public through it, internal module or not."""
    out = set()
    for d, _, fs in os.walk(SRC):
        for f in fs:
            if not f.endswith('.rs'):
                continue
            p = os.path.join(d, f)
            here = os.path.relpath(d if f in ('mod.rs', 'lib.rs') else p[:-3], SRC)
            here = '' if here == '.' else here
            for path in re.findall(r'^\s*pub use ([a-z_:]+)::', open(p).read(), flags=re.M):
                parts = path.split('::')
                if parts[0] == 'crate':
                    parts = parts[1:]
                elif parts[0] == 'super':
                    parts = here.split('/')[:-1] + parts[1:]
                else:
                    parts = (here.split('/') if here else []) + parts
                if parts and parts[0] not in BLOCKS:
                    out.add('/'.join(parts))
    return out


def hidden_paths():
    shown = reexported()
    names = [n for n in internal_modules() if n in BLOCKS or n not in {s.split('/')[0] for s in shown}]
    hidden = [os.path.normpath(os.path.join(SRC, n)) for n in names]
    hidden += [os.path.normpath(os.path.join(SRC, n + '.rs')) for n in names]
    hidden += [os.path.normpath(os.path.join(SRC, n)) for n in ('main.rs', 'cli')]
    for d, _, fs in os.walk(SRC):
        for f in fs:
            if f.endswith('.rs'):
                hidden += private_children(os.path.join(d, f))
    keep = {os.path.normpath(os.path.join(SRC, m + ext)) for m in shown for ext in ('.rs', '')}
    return tuple(h for h in hidden if h not in keep)


def count():
    hidden = hidden_paths()
    per = {}
    for d, _, fs in os.walk(SRC):
        for f in fs:
            p = os.path.normpath(os.path.join(d, f))
            if not p.endswith('.rs') or p.startswith(hidden):
                continue
            t = open(p).read()
            t = re.sub(r'#\[cfg\(test\)\]\s*mod tests \{.*', '', t, flags=re.S)
            # Items that exist only with `internals`, and macro templates, are not the API.
            t = re.sub(r'#\[cfg\(feature = "internals"\)\]\s*\n\s*pub [^\n]*', '', t)
            t = '\n'.join(l for l in t.split('\n') if '$' not in l)
            items = len(re.findall(r'^\s*pub (?:fn|struct|enum|trait|const|static|type|mod|use|unsafe fn)\b', t, flags=re.M))
            fields = len(re.findall(r'^\s*pub [a-z_0-9]+\s*:', t, flags=re.M))
            per[os.path.relpath(p, os.path.join(SRC, '..'))] = (items, fields)
    return per


if __name__ == '__main__':
    per = count()
    top = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == '--top' else 15
    print(sum(i for i, _ in per.values()), sum(f for _, f in per.values()))
    for p, (i, f) in sorted(per.items(), key=lambda x: -sum(x[1]))[:top]:
        print(f'{i:4} {f:4}  {p}')
