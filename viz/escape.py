"""Text from users and models made literal where it is shown: in Plotly labels (a subset of HTML) and in
Streamlit's Markdown (emphasis, links, HTML, LaTeX)."""

from __future__ import annotations

import html


def plotly_literal(tokens: list[str]) -> list[str]:
    """HTML-escape user text for Plotly labels and hovers (Plotly renders a subset of HTML; it shows "&lt;s&gt;"
    as "<s>")."""
    return [html.escape(t, quote=False) for t in tokens]


_MARKDOWN_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$&:")


def markdown_literal(text: str) -> str:
    """Escape text so Streamlit's markdown shows it literally: no emphasis, links, HTML or LaTeX."""
    return "".join("\\" + c if c in _MARKDOWN_SPECIAL else c for c in text)
