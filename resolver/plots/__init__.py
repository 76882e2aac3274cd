"""Static figures (matplotlib / plotly -> PNG) for analyze.py and probe.py;
they only draw what resolver/analysis/ and resolver/probe/ computed.
"""
# Public names load on first use (resolver.lazy_exports; docs/architecture.md).
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver import lazy_exports

if TYPE_CHECKING:
    from resolver.plots.capacity import frontier_figure, peak_figure
    from resolver.plots.cluster import cluster_figure
    from resolver.plots.compare import compare_figure
    from resolver.plots.compression import compression_figure
    from resolver.plots.fft import fft_figure
    from resolver.plots.hazard import hazard_figure
    from resolver.plots.paired_coverage import paired_coverage_figure
    from resolver.plots.pairwise import pairwise_figure
    from resolver.plots.scores import scores_figure
    from resolver.plots.spiderweb import bar_figure, radar_figure
    from resolver.plots.surface import surface_figure

__all__ = [
    "bar_figure",
    "cluster_figure",
    "compare_figure",
    "compression_figure",
    "fft_figure",
    "frontier_figure",
    "hazard_figure",
    "paired_coverage_figure",
    "pairwise_figure",
    "peak_figure",
    "radar_figure",
    "scores_figure",
    "surface_figure",
]

_HOMES = {
    "bar_figure": "spiderweb",
    "cluster_figure": "cluster",
    "compare_figure": "compare",
    "compression_figure": "compression",
    "fft_figure": "fft",
    "frontier_figure": "capacity",
    "hazard_figure": "hazard",
    "paired_coverage_figure": "paired_coverage",
    "pairwise_figure": "pairwise",
    "peak_figure": "capacity",
    "radar_figure": "spiderweb",
    "scores_figure": "scores",
    "surface_figure": "surface",
}
_MODULES: set[str] = set()
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, _MODULES, globals())
