# resolver.plots's public names (its __all__): lazy_loader.attach_stub reads this file and loads a
# name's module on first use; type checkers read it as the package, and `x as x` is how a
# stub says a name is re-exported (docs/architecture.md).
from .capacity import frontier_figure as frontier_figure, peak_figure as peak_figure
from .cluster import cluster_figure as cluster_figure
from .compare import compare_figure as compare_figure
from .compression import compression_figure as compression_figure
from .fft import fft_figure as fft_figure
from .hazard import hazard_figure as hazard_figure
from .pairwise import pairwise_figure as pairwise_figure
from .scores import scores_figure as scores_figure
from .spiderweb import bar_figure as bar_figure, radar_figure as radar_figure
from .surface import surface_figure as surface_figure
