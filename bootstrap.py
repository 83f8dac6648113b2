#!/usr/bin/env python3
"""Set gammond up in a virtual environment of its own and run it: the README's two commands.

    python3 bootstrap.py run [gammond run options]     # install, then the daemon on its embedded default
    python3 bootstrap.py test [pytest options]         # install with the dev extras, then the test suite
    python3 bootstrap.py --venv /opt/gammond install   # a plain (not editable) install, e.g. for systemd

Standard library only, so that it works on a stock Debian or Ubuntu Python: the system interpreter refuses
``pip install`` (PEP 668, "externally-managed-environment"), and often has neither ``ensurepip``
(python3-venv) nor pip. The environment is made with ``venv``; without ``ensurepip`` it is made bare and pip's
own wheel is fetched from PyPI (checked against PyPI's sha256) and installs itself. A rerun with nothing
changed skips pip entirely: the install is recorded in a stamp file keyed on the packaging inputs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEFAULT_VENV = ROOT / ".venv"
STAMP = "gammond-bootstrap.json"
# What decides the installed result of an editable install; code edits need no reinstall.
PACKAGING_INPUTS = ("pyproject.toml", "setup.py", "engine/_movegen.c")
PIP_JSON = "https://pypi.org/pypi/pip/json"
MIN_PYTHON = (3, 11)
USAGE = "usage: python3 bootstrap.py [--venv DIR] {run,test,install} [ARGS...]"


class BootstrapError(Exception):
    """A set-up step failed; the message says what to do."""


def say(text: str) -> None:
    print(f"bootstrap: {text}", file=sys.stderr, flush=True)


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_works(venv: Path) -> bool:
    """True when the environment's interpreter starts and is new enough (a moved or stale one is remade)."""
    python = venv_python(venv)
    if not python.exists():
        return False
    check = f"import sys; sys.exit(sys.version_info[:2] < {MIN_PYTHON!r})"
    return subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0


def has_pip(python: Path) -> bool:
    return subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True).returncode == 0


def has_ensurepip() -> bool:
    # Debian and Ubuntu ship ensurepip in python3-venv only; the venv module itself is always there.
    try:
        import ensurepip  # noqa: F401
    except ImportError:
        return False
    return True


def fetch_pip_wheel(folder: Path) -> Path:
    """pip's newest universal wheel from PyPI, verified against the sha256 that PyPI publishes."""
    try:
        with urllib.request.urlopen(PIP_JSON, timeout=60) as reply:
            meta = json.load(reply)
        wheel = next(
            f
            for f in meta["urls"]
            if f["packagetype"] == "bdist_wheel" and f["filename"].endswith("-py3-none-any.whl")
        )
        # PyPI gives absolute URLs; a mirror may give them relative to the JSON document.
        with urllib.request.urlopen(urllib.parse.urljoin(PIP_JSON, wheel["url"]), timeout=120) as reply:
            data = reply.read()
    except (OSError, ValueError, KeyError, StopIteration) as exc:
        raise BootstrapError(
            f"could not fetch pip from PyPI ({exc}); install python3-venv (or python3-pip) and rerun"
        ) from exc
    if hashlib.sha256(data).hexdigest() != wheel["digests"]["sha256"]:
        raise BootstrapError(f"{wheel['filename']} from PyPI does not match its sha256; rerun")
    path = folder / wheel["filename"]
    path.write_bytes(data)
    return path


def make_venv(venv: Path) -> Path:
    import venv as venv_module

    with_pip = has_ensurepip()
    say(f"making the virtual environment {venv} ({'with' if with_pip else 'without'} ensurepip)")
    try:
        venv_module.EnvBuilder(with_pip=with_pip, clear=venv.exists(), symlinks=os.name != "nt").create(venv)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BootstrapError(f"could not make {venv}: {exc}") from exc
    python = venv_python(venv)
    if not has_pip(python):
        say("no pip in the new environment: fetching pip's wheel from PyPI")
        with tempfile.TemporaryDirectory() as tmp:
            wheel = fetch_pip_wheel(Path(tmp))
            # A pip wheel runs pip from inside itself (pip/__main__.py supports this) to install itself.
            run([str(python), f"{wheel}/pip", "install", "--no-index", "--quiet", str(wheel)])
    return python


def inputs_digest() -> str:
    digest = hashlib.sha256()
    for name in PACKAGING_INPUTS:
        path = ROOT / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"") + b"\0")
    return digest.hexdigest()


def read_stamp(venv: Path) -> dict[str, object]:
    try:
        stamp = json.loads((venv / STAMP).read_text())
    except (OSError, ValueError):
        return {}
    return stamp if isinstance(stamp, dict) else {}


def run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, cwd=ROOT, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        raise BootstrapError(f"{' '.join(cmd)} failed with status {result.returncode}")


def ensure_installed(venv: Path, extras: str, editable: bool) -> Path:
    """The environment's interpreter, with gammond (and ``extras``) installed; pip runs only when needed."""
    python = venv_python(venv) if venv_works(venv) else make_venv(venv)
    stamp = read_stamp(venv)
    digest = inputs_digest()
    wanted = {"inputs": digest, "editable": editable, "root": str(ROOT)}
    installed_extras = set(str(stamp.get("extras", "")).split(",")) - {""}
    if editable and all(stamp.get(k) == v for k, v in wanted.items()) and extras in installed_extras | {""}:
        return python
    if not has_pip(python):
        raise BootstrapError(f"{venv} has no pip; remove it and rerun")
    target = f"{ROOT}[{extras}]" if extras else str(ROOT)
    say(f"installing gammond{f'[{extras}]' if extras else ''} into {venv} (a minute the first time)")
    cmd = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*cmd, *(["--editable", target] if editable else [target])])
    keep = installed_extras | {extras} if stamp.get("inputs") == digest else {extras}
    stamp = {**wanted, "extras": ",".join(sorted(keep - {""}))}
    (venv / STAMP).write_text(json.dumps(stamp) + "\n")
    return python


def exec_(argv: list[str]) -> None:
    """Replace this process so that signals (Ctrl-C, SIGTERM) reach the daemon or pytest directly."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # no exec semantics there
        sys.exit(subprocess.run(argv).returncode)
    os.execv(argv[0], argv)


def main(argv: list[str]) -> int:
    if sys.version_info[:2] < MIN_PYTHON:
        say(
            f"gammond needs Python {'.'.join(map(str, MIN_PYTHON))} or newer; this is {sys.version.split()[0]}"
        )
        return 2
    venv = DEFAULT_VENV
    if argv[:1] == ["--venv"] and len(argv) >= 2:
        venv, argv = Path(argv[1]).resolve(), argv[2:]
    if not argv or argv[0] not in ("run", "test", "install"):
        print(USAGE, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "install":
            python = ensure_installed(venv, "", editable=False)
            say(f"installed: {python.parent / 'gammond'}")
            return 0
        if command == "test":
            python = ensure_installed(venv, "dev", editable=True)
            os.chdir(ROOT)
            exec_([str(python), "-m", "pytest", *rest])
        python = ensure_installed(venv, "", editable=True)
        exec_([str(python.parent / "gammond"), "run", *rest])
    except BootstrapError as exc:
        say(f"error: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
