"""The pages a reader of the seed documents is sent to (issue 36): every page name the
seeds link resolves under docs/, every relative link in docs/*.md and README.md resolves
(file and #anchor), and the words in configs/r12.yaml's header about --degree match what
the runner does."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _header(path: Path) -> str:
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    return " ".join(lines)


def test_r12_header_says_what_degree_does(tmp_path):
    from resolver.config import expand_steps, load_config

    header = _header(REPO / "configs" / "r12.yaml")
    assert "runs one tier" not in header
    assert "--degree N (which only fills entries without a degree) changes nothing" in header
    # the claim, checked on the runner's own expansion: every r12 entry already has a degree ...
    r12 = load_config(REPO / "configs" / "r12.yaml")
    plain = expand_steps(r12, density="corner")
    seven = expand_steps(r12, density="corner", degree=7)
    assert [(s.name, s.manifold) for s in plain] == [(s.name, s.manifold) for s in seven]
    assert {s.manifold["degree"] for s in plain} == {0, 1, 2}
    # ... while an entry without one is filled with N, and one with a degree keeps it
    config = tmp_path / "mixed.yaml"
    config.write_text("name: mixed\nprecision:\n  low: {count: 4, maxrounds: 1, target_margin: 0.5}\n"
                      "tasks:\n  - name: arithmetic\n    mode: grid\n    manifolds:\n"
                      "      - id: tagged\n        degree: 1\n        grid: {length: 4, max_depth: 1}\n"
                      "      - id: untagged\n        grid: {length: 6, max_depth: 1}\n", encoding="utf-8")
    steps = expand_steps(load_config(config), degree=7)
    assert [s.manifold for s in steps] == [{"id": "tagged", "degree": 1}, {"id": "untagged", "degree": 7}]


# ---------------------------------------------------------------- links

# Every page name the seed documents link to, with where and how (the seeds are in the
# project's shared folder, not in this repository; test_seed_links_are_the_ones_listed
# re-reads them where they are at hand).
SEED_LINKS = {
    "workflow.md": "000: For what to run when, see workflow.md; 002: See Also",
    "implementation.md": "000: For architectural context, see implementation.md; 002: See Also",
    "config.md": "000: --config ... see config.md; 002: For complete configuration reference, see config.md",
    "templates-samplers.md": "000: --template / --sampler ... see templates-samplers.md",
    "tools.md#cohortpy": "002: For complete reference, see tools.md#cohortpy",
    "tools.md#datapy": "002: For complete reference, see: tools.md#datapy",
    "architecture.md": "002: See Also",
    "r12.md": "002: See Also",
    "pointsdb.md": "002: See Also",
}
SEEDS = Path("/work/shared/seeds")
# how the seeds link a page: "see X.md", "see: X.md#anchor", or a "- X.md - ..." list item
SEED_LINK = re.compile(r"(?:\bsee:?\s+|^-\s+)([\w-]+\.md(?:#[\w-]+)?)", re.IGNORECASE | re.MULTILINE)
MD_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor a markdown renderer (GitHub's rules) gives a heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _outside_fences(path: Path):
    fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            yield number, line


def anchors(path: Path) -> set:
    found, seen = set(), {}
    for _, line in _outside_fences(path):
        heading = re.match(r"#{1,6}\s+(.*?)\s*$", line)
        if heading:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken(page: Path, target: str) -> str | None:
    """Why a relative link from `page` does not resolve (None when it does)."""
    file, _, anchor = target.partition("#")
    dest = (page.parent / file) if file else page
    if not dest.exists():
        return f"no file {dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest}"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"no heading for #{anchor} in {dest.name}"
    return None


def test_slug_follows_the_renderer():
    # worked examples, as GitHub renders these headings of this repository
    assert slug("cohort.py") == "cohortpy"
    assert slug("Templates (`templates/*.json`)") == "templates-templatesjson"
    assert slug("Step 5: compare two candidates, paired") == "step-5-compare-two-candidates-paired"
    assert slug("`points` — one row per point") == "points--one-row-per-point"


def test_every_page_the_seeds_link_resolves_under_docs():
    problems = [f"{name} ({where}): {why}" for name, where in SEED_LINKS.items()
                if (why := broken(REPO / "docs" / "index.md", name))]
    assert not problems, problems


def test_seed_links_are_the_ones_listed():
    if not SEEDS.is_dir():
        pytest.skip(f"the seed documents are not at {SEEDS} on this machine")
    found = {m for path in SEEDS.glob("*.txt") for m in SEED_LINK.findall(path.read_text(encoding="utf-8"))}
    assert found == set(SEED_LINKS)


def test_every_relative_link_in_the_docs_resolves():
    problems = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for number, line in _outside_fences(page):
            for target in MD_LINK.findall(line):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):      # http:, https:, mailto: ...
                    continue
                why = broken(page, target)
                if why:
                    problems.append(f"{page.relative_to(REPO)}:{number}: {target}: {why}")
    assert not problems, "\n".join(problems)


def test_a_broken_link_is_caught(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A `code` heading\n", encoding="utf-8")
    (tmp_path / "other.md").write_text("# Other\n", encoding="utf-8")
    assert broken(page, "#a-code-heading") is None and broken(page, "other.md#other") is None
    assert broken(page, "missing.md") == f"no file {tmp_path / 'missing.md'}"
    assert broken(page, "other.md#nowhere") == "no heading for #nowhere in other.md"


# ---------------------------------------------------------------- docs/workflow.md

WORKFLOW = REPO / "docs" / "workflow.md"


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_the_group_tags_listed_are_the_ones_the_tools_read():
    from resolver.analysis import eval_groups
    from resolver.catalog.datasets import facets_from_groups
    from resolver.web.data import eval_facets, eval_matches_facets

    section = _section(WORKFLOW.read_text(encoding="utf-8"), "## Group tags")
    keys = re.findall(r"^\| `(\w+):` \|", section, re.MULTILINE)
    assert keys == ["family", "arch", "size", "quant"]
    # the scores table's column order, as the page states it
    assert "`family`, `size`,\n  `arch`, `runtime`, `quant` first" in section
    assert eval_groups.KEY_ORDER == ("family", "size", "arch", "runtime", "quant")
    tags = [["family:qwen3", "arch:moe", "size:large", "quant:awq"], ["family:llama", "arch:dense", "size:mid"]]
    assert eval_groups.group_keys(tags) == ["family", "size", "arch", "quant"]
    # evaluate.py's facets, and the leaderboard's checklists (one per key) built on them
    facets = [facets_from_groups(t) for t in tags]
    assert facets[0] == {"family": "qwen3", "arch": "moe", "size": "large", "quant": "awq"}
    import pandas as pd

    assert eval_facets(pd.DataFrame({"facets": facets})) == {
        "arch": ["dense", "moe"], "family": ["llama", "qwen3"], "quant": ["awq"], "size": ["large", "mid"]}
    # ticking values keeps the evals with one of them for every key ticked (the page's words)
    assert "keeps the evals that have one of them for each key ticked" in section
    assert eval_matches_facets(facets[0], {"size": ["large", "mid"], "arch": ["moe"]})
    assert not eval_matches_facets(facets[1], {"size": ["large", "mid"], "arch": ["moe"]})


def test_the_groups_filter_works_as_the_page_says():
    import duckdb

    from resolver.pointsdb import parse_filters

    page = WORKFLOW.read_text(encoding="utf-8")
    assert "a string item is one tag, a list item is an AND\n  of tags, and the items are OR-ed" in page
    con = duckdb.connect()
    con.execute("CREATE TABLE points (model VARCHAR, groups VARCHAR[])")
    con.execute("INSERT INTO points VALUES ('big-qwen', ['family:qwen3', 'size:large']), "
                "('small-qwen', ['family:qwen3', 'size:small']), ('big-llama', ['family:llama', 'size:large'])")

    def models(text):
        clause, params = parse_filters(text).sql()
        return sorted(r[0] for r in con.execute(f"SELECT model FROM points WHERE {clause}", params).fetchall())

    # pitfall 5 on the page: a flat list is OR, a nested list is AND
    assert models('{"groups": ["family:qwen3", "size:large"]}') == ["big-llama", "big-qwen", "small-qwen"]
    assert models('{"groups": [["family:qwen3", "size:large"]]}') == ["big-qwen"]
    assert '`{"groups": [["family:qwen3", "size:large"]]}`' in page


def workflow_blocks(text: str) -> list:
    """[(commands, shown output lines or None)] for each ```bash block of the page: its
    `python ...` lines (continuations joined), and the lines of a ```text block right after
    it (the output the page shows for the block's last command; `...` lines skipped)."""
    blocks = []
    for match in re.finditer(r"```bash\n(.*?)```\n(?:\n?```text\n(.*?)```)?", text, re.DOTALL):
        joined = match.group(1).replace("\\\n", " ")
        commands = [" ".join(line.split()) for line in joined.splitlines() if line.startswith("python ")]
        shown = None
        if match.group(2) is not None:
            shown = [line for line in match.group(2).splitlines() if line.strip() and line.strip() != "..."]
        blocks.append((commands, shown))
    return blocks


def test_workflow_blocks_are_read_as_written():
    page = ("```bash\npython a.py x \\\n    --y 1\n# a comment\npython b.py\n```\n\n```text\nout 1\n...\nout 2\n```\n"
            "```bash\npython c.py\n```\n")
    assert workflow_blocks(page) == [(["python a.py x --y 1", "python b.py"], ["out 1", "out 2"]),
                                     (["python c.py"], None)]


@pytest.mark.slow
@pytest.mark.seed_study
def test_workflow_commands_run_on_the_simulated_r12(tmp_path_factory, tmp_path):
    """Every command of docs/workflow.md, run as written in a folder that sees the simulated
    r12 study (tests/support/r12_study.py); the output the page shows is what it prints."""
    import shlex

    from tests.support.r12_study import PROFILES, run, study_root

    root = study_root(tmp_path_factory)
    for name in ("configs", "templates", "samplers", "data"):
        (tmp_path / name).symlink_to(root / name)       # outputs land in tmp_path, the study stays as built
    blocks = workflow_blocks(WORKFLOW.read_text(encoding="utf-8"))
    ran = 0
    for commands, shown in blocks:
        proc = None
        for command in commands:
            argv = shlex.split(command)[1:]
            if argv[:2] == ["-m", "resolver.r12sim"]:
                # the study the suite built is this command (with --root and --parallel of its own)
                assert argv[2:] == ["--density", "corner", "--profiles", ",".join(PROFILES)], command
                continue
            proc = run(tmp_path, argv, in_process=True)   # the commands' output is the point, not the process
            assert proc.returncode == 0 and "Traceback" not in proc.stderr, f"{command}\n{proc.stdout}{proc.stderr}"
            if "--output" in argv:
                assert (tmp_path / argv[argv.index("--output") + 1]).stat().st_size > 0, command
            ran += 1
        if shown:
            assert proc is not None
            printed = {" ".join(line.split()) for line in proc.stdout.splitlines()}
            missing = [line for line in shown if " ".join(line.split()) not in printed]
            assert not missing, f"{commands[-1]} no longer prints:\n" + "\n".join(missing)
    assert ran >= 15
