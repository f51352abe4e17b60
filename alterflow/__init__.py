"""alterflow: online schema changes for tablet-based analytic tables."""

__version__ = "0.1.0"
