# Checks every relative markdown link in README.md and docs/**/*.md: the file exists and,
# for #anchors, a heading with that GitHub-style slug exists in the target file.
import re, sys, pathlib
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.').resolve()
files = [root / 'README.md'] + sorted((root / 'docs').rglob('*.md'))
def strip_code(text):
    return re.sub(r'^```.*?^```', '', text, flags=re.S | re.M)
def slugs(path):
    seen, out = {}, set()
    for line in strip_code(path.read_text()).split('\n'):
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if not m: continue
        s = m.group(2).strip().lower()
        s = re.sub(r'[^\w\- ]', '', s)        # GitHub: drop punctuation (keeps letters, digits, _, -)
        s = s.replace(' ', '-')
        n = seen.get(s, 0); seen[s] = n + 1
        out.add(s if n == 0 else f'{s}-{n}')
    return out
bad = n = 0
for f in files:
    text = strip_code(f.read_text())
    text = re.sub(r'`[^`\n]*`', '', text)    # inline code
    for target in re.findall(r'\]\(([^)\s]+)\)', text):
        if re.match(r'^[a-z]+://|^mailto:', target): continue
        n += 1
        path, _, anchor = target.partition('#')
        dest = (f.parent / path).resolve() if path else f
        if not dest.exists():
            print(f'{f.relative_to(root)}: missing file {target}'); bad += 1; continue
        if anchor and dest.suffix == '.md' and anchor not in slugs(dest):
            print(f'{f.relative_to(root)}: missing anchor {target}'); bad += 1
print(f'{n} relative links checked in {len(files)} files, {bad} broken')
sys.exit(1 if bad else 0)
