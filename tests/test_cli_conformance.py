"""Seed conformance (docs/decisions.md): every command line quoted in /work/shared/seeds runs as a real
subprocess against the simulated r12 study (tests/support/r12_study.py) and exits 0 with the
documented output shape.

Each entry below is (seed, the line as the seed quotes it, the line run, the check).
The line run equals the quoted one except where the seed cannot be run literally, and
each such change is named in `why`:

* placeholders the seed means to be replaced (`a1b2c3`, `<hash>`, `1234`, `ModelName`,
  `your-model`, real model names such as `data/r12/Qwen3-32B`): the simulated study's own
  ids and cohorts; the literal placeholder is run as well where it could be mistaken for
  a value, and must give the one-line error that lists what exists (exit 2);
* docs/analyze.md: `data/dataset-m12x.json` (the dataset of an older release): `data/r12.json`;
  the literal name must say the file is missing and list the datasets that exist;
* the seed's own typos (`samplers/greedymax.json`, `--view depth_length_single`): the
  literal line must fail with a message naming the right value, then the corrected
  line must succeed;
* fixed ports (8050, 8060, 3333): free ones (other tests run in parallel on this
  machine), and runner.py gets `--density corner --task arithmetic` to keep CI fast.

Lines that are not toolkit commands (`cd`, `source venv/bin/activate`, `vllm run-batch`,
which a small harness plays through the simulator) are not run.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.r12_study import REPO, env, study_root
from tests.test_catalog_identifiers import fetch_app, hex_id

pytestmark = [pytest.mark.slow, pytest.mark.seed_study]

STRONG, MID, WEAK = hex_id("sim-strong"), hex_id("sim-mid"), hex_id("sim-weak")
COHORT = "data/r12/sim-strong"
R12_LABELS = ("Simulated strong model", "Simulated mid-size model", "Simulated weak small model")
R12_TASKS = ("arithmetic", "boolean", "brackets", "cars", "dates", "letters", "movies", "objects",
             "shapes", "shuffle", "sort", "tables")


@dataclass
class Line:
    seed: str
    quoted: str
    run: str | None = None          # None: run as quoted
    why: str = ""
    stdout: tuple = ()              # fragments stdout must hold
    files: tuple = ()               # files (globs) that must exist afterwards, relative to the sandbox
    code: int = 0
    stderr: tuple = ()              # fragments stderr must hold (for the literal typo lines)
    extra: dict = field(default_factory=dict)

    @property
    def command(self) -> str:
        return self.run or self.quoted


def filt(**kw) -> str:
    return shlex.quote(json.dumps(kw))


MD_TABLE = ("|---",)
LABELS = R12_LABELS
PLACEHOLDER = "placeholder id a1b2c3: the study's sim-strong eval"

# ----------------------------------------------------------------- read-only analysis lines
ANALYSIS = [
    # README.md: discovery
    Line("000", "python analyze.py evals data/r12.json", stdout=("eval_id", *LABELS)),
    Line("000", 'python analyze.py evals data/r12.json --search "phi-4"', stdout=("eval_id",)),
    Line("000", 'python analyze.py evals data/r12.json --facets "size:small,arch:moe"', stdout=("eval_id",)),
    Line("000", "python analyze.py tasks data/r12.json", stdout=R12_TASKS),
    Line("000", 'python analyze.py tasks data/r12.json --search "arith"', stdout=("arithmetic",)),
    Line("000", "python analyze.py tokens data/r12.json", stdout=(*MD_TABLE, *LABELS)),
    Line("000", "python analyze.py tokens data/r12.json --group-by manifold.id", stdout=(*MD_TABLE, "easy", "hard")),
    Line("000", """python analyze.py tokens data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --group-by facets.operations""",
         f"python analyze.py tokens data/r12.json --filters {filt(eval_id=[STRONG])} --group-by facets.arch",
         PLACEHOLDER + "; facets.operations is no facet of the r12 evals (the seed's own list of facets is "
         "arch/size/family), so the eval facet arch is grouped", stdout=(*MD_TABLE, "moe")),
    Line("000", "python analyze.py points data/r12.json --output-dir points/", files=("points/points_base_task-arithmetic.md",)),
    Line("000", """python analyze.py points data/r12.json --filters '{"eval_id": ["a1b2c3"], "base_task": "arithmetic"}' --sort max_number --sort length --output-dir points/""",
         f"python analyze.py points data/r12.json --filters {filt(eval_id=[STRONG], base_task='arithmetic')} "
         "--sort max_number --sort length --output-dir points/", PLACEHOLDER,
         files=("points/points_base_task-arithmetic.md",)),
    Line("000", "python analyze.py modelinfo data/r12.json --output-dir metadata/", files=("metadata/MODELINFO.md",)),
    Line("000", "python analyze.py modelinfo --hf-id meta-llama/Llama-3.1-70B --output-dir metadata-hf/",
         "python analyze.py modelinfo --hf-id meta-llama/Llama-3.1-70B --output-dir metadata-hf/",
         "offline machine: metadata-hf/ holds the files an earlier online run downloaded (written by the test)",
         files=("metadata-hf/MODELINFO.md",)),
    # README.md: position
    Line("000", "python analyze.py scores data/r12.json", stdout=("ReasonScore", *LABELS, *R12_TASKS)),
    Line("000", "python analyze.py scores data/r12.json --format png --output-dir results/", files=("results/scores.png",)),
    Line("000", "python analyze.py scores data/r12.json --sort ratio --top 10", stdout=("Score/Token", *LABELS)),
    Line("000", "python analyze.py cluster data/r12.json", stdout=MD_TABLE),
    Line("000", "python analyze.py cluster data/r12.json --facet-by base_task --split-by eval_id",
         files=(f"cluster*{STRONG}*.md",)),
    Line("000", """python analyze.py cluster data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --format png --output-dir results/""",
         f"python analyze.py cluster data/r12.json --filters {filt(eval_id=[STRONG])} --format png --output-dir results/",
         PLACEHOLDER, files=("results/cluster*.png",)),
    Line("000", "python analyze.py cluster data/r12.json --facet-by none", stdout=(*MD_TABLE, *LABELS)),
    Line("000", "python analyze.py rank data/r12.json", stdout=(*MD_TABLE, *LABELS)),
    Line("000", """python analyze.py rank data/r12.json --facet-by base_task --filters '{"groups": [["arch:moe"]]}'""",
         stdout=("Simulated strong model",)),
    Line("000", "python analyze.py rank data/tables-16k.json --facet-by params.operation", stdout=("count", "lookup")),
    Line("000", "python analyze.py pairwise data/r12.json", stdout=(*MD_TABLE, *LABELS)),
    Line("000", "python analyze.py pairwise data/r12.json --sort bradley-terry --format png --output pairwise.png",
         files=("pairwise.png",)),
    Line("000", """python analyze.py spiderweb data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --output-dir results/""",
         f"python analyze.py spiderweb data/r12.json --filters {filt(eval_id=[STRONG])} --output-dir results/",
         PLACEHOLDER, files=(f"results/spiderweb*{STRONG}.png",)),
    Line("000", "python analyze.py spiderweb data/r12.json --format barpng", files=(f"spiderweb*{MID}*.png",)),
    Line("000", "python analyze.py surface data/r12.json --output-dir results/", files=("results/surface_arithmetic.png",)),
    Line("000", """python analyze.py surface data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --split-by none""",
         f"python analyze.py surface data/r12.json --filters {filt(eval_id=[STRONG])} --split-by none",
         PLACEHOLDER, files=("surface*.png",)),
    Line("000", "python analyze.py surface data/r12.json --view depth_length --output-dir results/",
         why="seed typo --view depth_length_single (no such view in r12; checked below)",
         files=("results/surface_*.png",)),
    Line("000", "python analyze.py compression data/r12.json --output-dir compression/", files=("compression/*.png",)),
    Line("000", """python analyze.py compression data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --split-by base_task --facet-by eval_id --group-by manifold.id --output-dir compression/""",
         f"python analyze.py compression data/r12.json --filters {filt(eval_id=[STRONG])} --split-by base_task "
         "--facet-by eval_id --group-by manifold.id --output-dir compression/", PLACEHOLDER,
         files=("compression/*arithmetic*.png",)),
    Line("000", "python analyze.py hazard data/r12.json --output-dir hazard/", files=(f"hazard/*{WEAK}*.png",)),
    Line("000", """python analyze.py hazard data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --split-by base_task --split-by eval_id --output-dir hazard/""",
         f"python analyze.py hazard data/r12.json --filters {filt(eval_id=[STRONG])} --split-by base_task "
         "--split-by eval_id --output-dir hazard/", PLACEHOLDER, files=(f"hazard/*{STRONG}*.png",)),
    Line("000", """python analyze.py aggregate data/r12.json --filters '{"eval_id": ["a1b2c3"]}'""",
         f"python analyze.py aggregate data/r12.json --filters {filt(eval_id=[STRONG])}", PLACEHOLDER,
         stdout=(*MD_TABLE, "Simulated strong model")),
    Line("000", "python analyze.py aggregate data/r12.json --compare-modes --raw-counters --tokens",
         stdout=("E_I", "C_O", "n_u", *LABELS)),
    Line("000", "python analyze.py capacity data/r12.json --frontier --output-dir results/", files=("results/capacity*",)),
    Line("000", "python analyze.py capacity data/r12.json --peak --format png --output-dir results/",
         files=("results/capacity_peak.png",)),
    Line("000", "python analyze.py capacity data/r12.json --frontier manifold.id --facet-by facets.arch",
         stdout=("moe",)),
    Line("000", """python analyze.py points data/r12.json --filters '{"eval_id": ["a1b2c3"]}'""",
         f"python analyze.py points data/r12.json --filters {filt(eval_id=[STRONG])} --output-dir points-discover/",
         PLACEHOLDER + "; written to its own folder to keep the sandbox tidy", files=("points-discover/*.md",)),
    # README.md: probe
    Line("000", "python probe.py fft data/r12.json --output-dir research/fft/", files=("research/fft/*.png",)),
    Line("000", """python probe.py fft data/r12.json --filters '{"eval_id": ["a1b2c3"]}' --split-by none""",
         f"python probe.py fft data/r12.json --filters {filt(eval_id=[STRONG])} --split-by none", PLACEHOLDER,
         files=("fft*.png",)),
    # docs/analyze.md (dataset-m12x is the older release's dataset name)
    *[Line("001", quoted, quoted.replace("data/dataset-m12x.json", "data/r12.json"),
           "the ranking workflow's dataset-m12x.json is an older release's dataset; r12 here", **checks)
      for quoted, checks in [
          ("python analyze.py evals data/dataset-m12x.json --format table", {"stdout": ("eval_id", *LABELS)}),
          ("python analyze.py scores data/dataset-m12x.json --output scores.md", {"files": ("scores.md",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["size:large"]}' --output scores-large.md""",
           {"files": ("scores-large.md",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["family:llama"]}'""",
           {"stdout": ("Simulated mid-size model",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["size:large"]}'""",
           {"stdout": ("Simulated strong model",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["family:qwen", "size:large"]}'""",
           {"stdout": ("Simulated strong model",)}),
          ('python analyze.py evals data/dataset-m12x.json --search "gpt-4"', {"stdout": ("eval_id",)}),
          ("python analyze.py scores data/dataset-m12x.json --format json --output scores.json", {"files": ("scores.json",)}),
          ("python analyze.py scores data/dataset-m12x.json --format png --output scores.png", {"files": ("scores.png",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["size:medium", "size:large"]}' --output scores-production.md""",
           {"files": ("scores-production.md",)}),
          ('python analyze.py evals data/dataset-m12x.json --search "my-model"', {"stdout": ("eval_id",)}),
          ("python analyze.py evals data/dataset-m12x.json --groups size:small", {"stdout": ("Simulated weak small model",)}),
          ("python analyze.py evals data/dataset-m12x.json --groups size:small,family:llama", {"stdout": ("eval_id",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["size:small"]}' --output comparison-small.md""",
           {"files": ("comparison-small.md",)}),
          ("""python analyze.py scores data/dataset-m12x.json --filters '{"groups": ["family:llama"]}' --format png --output llama-comparison.png""",
           {"files": ("llama-comparison.png",)}),
      ]],
    Line("001", """python analyze.py scores data/dataset-m12x.json --filters '{"eval_id": [<your-eval-id>, <baseline-1>, <baseline-2>]}' --output comparison.md""",
         f"python analyze.py scores data/r12.json --filters {filt(eval_id=[STRONG, MID, WEAK])} --output comparison.md",
         "placeholders filled with the study's eval_ids", files=("comparison.md",)),
    Line("001", """python analyze.py scores data/dataset-m12x.json --filters '{"eval_id": [0, 1, 2, 3]}'""",
         f"python analyze.py scores data/r12.json --filters {filt(eval_id=[STRONG, MID, WEAK])}",
         "eval_ids are 6-character strings (docs/configs.md), not 0..3; the literal form is checked below",
         stdout=LABELS),
    # docs/cohort.md
    Line("002", "python analyze.py evals data/r12.json --search qwen", stdout=("Simulated strong model",)),
    Line("002", "python analyze.py evals data/r12.json --groups arch:moe,size:large", stdout=("Simulated strong model",)),
    Line("002", "python analyze.py modelinfo data/r12.json --eval-id <hash>",
         f"python analyze.py modelinfo data/r12.json --eval-id {STRONG} --output-dir metadata-one/",
         "<hash> is the study's eval; README.md makes --output-dir required", files=("metadata-one/MODELINFO.md",)),
    # cohort.py read-only lines (seeds 000 and 002)
    Line("000", "python cohort.py list", stdout=(*LABELS,)),
    Line("000", "python cohort.py list data/r12/Qwen3-Next-80B", f"python cohort.py list {COHORT}",
         "a real model's cohort; the simulated study's own", stdout=("Simulated strong model",)),
    Line("000", "python cohort.py list --search qwen", stdout=("Simulated strong model",)),
    Line("000", "python cohort.py verify", stdout=("sim-strong",)),
    Line("000", "python cohort.py verify data/r12/Qwen3.5-27B", f"python cohort.py verify {COHORT}",
         "a real model's cohort; the simulated study's own", stdout=("sim-strong",)),
    Line("002", "python cohort.py info data/r12/Qwen3-32B", f"python cohort.py info {COHORT}",
         "a real model's cohort; the simulated study's own", stdout=("Simulated strong model",)),
]

# Literal lines whose placeholder, typo or older name cannot succeed: one line on stderr, exit 2,
# naming what is valid (and never suggesting the missing thing itself).
LITERAL_ERRORS = [
    Line("000", "python analyze.py tokens data/r12.json --group-by facets.operations", code=2,
         stderr=("facets.operations", "valid:")),
    Line("000", """python analyze.py aggregate data/r12.json --filters '{"eval_id": ["a1b2c3"]}'""", code=2,
         stderr=("a1b2c3", STRONG, MID)),
    Line("000", "python analyze.py surface data/r12.json --view depth_length_single --output-dir results/", code=2,
         stderr=("depth_length_single", "depth_length")),
    Line("001", "python analyze.py scores data/dataset-m12x.json --output scores.md", code=2,
         stderr=("data/dataset-m12x.json", "data/r12.json", "data/tables-16k.json")),
    Line("001", """python analyze.py scores data/dataset-m12x.json --filters '{"eval_id": [0, 1, 2, 3]}'""", code=2,
         stderr=("dataset-m12x",)),
    Line("001", """python analyze.py scores data/r12.json --filters '{"eval_id": [0, 1, 2, 3]}'""", code=2,
         stderr=(STRONG, MID, WEAK)),
    Line("000", "python probe.py failure data/r12.json --point-id 1234", code=2,
         stderr=("1234", "analyze.py points")),
    Line("000", "python cohort.py verify data/r12/Qwen3.5-27B", code=2,
         stderr=("data/r12/sim-strong", "python data.py pull cohort data/r12/Qwen3.5-27B")),
    Line("000", "python runner.py --config configs/r12.yaml --template templates/zeroshot-nosys.json "
         "--sampler samplers/greedymax.json --model your-model --mode read-batch --batch output.ndjson", code=2,
         stderr=("samplers/greedymax.json", "did you mean samplers/greedy-max.json", "samplers/greedy-4k.json")),
]


def _sandbox_files(root: Path) -> None:
    """What an earlier online `modelinfo --hf-id` run leaves behind (Llama-3.1-70B's published config)."""
    folder = root / "metadata-hf" / "meta-llama__Llama-3.1-70B"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
        "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16"}))
    (folder / "README.md").write_text("---\nlicense: llama3.1\n---\n# Llama 3.1 70B\n")


def run_line(root: Path, command: str, timeout=600) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    assert argv[0] == "python"
    if argv[1] == "-m":
        full = [sys.executable, *argv[1:]]
    else:
        full = [sys.executable, str(REPO / argv[1]), *argv[2:]]
    return subprocess.run(full, cwd=root, env=dict(env(), HF_HUB_OFFLINE="1"), capture_output=True, text=True,
                          timeout=timeout)


def check_line(root: Path, line: Line, proc) -> None:
    where = f"seed {line.seed}: {line.command}"
    assert proc.returncode == line.code, f"{where}\nexit {proc.returncode}\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}"
    if line.code:
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, f"{where}: {proc.stderr}"
    for fragment in line.stdout:
        assert fragment in proc.stdout, f"{where}: stdout lacks {fragment!r}\n{proc.stdout[:1500]}"
    for fragment in line.stderr:
        assert fragment in proc.stderr, f"{where}: stderr lacks {fragment!r}\n{proc.stderr}"
    for pattern in line.files:
        found = list(root.glob(pattern))
        assert found and all(p.stat().st_size > 0 for p in found), f"{where}: no {pattern}"
        assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in found if p.suffix == ".png")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = study_root(tmp_path_factory)
    _sandbox_files(root)
    return root


# Relative cost of the slow lines (figures over every task), to split the work evenly.
LINE_COST = {"compression data/r12.json --output-dir": 25, "surface data/r12.json --output-dir": 8,
             "hazard data/r12.json --output-dir": 4, "fft data/r12.json --output-dir": 4,
             "--split-by base_task --facet-by eval_id": 4, "fft data/r12.json --filters": 3, "--format png": 3,
             "cohort.py verify": 3}


def balanced_batches(lines, n: int) -> list:
    """Longest first onto the least loaded batch (costs from LINE_COST, else 1)."""
    def cost(line):
        return max([c for key, c in LINE_COST.items() if key in line.command] + [1])
    batches, loads = [[] for _ in range(n)], [0] * n
    for line in sorted(lines, key=cost, reverse=True):
        i = loads.index(min(loads))
        batches[i].append(line)
        loads[i] += cost(line)
    return batches


def script_argv(command: str) -> list:
    argv = shlex.split(command)
    assert argv[0] == "python" and argv[1].endswith(".py"), command
    return argv[1:]


@pytest.fixture(scope="module")
def analysis_results(root, tmp_path_factory):
    """Every read-only line, in two batches run side by side (two cores), each batch one
    subprocess that executes its lines as `__main__` one after another (tests/support/conformance_driver.py)."""
    lines = ANALYSIS + LITERAL_ERRORS
    folder = tmp_path_factory.mktemp("seed-batches")
    batches = balanced_batches(lines, 2)
    procs = []
    for n, batch in enumerate(batches):
        (folder / f"batch{n}.json").write_text(json.dumps([script_argv(line.command) for line in batch]))
        procs.append(subprocess.Popen([sys.executable, str(REPO / "tests" / "support" / "conformance_driver.py"),
                                       str(folder / f"batch{n}.json"), str(folder / f"results{n}.json")],
                                      cwd=root, env=dict(env(), HF_HUB_OFFLINE="1"),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    results = {}
    for n, (proc, batch) in enumerate(zip(procs, batches)):
        output, _ = proc.communicate(timeout=900)
        assert proc.returncode == 0, f"seed driver failed: {output[-3000:]}"
        outcomes = json.loads((folder / f"results{n}.json").read_text())
        results.update({id(line): subprocess.CompletedProcess(line.command, o["code"], o["stdout"], o["stderr"])
                        for line, o in zip(batch, outcomes)})
    return results


@pytest.mark.parametrize("line", ANALYSIS + LITERAL_ERRORS, ids=lambda l: f"{l.seed}:{l.quoted[:90]}")
def test_seed_line(root, analysis_results, line):
    check_line(root, line, analysis_results[id(line)])


def test_modelinfo_outputs(root, analysis_results):
    text = (root / "metadata-hf" / "MODELINFO.md").read_text()
    # 80 layers x (attention 4*8192^2 with 8/64 kv share + 3*8192*28672 MLP) + 2 * 128256*8192 embeddings ~ 70.6B
    assert "meta-llama/Llama-3.1-70B" in text and re.search(r"\| 70\.\dB \|", text), text
    listed = (root / "metadata" / "MODELINFO.md").read_text()
    assert all(label in listed for label in LABELS) and "Without hf_id" in listed


def test_scores_png_rows_follow_score_per_token(root, analysis_results):
    """Seed 001: PNG rows sorted by score/token within tiers; checked on the JSON the PNG is drawn from."""
    from resolver.analysis.scores import score_table_columns
    from resolver.plots.scores import _layout

    results = json.loads(run_line(root, "python analyze.py scores data/r12.json --format json").stdout)
    rows = _layout(results, score_table_columns(results))
    tier = None
    per_tier = {}
    for row in rows:
        if row[0] == "tier":
            tier = row[1]
            continue
        per_tier.setdefault(tier, []).append(row[1]["tiers"][tier]["score_per_token"])
    assert per_tier and all(values == sorted(values, reverse=True) for values in per_tier.values())


def test_pairwise_png_default_name_is_its_help(root, tmp_path):
    help_text = run_line(root, "python analyze.py pairwise --help").stdout
    assert "./pairwise.png" in help_text
    work = tmp_path / "pw"
    work.mkdir()
    shutil.copytree(root / "data", work / "data", copy_function=os.link, ignore=shutil.ignore_patterns("*.db"))
    shutil.copyfile(root / "data" / "pointsdb-r12.db", work / "data" / "pointsdb-r12.db")
    shutil.copytree(root / "configs", work / "configs")
    proc = run_line(work, "python analyze.py pairwise data/r12.json --format png")
    assert proc.returncode == 0, proc.stderr
    assert (work / "pairwise.png").read_bytes()[:4] == b"\x89PNG"


def test_eval_id_formula_of_seed_003():
    """Seed 003's formula, sha256(f"{model}|{template}|{sampler}")[:6]. Its example's "5e0718" is not
    what that formula gives (`printf 'GLM-4.5-Air-AWQ|zeroshot-nosys|qwen3-think-max' | sha256sum`
    starts 1f0030); the formula wins (docs/decisions.md)."""
    from resolver.catalog.datasets import eval_id

    assert eval_id("GLM-4.5-Air-AWQ", "zeroshot-nosys", "qwen3-think-max") == "1f0030"


# ----------------------------------------------------------------------------- web apps

@pytest.mark.parametrize("quoted,argv,expect", [
    ("python leaderboard.py data/r12.json", ["leaderboard.py", "data/r12.json"],
     ("r12 \\u00b7 3 evals \\u00b7 ReasonScore by base_task",)),
    ("python leaderboard.py data/tables-16k.json --group-by manifold.target_tokens --port 8060",
     ["leaderboard.py", "data/tables-16k.json", "--group-by", "manifold.target_tokens"],
     ("tables-16k \\u00b7 3 evals \\u00b7 ReasonScore by manifold.target_tokens",)),
    ("python explorer.py data/r12.json", ["explorer.py", "data/r12.json"], ("arithmetic",)),
    ("python spiderweb.py data/r12.json", ["spiderweb.py", "data/r12.json"], LABELS),
    ("python spiderweb.py data/tables-16k.json --group-by manifold.target_tokens",
     ["spiderweb.py", "data/tables-16k.json", "--group-by", "manifold.target_tokens"], ("Simulated strong model",)),
    ("python spiderweb.py data/tables-16k.json --group-by params.operation",
     ["spiderweb.py", "data/tables-16k.json", "--group-by", "params.operation"], ("Simulated strong model",)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_web_app_line(root, quoted, argv, expect):
    """Started as the seed says (on a free port instead of 8050/8051/8060) and fetched once."""
    page, layout = fetch_app(root, argv)
    assert "<html" in page.lower()
    for fragment in expect:
        assert fragment in layout, f"{quoted}: layout lacks {fragment!r}"


# ------------------------------------------------------- lines that change the data (in order)

@pytest.fixture(scope="module")
def work(root, tmp_path_factory):
    """A copy of the sandbox for the lines that write (cohort context, evaluate, data.py, runner)."""
    work = tmp_path_factory.mktemp("seed-work")
    for name in ("configs", "templates", "samplers"):
        shutil.copytree(root / name, work / name)
    shutil.copytree(root / "data", work / "data", copy_function=os.link,
                    ignore=shutil.ignore_patterns("*.db", "ids", "*.lock"))
    for db in ("pointsdb-r12.db", "pointsdb-r12-leaderboard.db", "pointsdb-tables-16k.db"):
        shutil.copyfile(root / "data" / db, work / "data" / db)
    if (root / "cache").is_dir():
        shutil.copytree(root / "cache", work / "cache")
    return work


def ok(work, command, *fragments):
    proc = run_line(work, command)
    assert proc.returncode == 0, f"{command}\nexit {proc.returncode}\n{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}"
    for fragment in fragments:
        assert fragment in proc.stdout + proc.stderr, f"{command}: lacks {fragment!r}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_evaluate_lines(work):
    # README.md / 002: rebuilding a built dataset is idempotent
    ok(work, "python evaluate.py --dataset data/r12.json --parallel 16", "unchanged")
    ok(work, "python evaluate.py --dataset data/r12.json", "up to date")
    # README.md: interview mode over runner files named task first; the shell expands the glob
    run_folder = next((work / COHORT).glob("20*"))
    results = work / "results" / ("2025-01-01_00-00-00" + run_folder.name[19:])
    shutil.copytree(run_folder, results)
    proc = subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} {REPO}/evaluate.py "
                           "--interview results/2025-*/arithmetic*.ndjson"],
                          cwd=work, env=env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (work / "pointsdb-interview.db").is_file() and "pointsdb-interview.db" in proc.stdout
    import duckdb

    with duckdb.connect(str(work / "pointsdb-interview.db"), read_only=True) as con:
        tasks = con.execute("SELECT DISTINCT base_task, eval_id FROM points").fetchall()
    assert tasks == [("arithmetic", STRONG)]


def test_cohort_context_line(work):
    proc = ok(work, f"python cohort.py context {COHORT} --eval-id {STRONG} --context 12288")
    entries = json.loads((work / COHORT / "evals.json").read_text())
    assert len(entries) == 2
    ok(work, "python evaluate.py --dataset data/r12.json", "1 evals built")
    evals = json.loads(run_line(work, "python analyze.py evals data/r12.json --format json").stdout)
    assert len(evals) == 4 and all(e["points"] > 0 for e in evals), proc.stdout


def test_data_lines(work):
    ok(work, "python data.py push dataset data/r12.json --full")   # setup: a remote that has the study
    ok(work, "python data.py push cohort data/r12/sim-weak")    # seed: push cohort data/r12/NewModel-7B
    ok(work, "python data.py status", "present")
    # a fresh clone: tracked files only (configs, dataset configs, evals.json, manifest)
    clone = work.parent / (work.name + "-clone")
    for name in ("configs", "templates", "samplers"):
        shutil.copytree(work / name, clone / name)
    for path in (work / "data").rglob("*.json"):
        if ".remote" not in path.parts and ".blobs" not in path.parts and not re.match(r"20\d\d-", path.parent.name):
            target = clone / "data" / path.relative_to(work / "data")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    (clone / "data" / ".remote").symlink_to(work / "data" / ".remote")
    proc = run_line(clone, "python analyze.py scores data/r12.json")
    assert proc.returncode == 2 and "python data.py pull dataset data/r12.json" in proc.stderr
    assert "python -m resolver.r12sim" in proc.stderr
    ok(clone, "python data.py pull dataset data/r12.json")
    ok(clone, "python analyze.py scores data/r12.json", *LABELS)
    ok(clone, f"python data.py pull cohort {COHORT}")           # seed: pull cohort data/r12/GLM-4.5
    assert list((clone / COHORT).glob("20*/*.ndjson"))
    ok(clone, "python data.py pull dataset data/r12.json --full")
    assert list((clone / "data/r12/sim-mid").glob("20*/*.ndjson"))
    ok(clone, "python data.py status")
    ok(clone, "python data.py prune")


def test_runner_lines(work):
    """Seed 000's API run and the write-batch / vLLM / read-batch round trip, against the simulator."""
    from resolver.sim.simulator import start_simulator_process
    from tests.test_run_batch import play_vllm

    fast = "--density corner --task arithmetic"
    sim = start_simulator_process(str(work / "configs/r12.yaml"), port=0)
    try:
        api = (f"python runner.py --config configs/r12.yaml --template templates/zeroshot-nosys.json "
               f"--sampler samplers/greedy-max.json --model sim-strong --apibase {sim.url} {fast}")
        ok(work, api)
        folder = next((work / "results").glob("20*_r12_sim-strong_zeroshot-nosys_greedy-max"))
        names = sorted(p.name for p in folder.glob("*.ndjson"))
        assert names and all(n.startswith("arithmetic_") for n in names)
        batch = ("python runner.py --config configs/r12.yaml --template templates/zeroshot-nosys.json "
                 f"--sampler samplers/greedy-max.json --model sim-mid {fast}")
        ok(work, batch + " --mode write-batch")
        batch_file = sorted((work / "results").glob("*-offline.ndjson"))[-1]
        play_vllm(batch_file, sim.url, work / "output.ndjson")
        ok(work, batch + " --mode read-batch --batch output.ndjson")
    finally:
        sim.stop()
