"""The shared analyze.py plumbing: output writing (resolver.cli.analyze.output), tables, JSON safety."""
import json

import numpy as np
import pytest

from resolver.analysis import common
from resolver.cli.analyze import output
from resolver.core import markdown_table, plain_table
from resolver.core.errors import UserError


def test_write_output_text_to_stream_and_file(tmp_path, capsys):
    assert output.write_output("x.md", "hello", None) is None
    assert capsys.readouterr().out == "hello\n"
    path = output.write_output("x.md", "hello", tmp_path / "sub")
    assert path == tmp_path / "sub" / "x.md"
    assert path.read_text() == "hello\n"


def test_write_output_bytes_and_figure(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = output.write_output("b.bin", b"\x00\x01", tmp_path)
    assert path.read_bytes() == b"\x00\x01"
    fig = plt.figure(figsize=(3, 2), dpi=100)
    png = output.write_output("f.png", fig, tmp_path)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_write_file_unwritable_is_user_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError):
        output.write_file(blocker / "inside.md", "text")


def test_markdown_table_escapes_and_aligns():
    text = markdown_table([["a|b", 1.5]], ["name", "value"], ["l", "r"])
    lines = text.splitlines()
    assert lines[0] == "| name | value |"
    assert lines[1] == "|---|---:|"
    assert lines[2] == "| a\\|b | 1.5 |"


def test_slug_and_output_name():
    assert output.slug("Qwen/Qwen3 8B") == "Qwen_Qwen3_8B"
    assert output.slug("") == "all"
    assert output.output_name("cluster", None, "params.length", ext="md") == "cluster_params.length.md"


def test_to_json_handles_numpy_and_nan():
    data = {"a": np.float64(0.5), "b": np.int64(3), "c": float("nan"), "d": np.array([1, 2])}
    assert json.loads(common.to_json(data)) == {"a": 0.5, "b": 3, "c": None, "d": [1, 2]}


def test_plain_table_columns_line_up():
    text = plain_table([["abc", "1"], ["d", "22"]], ["name", "n"])
    rows = text.splitlines()
    assert rows[0].index("n", 4) == rows[2].index("1")


def test_open_dataset_missing_file_is_user_error(tmp_path):
    with pytest.raises(UserError, match="dataset file not found"):
        common.open_dataset(tmp_path / "nope.json")
