"""Go's report format: a run with a package whose test binary did not build is told
apart."""

from __future__ import annotations

from migration_evals.oracles.ecosystems.go.reports import stopped_in_a_package_build


def test_a_run_whose_test_binary_did_not_build_is_told_apart() -> None:
    go_failed = (
        '{"Action":"output","Package":"m/kv","Output":"FAIL\\tm/kv [build failed]\\n"}\n'
        '{"Action":"fail","Package":"m/kv"}'
    )
    assert stopped_in_a_package_build(1, go_failed)
    assert stopped_in_a_package_build(2, "FAIL\tm/kv [setup failed]\n")
    assert not stopped_in_a_package_build(0, go_failed)


def test_a_build_failure_line_printed_by_a_running_test_is_not_one() -> None:
    """A package whose tests ran did build, whatever its output says."""
    printed = (
        '{"Action":"run","Package":"m/kv","Test":"TestA"}\n'
        '{"Action":"output","Package":"m/kv","Output":"FAIL\\tm/kv [build failed]\\n"}\n'
        '{"Action":"fail","Package":"m/kv","Test":"TestA"}'
    )
    assert not stopped_in_a_package_build(1, printed)
    other = '{"Action":"output","Package":"m/a","Output":"FAIL\\tm/b [build failed]\\n"}'
    assert not stopped_in_a_package_build(1, other)
