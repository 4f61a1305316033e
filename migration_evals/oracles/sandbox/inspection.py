"""Reading an image's configuration from the engine's ``docker inspect`` answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from migration_evals.core.ports import ImageConfig

__all__ = ["image_config"]


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)  # the shell form of ENTRYPOINT or CMD as some builders store it
    return tuple(str(item) for item in value or ())


def image_config(attrs: Mapping[str, Any]) -> ImageConfig:
    """The part of an inspect answer (``Config``) that says how the image runs."""
    config: Mapping[str, Any] = attrs.get("Config") or {}
    env = (str(entry).partition("=")[0] for entry in config.get("Env") or ())
    healthcheck = config.get("Healthcheck")
    return ImageConfig(
        user=str(config.get("User") or ""),
        entrypoint=_strings(config.get("Entrypoint")),
        cmd=_strings(config.get("Cmd")),
        workdir=str(config.get("WorkingDir") or ""),
        exposed_ports=tuple(sorted(config.get("ExposedPorts") or {})),
        volumes=tuple(sorted(config.get("Volumes") or {})),
        env_names=tuple(sorted(set(env))),
        labels={str(k): str(v) for k, v in (config.get("Labels") or {}).items()},
        healthcheck=dict(healthcheck) if isinstance(healthcheck, Mapping) else None,
    )
