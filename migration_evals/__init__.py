"""migration-evals: grades batch-change pull requests through a cascade of oracle
tiers, with a scientific-integrity gate on every published number.

The one top-level package the distribution installs. Its subpackages: ``core`` (the
leaf: domain types, specs, store, ports), ``oracles`` (the cascade and its tiers),
``gate`` (statistics and the publication gate), ``miners`` (changeset providers and
survival mining) and ``bot`` (the composition root: CLI and GitHub App)."""
