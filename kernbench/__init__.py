"""kernbench: reproducible comparisons of kernel machines and boosting ensembles."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kernbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
