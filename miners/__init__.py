"""Changeset providers, survival mining, gold-anchor growth and the retroactive-scoring unlock."""
