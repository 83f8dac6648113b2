"""The FIBS bot's dispatch: ``SESSION_EVENTS`` routes by exact type, so it must name every event class that
``FibsBot._handle`` answers itself, and no event class may be a subclass of another."""

from __future__ import annotations

import inspect
import re

from bot.fibs.bot import SESSION_EVENTS, FibsBot
from protocols.fibs import events as ev


def test_session_events_are_the_classes_handle_answers_itself() -> None:
    source = inspect.getsource(FibsBot._handle)
    ladder = source[source.index("p = session.protocol") :]
    named = {getattr(ev, name) for name in re.findall(r"ev\.([A-Z]\w+)", ladder)} - {ev.FibsEvent}
    assert named | {ev.WhoInfo} == set(SESSION_EVENTS)


def test_every_event_class_derives_from_fibs_event_directly() -> None:
    classes = [c for c in vars(ev).values() if inspect.isclass(c) and issubclass(c, ev.FibsEvent)]
    assert len(classes) > 40
    assert all(c.__bases__ == (ev.FibsEvent,) for c in classes if c is not ev.FibsEvent)
