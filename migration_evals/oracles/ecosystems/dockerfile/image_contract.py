"""The image contract: a base-image bump must not change how the built image runs.

Base and patched image configurations are compared field by field: user, entrypoint,
cmd, working directory, exposed ports, volumes, the names of environment variables (less
those the recipe expects a newer base to change, e.g. ``*_VERSION``), the labels the recipe
lists, and the healthcheck. Each difference is one line of evidence, worded like
``USER: base app, patched root``. Two images neither of which says what it runs (no
entrypoint, no command: a replay miss's empty answer, or an image made FROM scratch)
leave nothing to compare or start, which is never a pass.

The recipe's ``sandbox.image_contract`` section holds the rules::

    labels: [org.opencontainers.image.source]   # labels compared by value
    env_ignore: ["*_VERSION", GPG_KEY]          # env names a newer base may add or drop
    smoke_command: []                           # CMD to start the image with; [] = its own
    stay_up_s: 5                                # without a smoke command: up this long, or exit 0
    smoke_script: smoke-test.sh                 # a repository's own smoke test, run when present
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from migration_evals.core.ports import ImageConfig
from migration_evals.core.spec_types import ImageContractSpec

__all__ = ["ContractRules", "config_differences", "nothing_to_compare"]


@dataclass(frozen=True, slots=True)
class ContractRules:
    labels: tuple[str, ...] = ()
    env_ignore: tuple[str, ...] = ()
    smoke_command: tuple[str, ...] = ()
    stay_up_s: float = 5.0
    smoke_script: str | None = None

    @classmethod
    def from_recipe(cls, spec: ImageContractSpec | None) -> ContractRules:
        if spec is None:
            return cls()
        return cls(
            labels=spec.labels,
            env_ignore=spec.env_ignore,
            smoke_command=spec.smoke_command,
            stay_up_s=spec.stay_up_s,
            smoke_script=spec.smoke_script,
        )


def _shown(value: Sequence[str] | str | None, empty: str = "(none)") -> str:
    if value is None or len(value) == 0:
        return empty
    if isinstance(value, str):
        return value
    return " ".join(value)


def _field(
    name: str,
    base: Sequence[str] | str | None,
    patched: Sequence[str] | str | None,
    empty: str = "(none)",
) -> str | None:
    if base == patched:
        return None
    return f"{name}: base {_shown(base, empty)}, patched {_shown(patched, empty)}"


def _env_difference(base: ImageConfig, patched: ImageConfig, ignore: Sequence[str]) -> str | None:
    def kept(names: Sequence[str]) -> set[str]:
        return {n for n in names if not any(fnmatch.fnmatchcase(n, p) for p in ignore)}

    before, after = kept(base.env_names), kept(patched.env_names)
    if before == after:
        return None
    parts = []
    if before - after:
        parts.append(f"only in base {' '.join(sorted(before - after))}")
    if after - before:
        parts.append(f"only in patched {' '.join(sorted(after - before))}")
    return "ENV names: " + "; ".join(parts)


def _healthcheck(config: ImageConfig) -> str | None:
    check = config.healthcheck
    if not check:
        return None
    test = check.get("Test") or []
    return " ".join(str(part) for part in test) or "(set)"


def config_differences(base: ImageConfig, patched: ImageConfig, rules: ContractRules) -> list[str]:
    """Each field in which the patched image runs differently from the base image."""
    found = [
        _field("USER", base.user, patched.user, empty="(unset: root)"),
        _field("ENTRYPOINT", base.entrypoint, patched.entrypoint),
        _field("CMD", base.cmd, patched.cmd),
        _field("WORKDIR", base.workdir, patched.workdir, empty="(unset: /)"),
        _field("EXPOSE", sorted(base.exposed_ports), sorted(patched.exposed_ports)),
        _field("VOLUME", sorted(base.volumes), sorted(patched.volumes)),
        _env_difference(base, patched, rules.env_ignore),
        *(
            _field(f"LABEL {name}", base.labels.get(name), patched.labels.get(name))
            for name in rules.labels
        ),
        _field("HEALTHCHECK", _healthcheck(base), _healthcheck(patched)),
    ]
    if base.healthcheck != patched.healthcheck and found[-1] is None:
        found[-1] = "HEALTHCHECK: its timing or retries differ"
    return [line for line in found if line is not None]


def nothing_to_compare(base: ImageConfig, patched: ImageConfig) -> bool:
    """Neither image says what it runs: no entrypoint and no command in either."""
    return not (base.entrypoint or base.cmd or patched.entrypoint or patched.cmd)
