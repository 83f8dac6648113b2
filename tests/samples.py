"""Where the tests find sample files.

The repository holds copies of the samples whose licences allow it (tests/data/samples, see its SOURCES.md), so
the tests of the project's own behaviour run in any clone. The rest of the shared sample pack lives outside the
repository (``../shared/samples`` beside the checkout, or ``$GAMMOND_SHARED/samples``); a test that needs it
skips and names the missing path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO_SAMPLES = ROOT / "tests" / "data" / "samples"
SHARED_SAMPLES = Path(os.environ.get("GAMMOND_SHARED", ROOT.parent / "shared")) / "samples"
_WHERE = (
    "the shared sample pack is not in the repository: put shared/ beside the checkout or set GAMMOND_SHARED"
)


def sample_path(pack: str, name: str) -> Path:
    """The repository's copy of ``pack/name``, else the shared pack's; skips the test when neither exists."""
    for base in (REPO_SAMPLES, SHARED_SAMPLES):
        path = base / pack / name
        if path.exists():
            return path
    pytest.skip(f"needs {SHARED_SAMPLES / pack / name} ({_WHERE})")


def sample_files(pack: str, pattern: str) -> list[Path]:
    """Every sample matching ``pattern``: the repository's copies, plus the shared pack's others when present."""
    found = {p.name: p for p in sorted((SHARED_SAMPLES / pack).glob(pattern))}
    found.update({p.name: p for p in sorted((REPO_SAMPLES / pack).glob(pattern))})
    return [found[name] for name in sorted(found)]


def needs_shared_pack(pack: str) -> pytest.MarkDecorator:
    """For a test about the shared pack itself (its full file list), not about the project's code."""
    path = SHARED_SAMPLES / pack
    return pytest.mark.skipif(not path.is_dir(), reason=f"needs {path} ({_WHERE})")
