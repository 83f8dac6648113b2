"""train.progress without tqdm: a line per step, and a generator with a total is streamed, not drained first."""

from __future__ import annotations

import sys

import pytest

from train.progress import progress


def test_fallback_streams_when_the_total_is_given(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    produced: list[int] = []

    def results():  # type: ignore[no-untyped-def]
        for i in range(3):
            produced.append(i)
            yield i

    bar = progress(results(), desc="chunks", total=3)
    assert next(bar) == 0 and produced == [0]  # the pool's later results are not awaited
    assert list(bar) == [1, 2]
    assert "chunks 3/3" in capsys.readouterr().err


def test_fallback_counts_an_iterable_without_a_total(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert list(progress(iter("ab"), desc="x")) == ["a", "b"]
    assert "x 2/2" in capsys.readouterr().err
