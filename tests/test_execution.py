"""Choosing the executor: Ray by default when installed, local on request, bad choices refused early."""

from __future__ import annotations

import pytest

from kernelevolve.errors import UserError
from kernelevolve.execution import check_executor, default_executor


def test_ray_is_the_default_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    monkeypatch.delenv("KE_EXECUTOR", raising=False)
    assert default_executor() == "ray"
    monkeypatch.setenv("KE_EXECUTOR", "local")
    assert default_executor() == "local"


@pytest.mark.parametrize(("kind", "address", "fragment"), [
    ("spark", None, "unknown executor 'spark'"),
    ("local", "10.0.0.1:6379", "--ray-address needs --executor ray"),
])
def test_bad_executor_choices(kind: str, address: str | None, fragment: str) -> None:
    with pytest.raises(UserError, match=fragment):
        check_executor(kind, address)


def test_unreachable_address_is_refused_fast() -> None:
    import time

    from interpreters.ray_pool import check_reachable

    started = time.monotonic()
    with pytest.raises(ConnectionError, match="nothing answers at 127.0.0.1:1"):
        check_reachable("127.0.0.1:1")
    assert time.monotonic() - started < 10
    with pytest.raises(ValueError, match="expected HOST:PORT"):
        check_reachable("no-port-here")
