#!/bin/bash
# test_compare_labels.sh -- `pgload compare` labels every back end apart:
# two dir: back ends whose paths end alike are told apart by the shortest
# differing tail of their paths ("dir:a/x", "dir:b/x"), LABEL=BACKEND names
# one, and back ends that would still share a label are refused before
# anything is made.  results.json records what the figures were measured
# with: pgload's and pgiofs's versions, the git commit of the build, the
# kernel, the CPUs and the server's version.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pgiofs_root
W=$(mktempdir)
chmod 755 "$W"
mkdir -p "$W/a/x" "$W/b/x"

# ---- labels that would collide: refused, nothing made ------------------------
bad() { # bad MESSAGE BACKENDS -- pgload compare --backends BACKENDS fails saying MESSAGE
	"$PGLOAD" compare --gen 0.01 --out "$W/bad" --backends "$2" --profiles native \
		>/dev/null 2>"$W/err" && fail "accepted: $2"
	grep -qF -- "$1" "$W/err" || { cat "$W/err"; fail "message for $2: want \"$1\""; }
	[ -e "$W/bad" ] && fail "--out created for $2"
	return 0
}
bad '"tmpfs" and "tmpfs" would both be labelled "tmpfs": give one a label of its own (LABEL=BACKEND, such as fast=tmpfs)' \
	tmpfs,tmpfs
bad "\"dir:$W/a/x\" and \"dir:$W/a/x/\" would both be labelled" "dir:$W/a/x,dir:$W/a/x/"
bad '"m=tmpfs" and "m=dir:'"$W"'/a/x" would both be labelled "m"' "m=tmpfs,m=dir:$W/a/x"
bad '--backends "a/b=tmpfs": LABEL=BACKEND expected' a/b=tmpfs
bad '--backends "=tmpfs": LABEL=BACKEND expected' =tmpfs
echo "ok: colliding labels refused"

# ---- two dir: back ends ending alike, and a labelled tmpfs --------------------
"$PGLOAD" compare --gen 0.005 --backends "dir:$W/a/x,dir:$W/b/x,mem=tmpfs" --profiles native,dbaware \
	--runs 1 --stream-mb 0 --size 128M --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
for cell in dir:a/x/native dir:a/x/dbaware dir:b/x/native dir:b/x/dbaware mem/native mem/dbaware; do
	grep -q "^$cell  *\[1\] " "$W/stdout" || { cat "$W/stdout"; fail "no row for $cell"; }
done
echo "ok: dir:a/x, dir:b/x and mem labelled apart"

commit=unknown
git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 && commit=git
python3 - "$W/out/results.json" "$("$PGLOAD" --version)" "$("$BIN/pgiofs" --version)" \
	"$(uname -r)" "$(nproc)" "$commit" "$TOP" <<'PY' || fail "results.json does not record what was measured with"
import json, re, subprocess, sys
d = json.load(open(sys.argv[1]))
pgload, pgiofs, release, ncpu, commit, top = sys.argv[2:]
labels = [c["label"] for c in d["cells"]]
assert labels == ["dir:a/x/native", "dir:a/x/dbaware", "dir:b/x/native", "dir:b/x/dbaware",
                  "mem/native", "mem/dbaware"], labels
assert [c["backend"] for c in d["cells"]][::2] == ["dir:a/x", "dir:b/x", "mem"]
assert d["settings"]["backends"][2] == "mem=tmpfs", d["settings"]["backends"]
assert d["pgload_version"] == " ".join(pgload.split()[:2]), (d["pgload_version"], pgload)
assert d["pgiofs_version"] == pgiofs.splitlines()[0], (d["pgiofs_version"], pgiofs)
assert release in d["kernel"].split(), d["kernel"]
assert d["cpus"] == int(ncpu), d["cpus"]
major, minor = (int(x) for x in d["server_version"].split(".")[:2])
assert d["server_version_num"] == major * 10000 + minor, (d["server_version_num"], d["server_version"])
g = d["git_commit"]
if commit == "unknown":
    assert g == "unknown", g
else:
    assert re.fullmatch(r"[0-9a-f]{12}(-dirty)?", g), g
    subprocess.run(["git", "-C", top, "cat-file", "-e", g.split("-")[0] + "^{commit}"], check=True)
PY
echo "ok: results.json: versions, commit, kernel, CPUs, server_version_num"
