"""The benches' result files: one JSON object a line, appended, so that a file keeps every run's figures."""

from __future__ import annotations

import json
from pathlib import Path


def append_json_line(path: Path, row: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(row) + "\n")
