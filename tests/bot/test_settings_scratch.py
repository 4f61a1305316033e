"""Where tier 1's apply trees go."""

from __future__ import annotations

from pathlib import Path

from migration_evals.bot.settings import RAM_FOLDER, default_scratch_dir, settings_from_env


def test_an_explicit_scratch_folder_wins(tmp_path: Path) -> None:
    env = {"MIGRATION_EVALS_SCRATCH_DIR": str(tmp_path)}
    assert settings_from_env(env).scratch_dir == tmp_path


def test_the_default_is_ram_backed_when_the_system_has_it() -> None:
    expected = RAM_FOLDER if RAM_FOLDER.is_dir() else None
    assert default_scratch_dir({}) in (expected, None)
