"""Why the paper divides by sqrt(d_k) (Section 3.2.1), in numbers.

If the components of q and k are independent with mean 0 and variance 1, q·k = sum of d_k products has
variance d_k. Large scores push softmax towards a one-hot vector, where its gradient vanishes. Dividing by
sqrt(d_k) brings the variance back to 1 whatever d_k is.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .escape import plotly_literal
from .titles import TITLE_LINE_PX, wrapped_title

SCALED_COLOR, UNSCALED_COLOR = "#1f77b4", "#d62728"


def softmax(scores: np.ndarray, masked: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis; masked entries (True) get exactly 0."""
    scores = np.asarray(scores, dtype=np.float64)
    if masked is not None:
        scores = np.where(masked, -np.inf, scores)
    shifted = scores - scores.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


def entropy(p: np.ndarray) -> np.ndarray:
    """Shannon entropy in nats over the last axis (0 log 0 = 0)."""
    p = np.asarray(p, dtype=np.float64)
    return -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)).sum(axis=-1)


def softmax_gradient_norm(p: np.ndarray) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian d p / d s = diag(p) - p p^T, over the last axis.
    It goes to 0 as p approaches one-hot: the saturated softmax passes almost no gradient back."""
    p = np.asarray(p, dtype=np.float64)
    jac = np.einsum("...i,ij->...ij", p, np.eye(p.shape[-1])) - p[..., :, None] * p[..., None, :]
    return np.sqrt((jac**2).sum(axis=(-2, -1)))


def dot_product_variance(d_ks: list[int], n_samples: int = 5000, seed: int = 0) -> dict[str, np.ndarray]:
    """Empirical variance of q·k and of q·k / sqrt(d_k) for q, k ~ N(0, I_{d_k}). 5,000 samples in float32 (0.1 s,
    where 20,000 in float64 took a view's first opening 0.9 s): the estimate's standard error is under 5 % of the
    variance (q·k's fourth moment is at most 9 d_k²), invisible on the plot's log axis."""
    rng = np.random.default_rng(seed)
    unscaled, scaled = [], []
    for d in d_ks:
        q = rng.standard_normal((n_samples, d), dtype=np.float32)
        k = rng.standard_normal((n_samples, d), dtype=np.float32)
        dots = (q * k).sum(axis=1)
        unscaled.append(dots.var())
        scaled.append((dots / np.sqrt(d)).var())
    return {"d_k": np.array(d_ks), "unscaled": np.array(unscaled), "scaled": np.array(scaled)}


NEAR_ONE_HOT = 0.99  # a row whose largest weight passes this counts as (nearly) one-hot


def saturation_at(stats: dict, d_k: int) -> dict[str, float]:
    """The saturation statistics at one d_k, for a caption that quotes the same numbers the plot shows."""
    i = list(stats["d_k"]).index(d_k)
    return {
        f"{name}_{kind}": float(stats[name][kind][i])
        for name in ("max_weight", "entropy", "gradient_norm", "near_one_hot")
        for kind in ("scaled", "unscaled")
    }


def saturation_statistics(d_ks: list[int], n_keys: int = 10, n_trials: int = 400, seed: int = 0) -> dict:
    """For random unit-variance q and n_keys keys at each d_k: mean largest weight, entropy and softmax
    gradient norm, with and without the scaling."""
    rng = np.random.default_rng(seed)
    out = {"d_k": np.array(d_ks), "n_keys": n_keys}
    for name in ("max_weight", "entropy", "gradient_norm", "near_one_hot"):
        out[name] = {"scaled": [], "unscaled": []}
    for d in d_ks:
        q = rng.standard_normal((n_trials, 1, d))
        k = rng.standard_normal((n_trials, n_keys, d))
        scores = (q * k).sum(-1)  # (trials, keys)
        for label, s in (("unscaled", scores), ("scaled", scores / np.sqrt(d))):
            p = softmax(s)
            out["max_weight"][label].append(p.max(-1).mean())
            out["entropy"][label].append(entropy(p).mean())
            out["gradient_norm"][label].append(softmax_gradient_norm(p).mean())
            out["near_one_hot"][label].append((p.max(-1) > NEAR_ONE_HOT).mean())
    for name in ("max_weight", "entropy", "gradient_norm", "near_one_hot"):
        out[name] = {k: np.array(v) for k, v in out[name].items()}
    return out


def variance_figure(stats: dict, labels: dict) -> go.Figure:
    """labels: title, x (d_k), y, unscaled, scaled, theory."""
    d = stats["d_k"]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=d, y=stats["unscaled"], mode="markers+lines", name=labels["unscaled"], line=dict(color=UNSCALED_COLOR)
        )
    )
    fig.add_trace(
        go.Scatter(x=d, y=stats["scaled"], mode="markers+lines", name=labels["scaled"], line=dict(color=SCALED_COLOR))
    )
    fig.add_trace(go.Scatter(x=d, y=d, mode="lines", name=labels["theory"], line=dict(dash="dot", color="grey")))
    # Ticks at the d_k values themselves (powers of two) and at whole decades, not Plotly's "2, 5" in between.
    ticks = [int(x) for x in d]
    title, lines = wrapped_title(labels["title"])
    fig.update_layout(
        title=title,
        xaxis=dict(title=labels["x"], type="log", tickmode="array", tickvals=ticks, ticktext=ticks),
        yaxis=dict(title=labels["y"], type="log", dtick=1),
        height=380 + TITLE_LINE_PX * (lines - 1),
        margin=dict(l=10, r=10, t=50 + TITLE_LINE_PX * (lines - 1), b=10),
    )
    return fig


def softmax_pair_figure(
    scores: np.ndarray, d_k: int, key_tokens: list[str], labels: dict, masked: np.ndarray | None = None
) -> go.Figure:
    """The same raw scores q·k through softmax twice: without and with dividing by sqrt(d_k)."""
    unscaled = softmax(scores, masked)
    scaled = softmax(np.asarray(scores) / np.sqrt(d_k), masked)
    x = list(range(len(key_tokens)))
    ticks = plotly_literal(key_tokens)
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            x=x,
            y=unscaled,
            name=labels["unscaled"],
            marker_color=UNSCALED_COLOR,
            hovertemplate="%{y:.4f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(x=x, y=scaled, name=labels["scaled"], marker_color=SCALED_COLOR, hovertemplate="%{y:.4f}<extra></extra>")
    )
    if masked is not None and np.any(masked):
        # A masked key gets weight exactly 0 with or without the scaling: mark it, so it never reads as a low value.
        hidden = [i for i in x if masked[i]]
        fig.add_trace(
            go.Scatter(
                x=hidden,
                y=[0.04] * len(hidden),
                mode="markers+text",
                name=labels["masked"],
                text=[labels["masked"]] * len(hidden),
                textposition="top center",
                marker=dict(symbol="x", size=10, color="#7f7f7f"),
                hovertemplate=labels["masked"] + "<extra></extra>",
            )
        )
    title, lines = wrapped_title(labels["title"])
    fig.update_layout(
        title=title,
        barmode="group",
        xaxis=dict(title=labels["x"], tickmode="array", tickvals=x, ticktext=ticks),
        yaxis=dict(title=labels["y"], range=[0, 1]),
        height=360 + TITLE_LINE_PX * (lines - 1),
        margin=dict(l=10, r=10, t=50 + TITLE_LINE_PX * (lines - 1), b=10),
    )
    return fig


def saturation_figure(stats: dict, labels: dict) -> go.Figure:
    """Three panels against d_k: largest weight, entropy, gradient norm; red without scaling, blue with."""
    d = stats["d_k"]
    names = ("max_weight", "entropy", "gradient_norm")
    # The legend under the panels, not beside them: at 1024 px with the sidebar open a legend on the right took a
    # fifth of the width and left each panel ~110 px, its y labels against the panel before it.
    fig = make_subplots(rows=1, cols=3, subplot_titles=[labels[n] for n in names], horizontal_spacing=0.09)
    for col, name in enumerate(names, start=1):
        for kind, color in (("unscaled", UNSCALED_COLOR), ("scaled", SCALED_COLOR)):
            fig.add_trace(
                go.Scatter(
                    x=d,
                    y=stats[name][kind],
                    mode="markers+lines",
                    name=labels[kind],
                    line=dict(color=color),
                    showlegend=col == 1,
                    legendgroup=kind,
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(
            type="log",
            title_text=labels["x"],
            tickmode="array",
            tickvals=[int(x) for x in d][::2],
            ticktext=[int(x) for x in d][::2],
            row=1,
            col=col,
        )
    title, lines = wrapped_title(labels["title"])
    extra = TITLE_LINE_PX * (lines - 1)
    fig.update_layout(
        title=title,
        height=420 + extra,
        margin=dict(l=10, r=10, t=70 + extra, b=60),
        legend=dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0),
    )
    return fig
