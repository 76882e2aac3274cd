"""Frequency analysis of prompt token sequences (probe.py fft).

Each prompt, rendered as sent and tokenised, is a sequence of token ids. Its
magnitude spectrum (mean removed, ``numpy.fft.rfft``) shows structure that repeats
at a fixed distance in tokens: a table row of 12 tokens puts a peak at 1/12
cycles/token. Spectra of different lengths are resampled onto one grid of
``bins`` frequencies in [0, 0.5] cycles/token (keeping the largest magnitude that
falls on each grid point, so peaks survive), scaled by 1/length (a periodic
component then has the same height in a long and a short prompt), and averaged over
the samples of a point, then over the points sharing a value of the view's group_by
dimension (within one value of its facet_by dimensions, when the view has them).
"""
from __future__ import annotations

from os import PathLike
from typing import Any, Callable, Literal, Sequence

import numpy as np
import pandas as pd

from resolver.analysis import TaskView, to_plain, view_points
from resolver.ingest.raw_records import point_records
from resolver.probe.outputs import FftOutput, FftSpectrum
from resolver.probe.spectrum_cache import SpectrumCache
from resolver.probe.tokenizers import Tokenizer, render_prompt

FFT_BINS = 256
FREQUENCIES = np.linspace(0.0, 0.5, FFT_BINS)


def token_spectrum(ids: Sequence[int], bins: int = FFT_BINS) -> np.ndarray:
    """Magnitude spectrum of a token-id sequence on `bins` frequencies from 0 to 0.5 cycles/token."""
    x = np.asarray(ids, dtype=float)
    grid = np.linspace(0.0, 0.5, bins)
    if x.size < 2:
        return np.zeros(bins)
    magnitude = np.abs(np.fft.rfft(x - x.mean())) / x.size
    freqs = np.fft.rfftfreq(x.size)
    if freqs.size <= bins:  # short sequence: fewer transform bins than grid points
        return np.interp(grid, freqs, magnitude)
    # long sequence: each grid point keeps the largest magnitude among the transform
    # frequencies nearest to it, so a sharp periodic peak survives the resampling
    nearest = np.clip(np.rint(freqs / 0.5 * (bins - 1)).astype(int), 0, bins - 1)
    out = np.zeros(bins)
    np.maximum.at(out, nearest, magnitude)
    return out


def mean_spectrum(sequences: Sequence[Sequence[int]], bins: int = FFT_BINS) -> np.ndarray:
    """Average of the spectra of several sequences (zeros when there are none)."""
    spectra = [token_spectrum(s, bins) for s in sequences if len(s) >= 2]
    return np.mean(spectra, axis=0) if spectra else np.zeros(bins)


def point_spectrum(point: pd.Series, db_dir: str | PathLike[str], tokenizer: Tokenizer) -> tuple[np.ndarray, int]:
    """(mean spectrum over the point's samples, number of samples) from its raw NDJSON."""
    sequences = [tokenizer.encode(render_prompt(r.get("messages"), tokenizer)) for r in point_records(point, db_dir)]
    return mean_spectrum(sequences), len(sequences)


def fft_table(points: pd.DataFrame, views: list[TaskView], db_dir: str | PathLike[str], tokenizers: dict,
              progress: Callable[..., Any] | Literal[False] | None = None,
              store: SpectrumCache | None = None) -> pd.DataFrame:
    """One row per (view, facet, eval, group_by value): spectrum (array), points, samples.

    A view with ``facet_by`` gets one facet per value (combination) of those dimensions,
    named ``facet`` = "dim=value, ..." (empty for a view without facet_by): one panel each.
    `points` must have id, eval_id, model, template, sampler, base_task, params,
    sources and the views' dimension columns; `tokenizers` maps eval_id -> tokenizer.
    `progress`: a tqdm-like factory the command hands in for a bar over the points
    (none or False: no bar). `store`: where point spectra are kept between runs (the
    dataset's cache directory; none: computed every time).
    """
    cache: dict[int, tuple[np.ndarray, int]] = {}
    needed = pd.concat([view_points(points, v) for v in views]) if views else points.iloc[0:0]
    rows_needed = needed.drop_duplicates("id").iterrows()
    if progress:
        rows_needed = progress(iterable=rows_needed, total=needed["id"].nunique(), desc="fft points")
    for _, point in rows_needed:
        cache[int(point["id"])] = _stored_spectrum(point, db_dir, tokenizers[point["eval_id"]], store)
    rows = []
    for view in views:
        dim, facets = view.dims[0], [f for f in view.facet_by if f != view.dims[0]]
        part = view_points(points, view)
        for key, group in part.groupby(["eval_id", *facets, dim], sort=True, dropna=False):
            eval_id, *facet_values, value = key
            spectra = [cache[int(i)] for i in group["id"]]
            weights = np.array([n for _, n in spectra], dtype=float)
            stacked = np.array([s for s, _ in spectra])
            spectrum = (weights @ stacked / weights.sum()) if weights.sum() > 0 else np.zeros(FFT_BINS)
            rows.append({"base_task": view.base_task, "view": view.view, "dimension": dim,
                         "facet": facet_name(facets, facet_values), "eval_id": eval_id, "value": value,
                         "points": len(group), "samples": int(weights.sum()), "spectrum": spectrum})
    return pd.DataFrame(rows)


def fft_output(table: pd.DataFrame) -> FftOutput:
    """probe.py fft's JSON output (docs/probe.md): the frequency axis and fft_table's rows, whose
    columns are FftSpectrum's fields (the figures and the explorer read the table itself)."""
    rows = to_plain(table.assign(spectrum=[s.tolist() for s in table["spectrum"]]).to_dict(orient="records"),
                    finite=True)
    return FftOutput(frequencies=FREQUENCIES.tolist(), spectra=[FftSpectrum.model_validate(row) for row in rows])


def _stored_spectrum(point: pd.Series, db_dir: str | PathLike[str], tokenizer: Tokenizer,
                     store: SpectrumCache | None) -> tuple[np.ndarray, int]:
    if store is None:
        return point_spectrum(point, db_dir, tokenizer)
    key = store.key(point, db_dir, tokenizer.name, FFT_BINS)
    found = store.get(key)
    if found is None:
        found = point_spectrum(point, db_dir, tokenizer)
        store.put(key, *found)
    return found


def facet_name(dims: Sequence[str], values: Sequence[object]) -> str:
    """'params.operation=sum, params.format=csv' for a facet ('' for none), whole numbers without '.0'."""
    def text(v: object) -> str:
        return str(int(v)) if isinstance(v, (float, np.floating)) and float(v).is_integer() else str(v)
    return ", ".join(f"{d}={text(v)}" for d, v in zip(dims, values))


def dominant_frequency(spectrum: np.ndarray, skip_bins: int = 2) -> float:
    """Frequency (cycles/token) of the largest peak, ignoring the lowest bins (slow drift)."""
    return float(FREQUENCIES[skip_bins + int(np.argmax(spectrum[skip_bins:]))])
