"""The first run (issue 16, item 3): the README's two set-up commands, bootstrap.py behind them, .ci/run and the
deployment files agree with each other; bootstrap.py skips pip when nothing changed and checks what it fetches."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bootstrap() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gammond_bootstrap", ROOT / "bootstrap.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_the_readme_has_two_set_up_commands_and_ci_runs_the_test_one() -> None:
    commands = _setup_commands()
    assert commands == ["python3 bootstrap.py run", "python3 bootstrap.py test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci.splitlines()  # verbatim, on a line of its own
    assert "pip install" not in ci  # PEP 668: no system-wide install


def test_the_systemd_unit_installs_and_starts_what_bootstrap_makes() -> None:
    unit = (ROOT / "deploy" / "gammond.service").read_text()
    m = re.search(r"bootstrap\.py --venv (\S+) install", unit)
    assert m, "the unit's install steps use bootstrap.py"
    assert f"ExecStart={m[1]}/bin/gammond run " in unit
    assert "pip install" not in unit


def test_the_container_example_publishes_both_ports() -> None:
    from bot.config import EmbeddedServerConfig

    text = (ROOT / "deploy" / "Containerfile").read_text()
    defaults = EmbeddedServerConfig()
    exposed = re.search(r"^EXPOSE (.*)$", text, re.M)
    assert exposed and set(exposed[1].split()) == {str(defaults.port), str(defaults.web_port)}
    for port in (defaults.port, defaults.web_port):
        assert f"-p 127.0.0.1:{port}:{port}" in text


def test_a_rerun_with_nothing_changed_skips_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = _bootstrap()
    for name in b.PACKAGING_INPUTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    monkeypatch.setattr(b, "ROOT", tmp_path)
    venv = tmp_path / ".venv"
    (venv / "bin").mkdir(parents=True)
    monkeypatch.setattr(b, "venv_works", lambda v: True)
    monkeypatch.setattr(b, "has_pip", lambda p: True)
    calls: list[list[str]] = []
    monkeypatch.setattr(b, "run", calls.append)

    b.ensure_installed(venv, "dev", editable=True)
    assert len(calls) == 1 and calls[0][-2:] == ["--editable", f"{tmp_path}[dev]"]
    b.ensure_installed(venv, "dev", editable=True)
    b.ensure_installed(venv, "", editable=True)  # the dev install holds the runtime one
    assert len(calls) == 1
    (tmp_path / "pyproject.toml").write_text("changed")
    b.ensure_installed(venv, "", editable=True)
    assert len(calls) == 2 and calls[1][-2:] == ["--editable", str(tmp_path)]
    b.ensure_installed(venv, "dev", editable=True)  # the new install lacks the dev extras
    assert len(calls) == 3
    b.ensure_installed(venv, "", editable=False)  # a plain install always runs pip
    assert len(calls) == 4 and calls[3][-1] == str(tmp_path)


class _Reply(io.BytesIO):
    def __enter__(self) -> _Reply:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_pip_from_pypi_is_checked_against_its_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    b = _bootstrap()
    wheel = b"not really a wheel"
    files = [
        {"packagetype": "sdist", "filename": "pip-1.tar.gz", "url": "x", "digests": {"sha256": ""}},
        {
            "packagetype": "bdist_wheel",
            "filename": "pip-1-py3-none-any.whl",
            "url": "../../packages/pip-1-py3-none-any.whl",  # a mirror's relative URL
            "digests": {"sha256": hashlib.sha256(wheel).hexdigest()},
        },
    ]
    asked: list[str] = []

    def urlopen(url: str, timeout: float) -> _Reply:
        asked.append(url)
        return _Reply(json.dumps({"urls": files}).encode() if url == b.PIP_JSON else wheel)

    monkeypatch.setattr(b.urllib.request, "urlopen", urlopen)
    path = b.fetch_pip_wheel(tmp_path)
    assert path.read_bytes() == wheel and path.name == "pip-1-py3-none-any.whl"
    assert asked[1] == "https://pypi.org/packages/pip-1-py3-none-any.whl"
    files[1]["digests"] = {"sha256": "0" * 64}
    with pytest.raises(b.BootstrapError, match="sha256"):
        b.fetch_pip_wheel(tmp_path)


def test_a_wrong_command_gets_the_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    b = _bootstrap()
    assert b.main([]) == 2 and "usage: python3 bootstrap.py" in capsys.readouterr().err
    assert b.main(["--venv", "x", "nonsense"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
