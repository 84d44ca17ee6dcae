#!/bin/bash
# test_compare_page.sh -- the page of `pgload compare` (index.html), opened
# in a real headless browser (Debian's chromium): it renders, opening with
# the verdict lines (what was compared, the best of each figure, faster or
# slower than the baseline, or not separated from it), then the charts as
# inline SVG (a dot per run over the bars, the baseline's and the noisy rows
# marked and in the legend, a colour of its own for every I/O class; the
# commit latency over the import, a panel per cell), then the tables; no
# console error; nothing fetched from elsewhere (the page works offline);
# and a screenshot of it is a real picture, not a blank page.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pgiofs_root
command -v chromium >/dev/null || skip "no chromium (scripts/install-deps.sh installs it)"
W=$(mktempdir)
chmod 755 "$W"
mkdir "$W/d" "$W/home"

# browser ARGS... -- headless chromium with a profile of its own under $W,
# no network (every host name fails), its stderr in $W/browser.err
browser() {
	HOME=$W/home timeout 120 chromium --headless=new --no-sandbox --disable-gpu \
		--user-data-dir="$W/profile" --host-resolver-rules="MAP * ~NOTFOUND" \
		--enable-logging=stderr --v=0 "$@" 2>"$W/browser.err"
}
# console_errors -- the console errors and uncaught exceptions the browser logged
console_errors() { grep -E 'Uncaught|ERROR:CONSOLE|:CONSOLE\(' "$W/browser.err"; }

# the check itself catches an error in a page: a script calling nothing
echo '<!DOCTYPE html><html><body><script>no_such_function();</script></body></html>' >"$W/broken.html"
browser --dump-dom "file://$W/broken.html" >/dev/null || fail "chromium failed on a broken page"
console_errors >/dev/null || { cat "$W/browser.err"; fail "the console check misses an uncaught exception"; }
echo "ok: the console check sees an uncaught exception"

"$PGLOAD" compare --gen 0.005 --backends "dir:$W/d,tmpfs" --profiles native,dbaware --runs 2 \
	--oltp 1 --stream-mb 0 --size 128M --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
page=$W/out/index.html
# (an SVG's xmlns names its namespace, it fetches nothing)
outside='<script|<img|<link|<iframe|src=|url\(|https?://'
sed 's/xmlns="[^"]*"//g' "$page" | grep -qiE "$outside" &&
	fail "index.html refers to something outside it: $(sed 's/xmlns="[^"]*"//g' "$page" | grep -oiE "$outside" | sort -u)"

browser --dump-dom "file://$page" >"$W/dom.html" || { cat "$W/browser.err"; fail "chromium could not open the page"; }
if console_errors >"$W/console"; then
	cat "$W/console"
	fail "console errors on the page"
fi
python3 - "$W/dom.html" <<'PY' || fail "the page as the browser rendered it"
import html.parser, re, sys
dom = open(sys.argv[1]).read()

class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.order, self.svg, self.li, self.fills, self.rows = [], None, [], {}, {}
        self.in_li, self.circles = False, {}
    def handle_starttag(self, tag, a):
        a = dict(a)
        if tag in ("h2", "ul", "svg", "pre"):
            self.order.append(tag if tag != "svg" else "svg#" + a.get("id", ""))
        if tag == "svg":
            self.svg = a.get("id")
            self.fills[self.svg], self.rows[self.svg], self.circles[self.svg] = [], [], 0
        if tag == "li":
            self.in_li = True
            self.li.append("")
        if self.svg and tag == "rect" and a.get("width") == "14":  # a legend swatch
            self.fills[self.svg].append(a.get("fill"))
        if self.svg and tag == "g" and "row" in a.get("class", "").split():
            self.rows[self.svg].append(a["class"])
        if self.svg and tag == "circle" and a.get("class") == "run":
            self.circles[self.svg] += 1
    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None
        if tag == "li":
            self.in_li = False
    def handle_data(self, d):
        if self.in_li:
            self.li[-1] += d

p = P()
p.feed(dom)
# verdict first, then the charts, then the tables
kinds = [o.split("#")[0] for o in p.order if o != "h2"]
assert kinds.index("ul") < kinds.index("svg") < kinds.index("pre"), p.order
assert [o for o in p.order if o.startswith("svg#")] == ["svg#import", "svg#oltp", "svg#timeline",
                                                       "svg#latency"], p.order
li = p.li
assert li[0].startswith("Compared 4 cells (back ends dir, tmpfs; profiles native, dbaware)"), li[0]
assert "baseline dir/native" in li[0], li[0]
assert any(re.match(r"import: (best \S+, [0-9.]+ s, [0-9.]+x the next|no winner)", l) for l in li), li
assert any(l.startswith("commit p99: ") for l in li), li
# every other cell is faster, slower or not separated from the baseline, once
judged = " ".join(l for l in li if re.match(r"(Faster than|Slower than|Not separated from) the baseline "
                                            r"\(import time relative to it, below 1 is faster; ", l))
for cell in ("dir/dbaware", "tmpfs/native", "tmpfs/dbaware"):
    assert len(re.findall(re.escape(cell) + r" [0-9.]+ ± [0-9.]+", judged)) == 1, (cell, li)
assert "dir/native " not in judged, li
# the charts: a dot per run, the baseline's row marked, a legend
assert p.circles["import"] == 4 * 2, p.circles
assert p.circles["oltp"] >= 4 * 2 * 2, p.circles  # 4 percentiles per run; at least p50, p99
assert p.rows["import"][0] == "row baseline" or p.rows["import"][0] == "row baseline noisy", p.rows
assert len(p.rows["latency"]) == 2 and len(p.rows["import"]) == 4, p.rows
assert "baseline: the cell ratios refer to" in dom
noisy = [r for r in p.rows["import"] if "noisy" in r]
assert not noisy or "! noisy: CV of the import times above 10 %" in dom
# a colour of its own for every I/O class (and every percentile)
lat = p.fills["latency"]
assert len(lat) >= 5 and len(set(lat)) == len(lat), lat
assert len(set(p.fills["oltp"])) == len(p.fills["oltp"]), p.fills["oltp"]
assert "Ratio: import time relative to the baseline's; below 1 is faster" in dom
# the commit latency over the import: a panel per cell, its p99 line and its commits
tl = dom[dom.index('id="timeline"'):]
tl = tl[:tl.index("</svg>")]
assert tl.count('class="panel"') == 4, tl.count('class="panel"')
assert tl.count('class="p99"') == 4 and 'class="commits"' in tl
PY
echo "ok: verdict lines, then the charts (inline SVG), then the tables; no console error"

browser --screenshot="$W/shot.png" --window-size=1280,2000 "file://$page" >/dev/null ||
	{ cat "$W/browser.err"; fail "no screenshot"; }
python3 - "$W/shot.png" <<'PY' || fail "the screenshot is not a picture of the page"
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h, depth, ctype = struct.unpack(">IIBB", b[16:26])
assert (w, h) == (1280, 2000), (w, h)
idat, i = b"", 8
while i < len(b):
    n, kind = struct.unpack(">I4s", b[i:i + 8])
    if kind == b"IDAT":
        idat += b[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
# filtered scanlines: a blank page is a few byte values; a page of text
# and coloured charts is many, and far from all white
assert len(set(raw)) > 100, len(set(raw))
assert sum(1 for x in raw[::97] if x not in (0, 255)) > len(raw[::97]) // 50
PY
echo "ok: a screenshot of 1280x2000 with the page on it"
