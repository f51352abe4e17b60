"""Heavyweight rewrites: converting history into a shadow index."""
