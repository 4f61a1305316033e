"""The oracle cascade, its tiers (apply, compile, tests, judge) and their adapters."""
