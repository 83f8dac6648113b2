"""Stage 3: fit one net per position class on the labelled shards, export it to ONNX and check onnxruntime.

    python -m train.fit --net contact --run train/runs/v1 --epochs 40
    python -m train.fit --net race --run train/runs/v1 --epochs 40
    python -m train.fit --net contact --inputs contact --hidden 400,400 --epochs 30 --run train/runs/v3/w2 \
        --extra train/data/round2 --device cuda          # gammond-v2's contact net (MODELS.md)
    python -m train.fit --net race --inputs race --hidden 256,256 --epochs 30 --run train/runs/v5/race_r3 \
        --extra train/data/round2 --extra train/data/round3 --extra train/data/bearoff --exact-bearoff  # v3's

The run folder keeps ``checkpoint_<net>.pt`` after every epoch (an interrupted fit resumes from it), a loss plot
``loss_<net>.png``, a JSON log, and the exported ``<net>.onnx``, whose outputs onnxruntime must reproduce to 1e-5.
Inputs are ``engine.encoding.encode`` (``--inputs contact``: ``encode_contact``; ``--inputs race``: ``encode_race``); outputs are gnubg's five cumulative probabilities through a sigmoid.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from engine.encoding import ENCODERS, N_CONTACT_INPUTS, N_INPUTS, N_RACE_INPUTS
from train.progress import progress

# --inputs: the encoding's name and the width that picks it (engine.encoding.ENCODERS)
INPUT_WIDTHS = {"base": N_INPUTS, "contact": N_CONTACT_INPUTS, "race": N_RACE_INPUTS}


def load_data(positions: Path, labels: Path, net: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boards, targets and a shard index for every labelled position of the net's class."""
    boards, probs, shard = [], [], []
    for i, lab in enumerate(sorted(labels.glob("shard_*.npz"))):
        if ".tmp" in lab.name:
            continue
        b = np.load(positions / lab.name)["boards"]
        p = np.load(lab)["probs"]
        keep = class_mask(b, net)
        boards.append(b[keep])
        probs.append(p[keep])
        shard.append(np.full(int(keep.sum()), i))
    if not boards:
        raise SystemExit(f"no labelled shards in {labels}")
    return np.concatenate(boards), np.concatenate(probs), np.concatenate(shard)


def class_mask(boards: np.ndarray, net: str) -> np.ndarray:
    """Contact when the rearmost chequers of the two sides have not passed each other (gnubg's rule)."""
    occupied = boards > 0
    idx = np.arange(25)
    back = np.where(occupied, idx, -1).max(axis=2)  # (n, 2)
    alive = (back >= 0).all(axis=1)
    contact = back.sum(axis=1) > 22
    if net == "contact":
        return alive & contact
    if net == "crashed":
        from engine.evaluator import route

        return alive & route(boards)[3]
    if net == "race":
        return alive & ~contact
    raise SystemExit(f"unknown net {net!r}")


def encode_all(boards: np.ndarray, width: int, chunk: int = 65_536) -> np.ndarray:
    """The inputs of every board, in chunks so that the feature arrays stay small."""
    encode = ENCODERS[width]
    return np.concatenate([encode(boards[i : i + chunk]) for i in range(0, len(boards), chunk)])


def load_labelled(files: list[Path], like: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boards (as ``like``'s dtype) and probabilities of some labelled ``.npz`` files (train.rollouts,
    train.deepen), concatenated; none for no files."""
    if not files:
        return np.zeros((0, *like.shape[1:]), dtype=like.dtype), np.zeros((0, 5), dtype=np.float64)
    parts = [np.load(f) for f in files]
    boards = np.concatenate([p["boards"] for p in parts]).astype(like.dtype)
    probs = np.concatenate([p["probs"] for p in parts]).astype(np.float64)
    return boards, probs


def board_keys(boards: np.ndarray) -> np.ndarray:
    """One comparable, sortable value per board (its bytes)."""
    flat = np.ascontiguousarray(boards.reshape(len(boards), -1))
    return flat.view(np.dtype((np.void, flat.shape[1] * flat.itemsize)))[:, 0]


def find_boards(table: np.ndarray, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``boards`` whose board is in ``table``, and for each the first row of ``table`` that holds
    it. The one way boards are matched between label sources here (sorted keys, not a dict of millions)."""
    if len(table) == 0 or len(boards) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = board_keys(table)
    order = np.argsort(keys, kind="stable")  # stable: among equal boards, the first row comes first
    keys = keys[order]
    mine = board_keys(boards)
    at = np.minimum(np.searchsorted(keys, mine), len(keys) - 1)
    hit = keys[at] == mine
    return np.flatnonzero(hit), order[at[hit]]


def with_rollouts(
    boards: np.ndarray,
    probs: np.ndarray,
    val: np.ndarray,
    files: list[Path],
    net: str,
    deep: list[Path] | None = None,
    deep_weight: float = 0.5,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The teacher's race rows outside the bearoff databases give way to rolled-out ones, or to our own deeper
    search's (``deep``, train.deepen), or to both.

    bgsage 2-ply misjudges gammons and backgammons in lopsided races (0.10 for a gammon that a rollout puts at
    0.86); mixing its labels with rollouts of similar positions would teach the average of the two. A board
    with a rollout and a deep label gets ``deep_weight`` of the deep one (of its first deep row): the rollout is
    unbiased but noisy (standard error 0.009 of the equity), the search smooth but biased where the nets are.
    The last 5% of each kind's rows are held out; a rolled-out board keeps its place whatever labels it."""
    from engine.evaluator import route
    from train.rollouts import held_out_rows

    if net != "race":
        raise SystemExit("--rollouts and --deep hold race positions: use them with --net race")
    home = route(boards)[1]
    print(f"{int((~home).sum())} teacher-labelled race positions outside the bearoff databases dropped")
    ro_boards, ro_probs = load_labelled(files, boards)
    ro_held = held_out_rows(len(ro_boards))
    if files:
        print(f"{len(ro_boards)} rolled-out positions")
    if deep:
        deep_boards, deep_probs = load_labelled(deep, boards)
        print(f"{len(deep_boards)} deep-labelled positions")
        rows, source = find_boards(deep_boards, ro_boards)
        ro_probs[rows] = (1.0 - deep_weight) * ro_probs[rows] + deep_weight * deep_probs[source]
        added = np.ones(len(deep_boards), dtype=bool)
        added[find_boards(ro_boards, deep_boards)[0]] = False  # rolled out too: blended above
        ro_boards = np.concatenate([ro_boards, deep_boards[added]])
        ro_probs = np.concatenate([ro_probs, deep_probs[added]])
        ro_held = np.concatenate([ro_held, held_out_rows(len(deep_boards))[added]])
    print(f"{len(ro_boards)} race positions labelled, {int(ro_held.sum())} of them held out")
    return (
        np.concatenate([boards[home], ro_boards]),
        np.concatenate([probs[home], ro_probs.astype(probs.dtype)]),
        np.concatenate([val[home], ro_held]),
    )


def with_deep(
    boards: np.ndarray, probs: np.ndarray, val: np.ndarray, files: list[Path], weight: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labels of our own deeper search (train.deepen) for a contact or crashed net: a training row whose board
    has one gets ``weight`` of it, boards not among the rows are added; validation rows keep their labels."""
    deep_boards, deep_probs = load_labelled(files, boards)
    rows, source = find_boards(deep_boards, boards)
    training = ~val[rows]
    rows, source = rows[training], source[training]
    probs = probs.copy()
    probs[rows] = ((1.0 - weight) * probs[rows] + weight * deep_probs[source]).astype(probs.dtype)
    new = np.ones(len(deep_boards), dtype=bool)
    new[source] = False
    print(f"{len(deep_boards)} deep-labelled positions: {len(rows)} rows relabelled, {int(new.sum())} added")
    return (
        np.concatenate([boards, deep_boards[new]]),
        np.concatenate([probs, deep_probs[new].astype(probs.dtype)]),
        np.concatenate([val, np.zeros(int(new.sum()), dtype=bool)]),
    )


def build_model(hidden: list[int], width: int = N_INPUTS):  # type: ignore[no-untyped-def]
    import torch

    layers: list[torch.nn.Module] = []
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers += [torch.nn.Linear(width, 5)]
    return torch.nn.Sequential(*layers)


def main(argv: list[str] | None = None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--net", choices=["contact", "crashed", "race"], required=True)
    ap.add_argument(
        "--inputs",
        choices=list(INPUT_WIDTHS),
        default="base",
        help=f"base: the {N_INPUTS} inputs of every net; contact: {N_CONTACT_INPUTS}, with engine.features; "
        f"race: {N_RACE_INPUTS}, with gnubg's chequers-off and crossover inputs",
    )
    ap.add_argument(
        "--init", type=Path, help="start from this checkpoint's weights (same shape), e.g. to fine-tune"
    )
    ap.add_argument("--positions", type=Path, default=Path("train/data/positions"))
    ap.add_argument("--labels", type=Path, default=Path("train/data/labels"))
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--hidden", default="256,256")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="torch device, e.g. cuda where a GPU is lent")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--extra",
        type=Path,
        action="append",
        default=[],
        help="a folder with positions/ and labels/ shards used for training only (repeatable)",
    )
    ap.add_argument(
        "--exact-bearoff",
        action="store_true",
        help="replace the labels of bearoff positions by the bearoff databases' exact probabilities",
    )
    ap.add_argument(
        "--rollouts",
        type=Path,
        action="append",
        default=[],
        help="race boards with rollout probabilities (train.rollouts, repeatable): they replace the teacher's "
        "labels of every race position outside the bearoff databases; their last 5%% are held out",
    )
    ap.add_argument(
        "--deep",
        type=Path,
        action="append",
        default=[],
        help="boards labelled by our own deeper search (train.deepen, repeatable): race boards as --rollouts (a "
        "board in both gets --deep-weight of the deep label); for the other nets a row of the same board gets "
        "--deep-weight of it and the other boards are added",
    )
    ap.add_argument("--deep-weight", type=float, default=0.5)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    args.run.mkdir(parents=True, exist_ok=True)
    hidden = [int(h) for h in args.hidden.split(",")]

    boards, probs, shard = load_data(args.positions, args.labels, args.net)
    if shard.max() > shard.min():
        val = shard == shard.max()  # the last shard is held out
    else:
        val = np.random.default_rng(args.seed).random(len(shard)) < 0.05
    for extra in args.extra:  # training-only data: validation stays on the main data's held-out shard
        more_boards, more_probs, _ = load_data(extra / "positions", extra / "labels", args.net)
        print(f"{extra}: {len(more_boards)} more training positions")
        boards = np.concatenate([boards, more_boards])
        probs = np.concatenate([probs, more_probs])
        val = np.concatenate([val, np.zeros(len(more_boards), dtype=bool)])
    if args.deep and args.net != "race":
        boards, probs, val = with_deep(boards, probs, val, args.deep, args.deep_weight)
    elif args.rollouts or args.deep:
        boards, probs, val = with_rollouts(
            boards, probs, val, args.rollouts, args.net, args.deep, args.deep_weight
        )
    if args.exact_bearoff:
        # Every row, the extras' too: where the bearoff databases apply their numbers are exact; a teacher's
        # (bgsage 2-ply: MAE 0.017 of P(win) on these) are not.
        from engine.bearoff import BearoffDatabase
        from engine.evaluator import route

        home = route(boards)[1]
        probs = probs.copy()
        probs[home] = BearoffDatabase.load().evaluate_boards(boards[home])
        print(f"{int(home.sum())} bearoff positions relabelled exactly")
    width = INPUT_WIDTHS[args.inputs]
    x = torch.from_numpy(encode_all(boards, width))
    y = torch.from_numpy(probs.astype(np.float32))
    dev = torch.device(args.device)
    xt, yt, xv, yv = (t.to(dev) for t in (x[~val], y[~val], x[val], y[val]))
    print(f"{args.net}: {len(xt)} training and {len(xv)} validation positions")

    model = build_model(hidden, width).to(dev)
    if args.init is not None:
        model.load_state_dict(torch.load(args.init, weights_only=False, map_location=dev)["model"])
        print(f"weights from {args.init}")
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    ckpt = args.run / f"checkpoint_{args.net}.pt"
    log: list[dict[str, float]] = []
    start = 0
    if ckpt.exists():
        state = torch.load(ckpt, weights_only=False, map_location=dev)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        log, start = state["log"], state["epoch"]
        print(f"resumed at epoch {start}")
    loss_fn = torch.nn.BCEWithLogitsLoss()
    gen = torch.Generator().manual_seed(args.seed)
    t0 = time.time()
    for epoch in progress(range(start, args.epochs), desc=f"fit {args.net}", total=args.epochs - start):
        model.train()
        order = torch.randperm(len(xt), generator=gen).to(dev)
        total = 0.0
        for i in range(0, len(xt), args.batch):
            idx = order[i : i + args.batch]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        model.eval()
        with torch.no_grad():
            pv = torch.sigmoid(model(xv))
            val_loss = float(loss_fn(model(xv), yv))
            mae_win = float((pv[:, 0] - yv[:, 0]).abs().mean())
            eq = lambda p: 2 * p[:, 0] - 1 + p[:, 1] - p[:, 3] + p[:, 2] - p[:, 4]  # noqa: E731
            mae_eq = float((eq(pv) - eq(yv)).abs().mean())
        log.append(
            {
                "epoch": epoch + 1,
                "train_loss": total / len(xt),
                "val_loss": val_loss,
                "val_mae_win": mae_win,
                "val_mae_equity": mae_eq,
                "seconds": time.time() - t0,
            }
        )
        torch.save(
            {
                "model": model.state_dict(),
                "opt": opt.state_dict(),
                "sched": sched.state_dict(),
                "log": log,
                "epoch": epoch + 1,
                "hidden": hidden,
            },
            ckpt,
        )
    (args.run / f"log_{args.net}.json").write_text(json.dumps(log, indent=1))
    if log:
        print(json.dumps(log[-1]))
    plot_loss(log, args.run / f"loss_{args.net}.png", args.net)
    export_onnx(model.cpu(), args.run / f"{args.net}.onnx", xv[:256].cpu())
    return 0


def plot_loss(log: list[dict[str, float]], path: Path, title: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    ep = [r["epoch"] for r in log]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].plot(ep, [r["train_loss"] for r in log], label="train")
    ax[0].plot(ep, [r["val_loss"] for r in log], label="validation")
    ax[0].set_xlabel("epoch")
    ax[0].set_ylabel("BCE loss")
    ax[0].legend()
    ax[1].plot(ep, [r["val_mae_equity"] for r in log], label="equity")
    ax[1].plot(ep, [r["val_mae_win"] for r in log], label="P(win)")
    ax[1].set_xlabel("epoch")
    ax[1].set_ylabel("validation mean abs error")
    ax[1].legend()
    fig.suptitle(f"{title} net")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def export_onnx(model, path: Path, sample) -> None:  # type: ignore[no-untyped-def]
    """Export with the sigmoid inside the graph and a dynamic batch, then check onnxruntime against torch."""
    import onnxruntime as ort
    import torch

    wrapped = torch.nn.Sequential(model, torch.nn.Sigmoid()).eval()
    torch.onnx.export(
        wrapped,
        (sample[:1],),
        str(path),
        input_names=["inputs"],
        output_names=["probs"],
        dynamic_axes={"inputs": {0: "batch"}, "probs": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    with torch.no_grad():
        expected = wrapped(sample).numpy()
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"inputs": sample.numpy()})[0]
    err = float(np.abs(got - expected).max())
    if err > 1e-5:
        raise SystemExit(f"onnxruntime differs from torch by {err:.2e} (> 1e-5)")
    print(f"exported {path} ({path.stat().st_size} bytes); onnxruntime matches torch to {err:.1e}")


if __name__ == "__main__":
    raise SystemExit(main())
