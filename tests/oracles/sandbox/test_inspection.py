"""An image's configuration read from the engine's inspect answer."""

from __future__ import annotations

from migration_evals.oracles.sandbox.inspection import image_config


def test_the_configuration_keeps_how_the_image_runs_and_only_env_names() -> None:
    attrs = {
        "Id": "sha256:abc",
        "Config": {
            "User": "app",
            "Entrypoint": ["/entry"],
            "Cmd": None,
            "WorkingDir": "/srv",
            "ExposedPorts": {"8080/tcp": {}, "443/tcp": {}},
            "Volumes": {"/data": {}},
            "Env": ["PATH=/bin", "API_TOKEN=secret-value", "LANG=C.UTF-8"],
            "Labels": {"a": "b"},
            "Healthcheck": {"Test": ["CMD", "true"]},
        },
    }
    config = image_config(attrs)
    assert config.to_dict() == {
        "user": "app",
        "entrypoint": ["/entry"],
        "cmd": [],
        "workdir": "/srv",
        "exposed_ports": ["443/tcp", "8080/tcp"],
        "volumes": ["/data"],
        "env_names": ["API_TOKEN", "LANG", "PATH"],
        "labels": {"a": "b"},
        "healthcheck": {"Test": ["CMD", "true"]},
    }
    assert "secret-value" not in repr(config)


def test_an_image_without_configuration_reads_as_empty() -> None:
    assert image_config({"Config": None}).to_dict() == image_config({}).to_dict()
