"""Statistics, judge agreement, gold-anchor correlation, contamination, the gate, reports."""
