"""Evaluators: a batch of positions in, gnubg's five cumulative probabilities out.

Each row is (win, win gammon, win backgammon, lose gammon, lose backgammon) for the player on roll *before* rolling,
gammons including backgammons, as gnubg reports them. The composite evaluator routes every position to the most
exact source that applies: a finished game is scored, bearoff positions go to the exact databases when they are
available, the rest to the neural net of the position's class, and with no model file to BRAS as a last resort.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.encoding import ENCODERS, boards_to_positions, positions_to_array
from engine.errors import EngineError
from engine.moves import c_extension, uint8_boards
from engine.position import Position, PositionClass

WIN, WIN_G, WIN_BG, LOSE_G, LOSE_BG = range(5)
MODELS_DIR = Path(__file__).parent / "data" / "models"


class ModelError(EngineError):
    """A model file that is missing, unreadable or of the wrong shape."""


class Evaluator(Protocol):
    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        """float64 array of shape (len(positions), 5)."""
        ...


def money_equity(probs: np.ndarray) -> np.ndarray:
    """Cubeless money equity of gnubg's 5 outputs: 2w - 1 + wg - lg + wbg - lbg."""
    p = np.asarray(probs, dtype=np.float64)
    return 2.0 * p[..., WIN] - 1.0 + p[..., WIN_G] - p[..., LOSE_G] + p[..., WIN_BG] - p[..., LOSE_BG]


def invert(probs: np.ndarray) -> np.ndarray:
    """The same outcome seen by the other player."""
    p = np.asarray(probs, dtype=np.float64)
    out = np.empty_like(p)
    out[..., WIN] = 1.0 - p[..., WIN]
    out[..., WIN_G] = p[..., LOSE_G]
    out[..., WIN_BG] = p[..., LOSE_BG]
    out[..., LOSE_G] = p[..., WIN_G]
    out[..., LOSE_BG] = p[..., WIN_BG]
    return out


def sanitise(probs: np.ndarray) -> np.ndarray:
    """Clip to [0, 1] and keep the cumulative order gnubg guarantees (bg <= gammon <= win or loss)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 0.0, 1.0)
    p[..., WIN_G] = np.minimum(p[..., WIN_G], p[..., WIN])
    p[..., WIN_BG] = np.minimum(p[..., WIN_BG], p[..., WIN_G])
    p[..., LOSE_G] = np.minimum(p[..., LOSE_G], 1.0 - p[..., WIN])
    p[..., LOSE_BG] = np.minimum(p[..., LOSE_BG], p[..., LOSE_G])
    return p


def terminal_probs(position: Position) -> np.ndarray:
    """Outcome of a finished game from the view of the player 'on roll' in ``position``."""
    if not any(position.me):
        winner, loser = position.me, position.opp
        sign = 1
    elif not any(position.opp):
        winner, loser = position.opp, position.me
        sign = -1
    else:
        raise EngineError(f"{position.position_id} is not a finished game")
    del winner
    gammon = sum(loser) == 15
    # Backgammon: the loser still has a chequer on the bar or in the winner's home board (loser's points 19-24).
    backgammon = gammon and any(loser[18:25])
    row = np.zeros(5)
    if sign > 0:
        row[[WIN, WIN_G, WIN_BG]] = (1.0, float(gammon), float(backgammon))
    else:
        row[[LOSE_G, LOSE_BG]] = (float(gammon), float(backgammon))
    return row


@dataclass(eq=False)  # identity semantics: nets group positions by session
class OnnxNet:
    """One onnxruntime session for one net, created once; the batch dimension is dynamic."""

    path: Path
    threads: int = 1
    _session: object = field(init=False, repr=False)
    _input: str = field(init=False, repr=False)
    encode: Callable[[np.ndarray], np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        import onnxruntime as ort  # imported here so that rules-only users do not pay for it

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            raise ModelError(f"cannot load model {self.path}: {exc}") from None
        inp = self._session.get_inputs()[0]  # type: ignore[attr-defined]
        width = inp.shape[-1]
        if width not in ENCODERS:
            makes = " or ".join(map(str, sorted(ENCODERS)))
            raise ModelError(f"model {self.path} takes {width} inputs, the encoders make {makes}")
        self.encode = ENCODERS[width]
        self._input = inp.name

    def run(self, inputs: np.ndarray) -> np.ndarray:
        out = self._session.run(None, {self._input: inputs})[0]  # type: ignore[attr-defined]
        return np.asarray(out, dtype=np.float64)


class NetEvaluator:
    """The ONNX nets by position class, as listed in ``manifest.json`` of a model folder."""

    def __init__(self, models_dir: Path = MODELS_DIR, threads: int = 1) -> None:
        manifest_path = models_dir / "manifest.json"
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read {manifest_path}: {exc}") from None
        self.name = str(manifest.get("name", models_dir.name))
        self.nets: dict[str, OnnxNet] = {}
        for cls_name, filename in manifest["nets"].items():
            self.nets[cls_name] = OnnxNet(models_dir / filename, threads)
        if "contact" not in self.nets:
            raise ModelError(f"{manifest_path} lists no contact net")

    def net_for(self, cls: PositionClass) -> OnnxNet:
        if cls == PositionClass.CRASHED:
            return self.nets.get("crashed", self.nets["contact"])
        if cls == PositionClass.CONTACT:
            return self.nets["contact"]
        return self.nets.get("race", self.nets["contact"])

    # Rows per onnxruntime call: bounds the memory of deep searches, and batches that stay in the cache run the
    # contact net about 20% faster per row than 4,096 (2.5 against 3.2 us on 16,384 children), same outputs.
    CHUNK = 1024

    def evaluate_boards(self, boards: np.ndarray, net: OnnxNet) -> np.ndarray:
        if len(boards) <= self.CHUNK:
            return sanitise(net.run(net.encode(boards)))
        parts = [net.run(net.encode(boards[i : i + self.CHUNK])) for i in range(0, len(boards), self.CHUNK)]
        return sanitise(np.concatenate(parts))


_IDX = np.arange(25)


def route_numpy(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vectorised gnubg classification of (n, 2, 25) boards: (over, home, contact, crashed) masks.

    ``home``: every chequer of both sides within its own points 1-6 (the bearoff databases' domain);
    ``contact``/``crashed`` as gnubg's ClassifyPosition (see Position.classify, the one-position reference).
    """
    b = boards.astype(np.int16)
    counts = b.sum(axis=2)
    over = (counts == 0).any(axis=1)
    back = np.where(b > 0, _IDX, -1).max(axis=2)
    home = ~over & (back < 6).all(axis=1)
    contact = ~over & (back.sum(axis=1) > 22)
    b0, b1 = b[:, :, 0], b[:, :, 1]
    crashed_side = (counts <= 6) | np.where(
        b0 > 1, (counts - b0 <= 6) | ((b1 > 1) & (1 + counts - (b0 + b1) <= 6)), counts - (b1 - 1) <= 6
    )
    crashed = contact & crashed_side.any(axis=1)
    return over, home, contact, crashed


def _route_c(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    raw = uint8_boards(boards)
    flags = np.frombuffer(_C.route(raw), dtype=np.bool_).reshape(len(raw), 4)
    return flags[:, 0], flags[:, 1], flags[:, 2], flags[:, 3]


# In C where engine.moves uses C: the same masks, without numpy's temporaries per call.
_C = c_extension()
route = _route_c if hasattr(_C, "route") else route_numpy


def terminal_rows(boards: np.ndarray) -> np.ndarray:
    """``terminal_probs`` for (n, 2, 25) finished boards, vectorised."""
    b = boards.astype(np.int16)
    counts = b.sum(axis=2)
    won = counts[:, 0] == 0
    loser = np.where(won[:, None], b[:, 1], b[:, 0])
    gammon = loser.sum(axis=1) == 15
    backgammon = gammon & (loser[:, 18:25].sum(axis=1) > 0)
    out = np.zeros((len(b), 5))
    out[won, WIN] = 1.0
    out[won, WIN_G] = gammon[won]
    out[won, WIN_BG] = backgammon[won]
    lost = ~won
    out[lost, LOSE_G] = gammon[lost]
    out[lost, LOSE_BG] = backgammon[lost]
    return out


class CompositeEvaluator:
    """Routes each position to terminal scoring, the bearoff databases, the class nets, or BRAS."""

    def __init__(
        self,
        nets: NetEvaluator | None,
        bearoff: Evaluator | None = None,
        bearoff_applies: Callable[[Position], bool] | None = None,
        fallback: Evaluator | None = None,
    ) -> None:
        if nets is None and fallback is None:
            raise ModelError("an evaluator needs nets or a fallback")
        self.nets = nets
        self.bearoff = bearoff
        self.bearoff_applies = bearoff_applies
        self.fallback = fallback
        # What races make certain, settled exactly over the nets' outputs (needs the one-sided table). Imported
        # here: race_bounds builds on this module's output layout and sanitise.
        from engine.race_bounds import RaceBounds

        one_sided = getattr(bearoff, "one_sided", None)
        self.bounds = RaceBounds(one_sided.rolls) if one_sided is not None else None

    def evaluate(self, positions: Sequence[Position]) -> np.ndarray:
        if not len(positions):
            return np.zeros((0, 5))
        return self._evaluate(positions_to_array(positions), positions)

    def evaluate_boards(self, boards: np.ndarray) -> np.ndarray:
        """The same for (n, 2, 25) boards, player on roll first: the search's path, with no Position objects
        except for the few rows that go to the bearoff databases or BRAS."""
        if not len(boards):
            return np.zeros((0, 5))
        return self._evaluate(boards, None)

    def _evaluate(self, boards: np.ndarray, positions: Sequence[Position] | None) -> np.ndarray:
        def pick(rows: np.ndarray) -> list[Position]:
            return (
                [positions[i] for i in rows] if positions is not None else boards_to_positions(boards[rows])
            )

        out = np.zeros((len(boards), 5))
        over, home, contact, crashed = route(boards)
        if over.any():
            out[over] = terminal_rows(boards[over])
        rest = ~over
        evaluate_boards = getattr(self.bearoff, "evaluate_boards", None)
        if evaluate_boards is not None and home.any():
            # The databases' own domain is ``home`` (route's mask): both sides on, all chequers home.
            out[home] = evaluate_boards(boards[home])
            rest[home] = False
        elif self.bearoff is not None and home.any():
            candidates = pick(np.flatnonzero(home))
            rows = np.flatnonzero(home)
            if self.bearoff_applies is not None:
                keep = [k for k, pos in enumerate(candidates) if self.bearoff_applies(pos)]
                rows, candidates = rows[keep], [candidates[k] for k in keep]
            if len(rows):
                out[rows] = self.bearoff.evaluate(candidates)
                rest[rows] = False
        if self.nets is None:
            rows = np.flatnonzero(rest)
            if len(rows):
                assert self.fallback is not None
                out[rows] = self.fallback.evaluate(pick(rows))
        else:
            groups = (
                (rest & contact & ~crashed, PositionClass.CONTACT),
                (rest & crashed, PositionClass.CRASHED),
                (rest & ~contact, PositionClass.RACE),
            )
            for mask, cls in groups:
                if mask.all():  # one class only, the usual batch of a search: no copies in or out
                    out = self.nets.evaluate_boards(boards, self.nets.net_for(cls)).astype(
                        np.float64, copy=False
                    )
                elif mask.any():
                    out[mask] = self.nets.evaluate_boards(boards[mask], self.nets.net_for(cls))
        if self.bounds is not None and rest.any():
            if rest.all():
                return self.bounds.settle(boards, out, ~contact)
            out[rest] = self.bounds.settle(boards[rest], out[rest], ~contact[rest])
        return out
