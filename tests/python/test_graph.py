"""The model graph end to end from Python (docs/graph.md).

A two-branch model, head(relu(fc_a(x) + fc_b(x))), trained under the binding
must show fc_a -> head and fc_b -> head with forward and backward times on
every node in the JSON report, in `mlprof export --dot` and in the HTML page
rendered by headless Chromium; a generated model of about 220 modules must
render folded (few nodes visible) and unfold on demand. Recording the graph
must leave no hook behind. Run by ctest with MLPROF_LIBRARY, MLPROF_CLI,
MLPROF_PYTHON_DIR and MLPROF_SRC_DIR set (tests/graph.cmake).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.environ.get("MLPROF_PYTHON_DIR", os.path.join(HERE, "..", "..", "python"))
SRC = os.environ.get("MLPROF_SRC_DIR", os.path.join(HERE, "..", ".."))
CLI = os.environ.get("MLPROF_CLI", os.path.join(SRC, "build", "mlprof"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def train(kind, outdir, steps):
    env = dict(os.environ)
    env["PYTHONPATH"] = PYDIR + os.pathsep + env.get("PYTHONPATH", "")
    env["MLPROF_SAMPLE_HZ"] = "999"
    env["MLPROF_REPORT_WAIT"] = "1"  # the reports are read right after the exit
    r = subprocess.run([sys.executable, os.path.join(HERE, "train_graph.py"), kind, outdir, str(steps)],
                       env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise AssertionError("training failed:\n" + r.stdout + r.stderr)
    return r.stdout


def one(pattern):
    files = glob.glob(pattern)
    assert len(files) == 1, files
    return files[0]


def dump_dom(html, hash_="", extra_script=""):
    """The page's DOM after its scripts ran, in headless Chromium."""
    page = html
    if extra_script:
        page = html + ".extra.html"
        with open(html) as f, open(page, "w") as g:
            g.write(f.read().replace("</body>", "<script>%s</script></body>" % extra_script))
    profile = tempfile.mkdtemp()
    try:
        r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--disable-background-networking", "--user-data-dir=" + profile,
                            "--window-size=1280,2400", "--dump-dom", "file://" + os.path.abspath(page) + hash_],
                           capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if r.returncode != 0:
        raise AssertionError("chromium failed: " + r.stderr[-2000:])
    return r.stdout


def graph_attr(dom, name):
    m = re.search(r'<section[^>]*id="graph"[^>]*>', dom)
    assert m, "no graph section in the rendered page"
    a = re.search(r'%s="([^"]*)"' % name, m.group(0))
    return a.group(1) if a else None


def have_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipUnless(have_torch(), "python3-torch is not installed")
class TwoBranch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.out = train("two", cls.dir, 12)
        cls.trace = one(os.path.join(cls.dir, "*.mlpt"))
        with open(cls.trace + ".report.json") as f:
            cls.graph = json.load(f)["graph"]
        cls.ids = {n["name"]: n["id"] for n in cls.graph["nodes"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def node(self, name):
        return self.graph["nodes"][self.ids[name]]

    def test_json_has_both_branches_feeding_head_with_times(self):
        g = self.graph
        self.assertEqual(g["source"], "torch")
        self.assertEqual(set(self.ids), {"TwoBranch", "fc_a", "fc_b", "head"})
        flow = [(g["nodes"][e["from"]]["name"], g["nodes"][e["to"]]["name"]) for e in g["edges"]]
        self.assertEqual(sorted(flow), [("fc_a", "head"), ("fc_b", "head")])
        for name in ("fc_a", "fc_b", "head"):
            n = self.node(name)
            self.assertEqual(n["kind"], "Linear")
            self.assertEqual(n["parent"], self.ids["TwoBranch"])
            self.assertEqual(n["calls"], 12)
            self.assertGreater(n["forward"]["total_ns"], 0, name)
            self.assertGreater(n["backward"]["total_ns"], 0, name)
            # per-step figures are whole-trace sums divided by the steps: rounding may differ by 1 ns
            self.assertAlmostEqual(n["total_ns"], n["forward"]["total_ns"] + n["backward"]["total_ns"], delta=1)
            self.assertGreater(n["share"], 0)
        self.assertEqual(self.node("fc_a")["params"], 16 * 32 + 32)
        self.assertEqual(self.node("fc_a")["param_bytes"], 4 * (16 * 32 + 32))
        self.assertEqual(self.node("head")["params"], 32 * 4 + 4)
        self.assertEqual(self.node("TwoBranch")["params"], 2 * (16 * 32 + 32) + 32 * 4 + 4)
        # histograms every 2 steps: fc_a's output is 64 x 32 float32 values
        self.assertEqual(self.node("fc_a")["activation_bytes"], 64 * 32 * 4)

    def test_recorded_once_and_hooks_removed(self):
        self.assertIn("hooks_left 0", self.out)
        self.assertIn("edges 2", self.out)
        self.assertRegex(self.out, r"graph_seconds [0-9.]+")

    def test_text_report_lists_inputs(self):
        with open(self.trace + ".report.txt") as f:
            text = f.read()
        self.assertIn("Model graph (torch: 4 nodes, 2 edges", text)
        self.assertRegex(text, r"in:  (fc_a, fc_b|fc_b, fc_a)")

    def test_dot_export(self):
        dot = os.path.join(self.dir, "g.dot")
        r = subprocess.run([CLI, "export", "--dot", self.trace, "-o", dot, "-q"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(dot) as f:
            text = f.read()
        self.assertIn("digraph mlprof {", text)
        for src in ("fc_a", "fc_b"):
            self.assertIn("n%d -> n%d;" % (self.ids[src], self.ids["head"]), text)
            self.assertRegex(text, r'n%d \[label="%s\\nLinear\\nfwd [0-9.]+ [num]?s, bwd [0-9.]+ [num]?s'
                             % (self.ids[src], src))
        self.assertIn('subgraph "cluster_%d"' % self.ids["TwoBranch"], text)
        if shutil.which("dot"):
            r = subprocess.run(["dot", "-Tsvg", dot, "-o", dot + ".svg"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)

    @unittest.skipUnless(os.path.exists(CHROMIUM), "chromium is not installed")
    def test_html_draws_the_branches_in_chromium(self):
        html = self.trace + ".report.html"
        secs = os.path.join(self.dir, "sections.txt")
        with open(secs, "w") as f:
            f.write("summary\nranges\ngraph\n")
        env = dict(os.environ, SECTIONS=secs)
        r = subprocess.run([os.path.join(SRC, "scripts", "browser-check"), html, os.path.join(self.dir, "check")],
                           env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "check", "dom.html")) as f:
            dom = f.read()
        self.assertEqual(graph_attr(dom, "data-graph"), "ok")
        self.assertEqual(graph_attr(dom, "data-graph-visible"), "3")  # root unfolded: its 3 layers
        for src in ("fc_a", "fc_b"):
            self.assertRegex(dom, r'<path[^>]*class="ge"[^>]*data-from="%s" data-to="head"' % src)
        for name in ("fc_a", "fc_b", "head"):
            self.assertRegex(dom, re.compile(r'data-name="%s"[^>]*>.*?class="gsub">Linear · [0-9.]+ (ns|us|ms|s) · '
                                             r'[0-9.]+%%' % name, re.S))
        # a click on a node shows its ranges-table row and hot-functions line
        dom = dump_dom(html, "#graph:head")
        info = dom[dom.index('id="graph-info"'):]
        self.assertIn("head (Linear)", info[:400])
        self.assertIn("Its row in the ranges table", info)
        self.assertIn("Hot functions", info)
        # the row of head's forward range, whatever the module ranges are named
        self.assertIn('<tr data-range="%s" class="ghl">' % self.node("head")["range"], dom)


@unittest.skipUnless(have_torch(), "python3-torch is not installed")
class TwoHundredModules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        cls.out = train("deep", cls.dir, 3)
        cls.trace = one(os.path.join(cls.dir, "*.mlpt"))
        with open(cls.trace + ".report.json") as f:
            cls.graph = json.load(f)["graph"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_module_is_a_node_and_residuals_are_edges(self):
        g = self.graph
        self.assertGreaterEqual(len(g["nodes"]), 200)
        names = {n["id"]: n["name"] for n in g["nodes"]}
        flow = {(names[e["from"]], names[e["to"]]) for e in g["edges"]}
        # inside a residual block: fc1 -> act -> fc2 -> the block (x + fc2(...))
        self.assertIn(("1.blocks.0.fc1", "1.blocks.0.act"), flow)
        self.assertIn(("1.blocks.0.act", "1.blocks.0.fc2"), flow)
        self.assertIn(("1.blocks.0.fc2", "1.blocks.0"), flow)
        # the skip connection: block 0's output feeds block 1's fc1 and block 1 itself
        self.assertIn(("1.blocks.0", "1.blocks.1.fc1"), flow)
        self.assertIn(("1.blocks.0", "1.blocks.1"), flow)
        self.assertIn(("0", "1.blocks.0.fc1"), flow)
        deepest = max(n["depth"] for n in g["nodes"])
        self.assertEqual(deepest, 4)
        self.assertIn("hooks_left 0", self.out)

    @unittest.skipUnless(os.path.exists(CHROMIUM), "chromium is not installed")
    def test_renders_folded_and_unfolds_in_chromium(self):
        html = self.trace + ".report.html"
        unfold = ("var s=document.getElementById('graph');var t=performance.now();"
                  "document.getElementById('graph-unfold').click();"
                  "s.setAttribute('data-graph-unfold-ms',(performance.now()-t).toFixed(1));"
                  "s.setAttribute('data-graph-unfolded',s.getAttribute('data-graph-visible'));")
        dom = dump_dom(html, extra_script=unfold)
        self.assertEqual(graph_attr(dom, "data-graph"), "ok")
        visible = int(graph_attr(dom, "data-graph-unfolded"))
        print("\n200-module graph: first render %s ms, unfold all %s ms (%d nodes drawn)"
              % (graph_attr(dom, "data-graph-ms"), graph_attr(dom, "data-graph-unfold-ms"), visible))
        self.assertGreaterEqual(visible, 150)
        dom = dump_dom(html)
        shown = int(graph_attr(dom, "data-graph-visible"))
        self.assertGreater(shown, 1)
        self.assertLessEqual(shown, 40)
        self.assertIn('class="gn gfold"', dom)
        self.assertNotIn('data-name="5.blocks.2.fc1"', dom)
        # a click on a folded node unfolds it
        click = ("var s=document.getElementById('graph'),g=s.querySelector('g.gn.gfold');"
                 "s.setAttribute('data-clicked',g.getAttribute('data-name'));"
                 "g.dispatchEvent(new MouseEvent('click',{bubbles:true}));")
        dom = dump_dom(html, extra_script=click)
        clicked = graph_attr(dom, "data-clicked")
        # (a stage holds one Sequential without edges of its own: both open at once)
        self.assertGreater(int(graph_attr(dom, "data-graph-visible")), shown)
        self.assertRegex(dom, r'data-name="%s\.blocks\.0"' % re.escape(clicked))
        self.assertIn('id="graph-info"><h3>%s (' % clicked, dom)
        # opening the page at a deep node unfolds its ancestors
        dom = dump_dom(html, "#graph:5.blocks.2.fc1")
        self.assertRegex(dom, r'class="gn[^"]*gsel"[^>]*data-name="5.blocks.2.fc1"')
        self.assertGreater(int(graph_attr(dom, "data-graph-visible")), shown)


if __name__ == "__main__":
    unittest.main(verbosity=2)
