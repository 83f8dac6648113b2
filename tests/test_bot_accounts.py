"""How many bot accounts the embedded server may seat (issue 29: 200 matches at once against the bot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load


def test_two_hundred_bot_accounts_are_accepted_and_the_cap_is_clear(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[server]\nbot_accounts = 200\n")
    assert load(cfg, environ={}).server.bot_accounts == 200  # one match each: 200 matches at once
    cfg.write_text("[server]\nbot_accounts = 257\n")
    with pytest.raises(ConfigError, match=r"server\.bot_accounts must be 1\.\.256"):
        load(cfg, environ={})
