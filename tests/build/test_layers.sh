#!/bin/bash
# test_layers.sh -- the code matches its map, docs/architecture.md:
#  - every source file of a module is in one layer of the map, and the map
#    names no file that is not there;
#  - a file calls (or reads data of) only files of its own layer or of the
#    layers below, taken from the object files of $BUILD with nm;
#  - no two files of a module call each other in a circle;
#  - a module calls into another module only if the map says it may;
#  - with the include paths the Makefile gives a module (make
#    incflags-MODULE), the public headers of the modules it may call build,
#    and another module's private header, or the public header of a module
#    it may not call, does not.
# Needs the build (make); python3 and nm.
. "$(dirname "$0")/../lib.sh"
BUILD=${BUILD:-build/release}
command -v python3 >/dev/null || fail "python3 is needed"
command -v nm >/dev/null || fail "nm is needed (binutils)"
cd "$TOP" || exit 1
# the modules: every top-level directory with C sources but tests/ and bench/
MODS=$(for d in */; do
	d=${d%/}
	case $d in tests | bench | build | bin) continue ;; esac
	ls "$d"/*.c >/dev/null 2>&1 && echo "$d"
done)
for m in $MODS; do
	ls "$TOP/$BUILD/$m/"*.o >/dev/null 2>&1 || fail "no objects in $BUILD/$m: run make"
done
W=$(mktempdir)
for m in $MODS; do
	make -s --no-print-directory "incflags-$m" BUILD="$BUILD" >"$W/inc-$m" ||
		fail "make incflags-$m failed"
done

python3 - "$BUILD" "$W" "${CC:-cc}" "$(pkg-config --cflags fuse3 libpq jansson liburing liblz4 inih 2>/dev/null)" "$MODS" <<'EOF' || exit 1
import collections, glob, os, re, subprocess, sys

build, work, cc, pkgflags = sys.argv[1:5]
mods = set(sys.argv[5].split())
errors = []
doc = open("docs/architecture.md").read()

# the modules table: | `mod/` | headers | owns | may call |
may = {}
public = {}
for line in doc.splitlines():
    m = re.match(r"\| `(\w+)/` \| (.*?) \| .*? \| (.*?) \|$", line)
    if m:
        may[m.group(1)] = set(re.findall(r"`(\w+)/`", m.group(3)))
        public[m.group(1)] = re.findall(r"`([\w.]+\.h)`", m.group(2))
if set(may) != mods:
    sys.exit("docs/architecture.md: the modules table names %s; the tree has %s"
             % (sorted(may), sorted(mods)))

# the layers of each module: ### `mod/` then | layer | `a.c` `b.c` | what |
layers = {}
cur = None
for line in doc.splitlines():
    h = re.match(r"### `(\w+)/`", line)
    if h:
        cur = h.group(1)
        layers[cur] = []
        continue
    if line.startswith("#"):
        cur = None
    if cur and line.startswith("| ") and not line.startswith("| layer") and "---" not in line:
        cols = [c.strip() for c in line.strip("|").split("|")]
        layers[cur].append((cols[0], re.findall(r"`([\w.]+\.c)`", cols[1])))

layer_of = {}
for mod in may:
    files = sorted(os.path.basename(f) for f in glob.glob(mod + "/*.c"))
    mapped = [f for _, fs in layers.get(mod, []) for f in fs]
    for f in files:
        if mapped.count(f) != 1:
            errors.append("%s/%s: in %d layers of docs/architecture.md (must be in one)"
                          % (mod, f, mapped.count(f)))
    for f in mapped:
        if f not in files:
            errors.append("docs/architecture.md names %s/%s, which does not exist" % (mod, f))
    for i, (_, fs) in enumerate(layers.get(mod, [])):
        for f in fs:
            layer_of[(mod, f)] = i

# the calls, from the objects: symbol -> (module, file) that defines it
defs, refs = {}, collections.defaultdict(set)
for mod in may:
    for f in sorted(glob.glob(mod + "/*.c")):
        o = os.path.join(build, f[:-2] + ".o")
        if not os.path.exists(o):
            errors.append("%s: not built (run make)" % o)
            continue
        key = (mod, os.path.basename(f))
        for line in subprocess.run(["nm", "-P", o], capture_output=True, text=True).stdout.splitlines():
            p = line.split()
            if len(p) >= 2 and p[1] in "TDBRCV":
                defs[p[0]] = key
            elif len(p) >= 2 and p[1] == "U":
                refs[key].add(p[0])
edges = collections.defaultdict(dict)  # a -> {b: a symbol}
for a, names in refs.items():
    for n in sorted(names):
        b = defs.get(n)
        if b and b != a:
            edges[a].setdefault(b, n)

ncalls = 0
for a in sorted(edges):
    for b, sym in sorted(edges[a].items()):
        ncalls += 1
        if a[0] != b[0]:
            if b[0] not in may[a[0]]:
                errors.append("%s/%s calls %s (%s/%s): %s/ may not call %s/"
                              % (a[0], a[1], sym, b[0], b[1], a[0], b[0]))
        elif a in layer_of and b in layer_of and layer_of[b] < layer_of[a]:
            la, lb = layers[a[0]][layer_of[a]][0], layers[b[0]][layer_of[b]][0]
            errors.append("%s/%s (%s) calls %s in %s (%s), a layer above"
                          % (a[0], a[1], la, sym, b[1], lb))

# circles between the files of a module (Tarjan)
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in edges.get(v, {}):
        if w[0] != v[0]:
            continue
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop()
            on.discard(w)
            c.append(w)
            if w == v:
                break
        if len(c) > 1:
            sccs.append(c)
sys.setrecursionlimit(10000)
for v in sorted(layer_of):
    if v not in index:
        visit(v)
for c in sccs:
    errors.append("%s/: these files call each other in a circle: %s"
                  % (c[0][0], " ".join(sorted(f for _, f in c))))

# the include paths: what a module may and may not see
private = {m: [os.path.basename(h) for h in glob.glob(m + "/*_i.h")] for m in may}
nprobes = 0
for mod in sorted(may):
    flags = open(os.path.join(work, "inc-" + mod)).read().split()
    def builds(header):
        src = os.path.join(work, "probe.c")
        open(src, "w").write('#include "%s"\nint probe_layers_%s;\n' % (header, mod))
        r = subprocess.run([cc, "-fsyntax-only", "-D_GNU_SOURCE"] + pkgflags.split() + flags + [src],
                           capture_output=True, text=True)
        return r.returncode == 0
    for other in sorted(may):
        if other == mod:
            continue
        allowed = other in may[mod]
        for h in public[other]:
            nprobes += 1
            if builds(h) != allowed:
                errors.append("%s/ %s include %s, the public header of %s/"
                              % (mod, "cannot" if allowed else "can", h, other))
        for h in private[other]:
            nprobes += 1
            if builds(h):
                errors.append("%s/ can include %s, a private header of %s/" % (mod, h, other))

for e in errors:
    print("FAIL: " + e)
if errors:
    sys.exit(1)
print("ok: %d files in %d layers, %d calls between files, none upwards, no circles; "
      "%d include probes as the map says" % (len(layer_of), sum(len(l) for l in layers.values()),
                                             ncalls, nprobes))
EOF
echo "ok: the code matches docs/architecture.md"
