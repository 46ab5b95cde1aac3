"""A colour key as rich text: a short line in each curve's colour before its name. The panels put it in their
captions instead of a legend over a narrow plot's curves."""

from __future__ import annotations

import html


def colour_key(pairs) -> str:
    """``pairs`` of (colour, name): "▬ name, ▬ name", each line in its colour, the names escaped."""
    return ", ".join(f'<span style="color:{color}">&#9644;</span> {html.escape(name)}' for color, name in pairs)
