"""The grandmaster level in the daemon's configuration: accepted as the level and per opponent, and sent to the
engine pool's slow lane with its 3-ply chequer play and cube decisions (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load
from bot.engine_pool import is_slow
from engine.levels import LEVELS, parse_level


def test_config_takes_grandmaster_as_the_level_and_per_opponent(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[engine]\nlevel = "grandmaster"\ncube_level = "worldclass"\n'
        '[engine.opponent_levels]\nalice = "Grandmaster"\nbob = "grandmaster,noise=0.01"\n'
    )
    c = load(cfg, environ={})
    gm = parse_level(c.engine.level)
    assert gm == LEVELS["grandmaster"] and (gm.plies, gm.cube_depth, gm.move_filter) == (3, 3, "large")
    assert parse_level(c.engine.opponent_levels["alice"]) == gm
    noisy = parse_level(c.engine.opponent_levels["bob"])
    assert (noisy.plies, noisy.move_filter, noisy.chequer_noise) == (3, "large", 0.01)
    assert is_slow(gm) and is_slow(noisy)  # never on the fast lane beside 0-ply matches
    cfg.write_text('[engine]\nlevel = "grandmaster,plies=4"\n')
    with pytest.raises(ConfigError, match=r"engine\.level"):
        load(cfg, environ={})
    assert load(None, environ={"GAMMOND_ENGINE__LEVEL": "grandmaster"}).engine.level == ("grandmaster")
