"""bench.pruning: the loss arithmetic, the folder@keep spec, and a tiny run against the unpruned search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import pruning
from engine.analyser import PRUNE_DIR
from engine.evaluator import MODELS_DIR
from engine.position import Position
from engine.search import PRUNE_KEEP


def test_compare_prices_the_pruned_choice_by_the_reference() -> None:
    a, b, c = (Position.from_points({k: 15}) for k in (4, 5, 6))
    # The first key is a search's choice; c's 0.35 in the first reference is a 0-ply value of a filtered move.
    reference = [{a: 0.30, b: 0.25, c: 0.35}, {a: 0.5, b: 0.5}]
    pruned = [{b: 0.40, a: 0.20}, {b: 0.6, a: 0.1}]
    assert pruning.compare(reference, pruned).tolist() == pytest.approx([0.05, 0.0])


def test_parse_spec() -> None:
    assert pruning.parse_spec("nets/prune") == (Path("nets/prune"), PRUNE_KEEP)
    assert pruning.parse_spec("nets/prune@8") == (Path("nets/prune"), 8)
    with pytest.raises(SystemExit, match="whole number"):
        pruning.parse_spec("nets/prune@x")
    with pytest.raises(SystemExit, match="at least 1"):
        pruning.parse_spec("nets/prune@0")


@pytest.mark.skipif(not (MODELS_DIR / PRUNE_DIR / "manifest.json").exists(), reason="no shipped pruning nets")
def test_a_pruner_that_keeps_every_play_chooses_as_the_unpruned_search(tmp_path: Path) -> None:
    out = tmp_path / "pruning.jsonl"
    samples = pruning.load_samples(pruning.DUMPS, 2)
    assert [s.position for s in samples] and all(len(s.dice) == 2 for s in samples)
    pruning.main(["--n", "2", "--prune", f"{MODELS_DIR / PRUNE_DIR}@999", "--out", str(out)])
    row = json.loads(out.read_text())
    assert (row["n"], row["keep"], row["differ"], row["loss_memg"]) == (2, 999, 0, 0.0)
