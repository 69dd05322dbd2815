"""Reproducibility pipeline for attention-based neural machine translation papers (Luong et al. 2015 and others)."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("nmt-repro")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+source"
